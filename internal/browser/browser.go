// Package browser opens pages in a real headless Chromium through the
// DevTools protocol (chromedp) and records what they did while loading:
// every network request, every console message of level warning or error,
// uncaught exceptions and JavaScript dialogs. Tests use it to check that a
// report is self-contained and inert; the screenshot command uses it to
// produce the README's picture.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Defaults for Open.
const (
	DefaultWidth   = 1200
	DefaultHeight  = 900
	DefaultTimeout = 60 * time.Second
)

// ErrNoChromium means no Chromium executable was found.
var ErrNoChromium = errors.New("browser: no chromium found (install Debian's chromium, or set LBBENCH_CHROMIUM)")

// Find returns the path of a Chromium executable: $LBBENCH_CHROMIUM, else
// the first of chromium, chromium-browser, google-chrome on $PATH, else
// ErrNoChromium.
func Find() (string, error) {
	if p := os.Getenv("LBBENCH_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Option configures Open.
type Option func(*config)

type config struct {
	exe           string
	width, height int
	scale         float64
	mobile        bool
	timeout       time.Duration
}

// WithExecutable uses the Chromium at path instead of Find's.
func WithExecutable(path string) Option { return func(c *config) { c.exe = path } }

// WithViewport sets the viewport in CSS pixels and the device scale
// factor (0 means 1); mobile emulates a phone (narrow layout, touch).
func WithViewport(width, height int, scale float64, mobile bool) Option {
	return func(c *config) { c.width, c.height, c.scale, c.mobile = width, height, scale, mobile }
}

// WithTimeout bounds opening the page; zero means DefaultTimeout.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Page is one page open in its own headless Chromium. Its methods are safe
// for use by one goroutine at a time; Close is idempotent.
type Page struct {
	ctx         context.Context
	cancel      func()
	allocCancel func()
	closeOnce   sync.Once
	dismissing  sync.WaitGroup // goroutines dismissing dialogs

	// Events arrive on chromedp's reader goroutine.
	mu       sync.Mutex
	requests []string
	console  []string
	dialogs  []string
}

// Open starts Chromium (headless, no sandbox so that it runs as root, no
// GPU), loads url and waits until the document and its subresources have
// loaded. The browser stops on Close or when ctx ends.
func Open(ctx context.Context, url string, opts ...Option) (*Page, error) {
	c := config{width: DefaultWidth, height: DefaultHeight, scale: 1, timeout: DefaultTimeout}
	for _, o := range opts {
		o(&c)
	}
	if c.exe == "" {
		exe, err := Find()
		if err != nil {
			return nil, err
		}
		c.exe = exe
	}
	if c.width <= 0 || c.height <= 0 {
		return nil, fmt.Errorf("browser: viewport %dx%d: both sides must be > 0", c.width, c.height)
	}
	if c.scale <= 0 {
		c.scale = 1
	}
	aopts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(c.exe),
		chromedp.NoSandbox,
		chromedp.Flag("headless", "new"),
		chromedp.DisableGPU,
		chromedp.WindowSize(c.width, c.height),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, aopts...)
	tctx, tcancel := chromedp.NewContext(actx)
	p := &Page{ctx: tctx, cancel: tcancel, allocCancel: acancel}
	if err := chromedp.Listen(tctx, p.observe); err != nil {
		p.Close()
		return nil, fmt.Errorf("browser: start %s: %w", c.exe, err)
	}
	lctx, lcancel := context.WithTimeout(tctx, c.timeout)
	defer lcancel()
	var vopts []chromedp.EmulateViewportOption
	vopts = append(vopts, chromedp.EmulateScale(c.scale))
	if c.mobile {
		vopts = append(vopts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	err := chromedp.Do(lctx,
		chromedp.EmulateViewport(int64(c.width), int64(c.height), vopts...),
		chromedp.Navigate(url),
	)
	if err == nil {
		// Navigate returns at the load event; wait for readyState too, so
		// late console messages of the load are in.
		_, err = chromedp.Run(lctx, chromedp.Poll[bool](`document.readyState === "complete"`))
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("browser: load %s: %w", url, err)
	}
	return p, nil
}

// observe records one DevTools event. It runs on chromedp's reader
// goroutine and must not block or send commands.
func (p *Page) observe(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			p.requests = append(p.requests, ev.Request.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				if a != nil {
					parts = append(parts, a.Description+string(a.Value))
				}
			}
			p.console = append(p.console, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
		}
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			p.console = append(p.console, "exception: "+text)
		}
	case *cdplog.EventEntryAdded:
		if e := ev.Entry; e != nil && (e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning) {
			p.console = append(p.console, fmt.Sprintf("log %s %s: %s %s", e.Level, e.Source, e.Text, e.URL))
		}
	case *page.EventJavascriptDialogOpening:
		p.dialogs = append(p.dialogs, string(ev.Type)+": "+ev.Message)
		// A dialog blocks the page; dismiss it from another goroutine so
		// that the page (and the test) carries on.
		p.dismissing.Go(func() {
			chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		})
	}
}

// Requests returns the URL of every request the page made, in order,
// including the page itself.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// ConsoleProblems returns console messages of level warning or error,
// browser log entries of those levels and uncaught exceptions.
func (p *Page) ConsoleProblems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.console)
}

// Dialogs returns the JavaScript dialogs (alert, confirm, prompt) the page
// opened.
func (p *Page) Dialogs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.dialogs)
}

// Eval evaluates a JavaScript expression in the page and decodes its JSON
// value into a T.
func Eval[T any](ctx context.Context, p *Page, expr string) (T, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		return v, fmt.Errorf("browser: eval %q: %w", expr, err)
	}
	return v, nil
}

// Screenshot returns a PNG of the page: of the whole page when full, else
// of the viewport.
func (p *Page) Screenshot(ctx context.Context, full bool) ([]byte, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	var a chromedp.Action[[]byte]
	if full {
		a = chromedp.FullScreenshot(100)
	} else {
		a = chromedp.CaptureScreenshot()
	}
	b, err := chromedp.Run(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("browser: screenshot: %w", err)
	}
	return b, nil
}

// PDF prints the page as the browser's print dialog would (print CSS
// applies) and returns the PDF.
func (p *Page) PDF(ctx context.Context) ([]byte, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4)))
	if err != nil {
		return nil, fmt.Errorf("browser: print: %w", err)
	}
	return b, nil
}

// bound derives a context for one command from the page's (which carries
// the browser) that also ends with ctx.
func (p *Page) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(p.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// Close stops the browser and waits for it to exit. It is idempotent.
func (p *Page) Close() {
	p.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 10*time.Second)
		chromedp.Cancel(ctx) // graceful close; the cancels below force it
		cancel()
		p.cancel()
		p.dismissing.Wait()
		p.allocCancel() // waits for the browser process to exit
	})
}
