package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/scenario"
)

// progressOptions returns the harness options that show progress on w: on
// a terminal, one live line per run rewritten in place about once a second
// (variant, repetition, time in the run, elapsed and remaining time, rate
// and p99, from live, which the driver's generator calls), then the run's
// result line; otherwise the plain lines of progressPrinter, which scripts
// and tests read (live is then nil).
// The returned func ends a live line left open by a run that failed.
func progressOptions(w io.Writer, s scenario.Scenario) (opts []harness.Option, live func(loadgen.LiveStats), end func()) {
	plain := progressPrinter(w, s)
	width, ok := terminalWidth(w)
	if !ok {
		return []harness.Option{harness.WithProgress(plain)}, nil, func() {}
	}
	lp := newLivePrinter(w, s, plain, time.Now())
	lp.width = width
	return []harness.Option{harness.WithProgress(lp.progress)}, lp.live, lp.finish
}

// terminalWidth reports whether w is a terminal that understands "\r" and
// "erase line" (not TERM=dumb), and its width in columns (0 if unknown).
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return 0, false
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
		return 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, true
	}
	return int(ws.Col), true
}

// livePrinter draws the live line. Progress and live stats arrive from
// different goroutines, hence the lock.
type livePrinter struct {
	mu      sync.Mutex
	w       io.Writer
	width   int // columns; 0 if unknown
	plain   func(harness.Progress)
	start   time.Time
	perRun  time.Duration // planned warm-up + window, before any run finished
	cur     harness.Progress
	running bool
	doneN   int
	doneT   time.Duration // wall time of finished runs, for the estimate
	runT0   time.Time
}

func newLivePrinter(w io.Writer, s scenario.Scenario, plain func(harness.Progress), now time.Time) *livePrinter {
	return &livePrinter{w: w, plain: plain, start: now,
		perRun: s.Workload.WarmupTime() + s.Workload.Duration + 2*time.Second}
}

// eraseLine returns the cursor to the start of the line and clears it.
const eraseLine = "\r\x1b[2K"

func (lp *livePrinter) progress(p harness.Progress) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	now := time.Now()
	if p.Done {
		io.WriteString(lp.w, eraseLine)
		lp.plain(p)
		lp.running = false
		lp.doneN++
		lp.doneT += now.Sub(lp.runT0)
		return
	}
	lp.cur, lp.running, lp.runT0 = p, true, now
	lp.draw(now, loadgen.LiveStats{})
}

func (lp *livePrinter) live(st loadgen.LiveStats) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.running {
		lp.draw(time.Now(), st)
	}
}

// draw rewrites the live line, cut to the terminal's width so that it
// never wraps (a wrapped line cannot be rewritten); the caller holds mu.
func (lp *livePrinter) draw(now time.Time, st loadgen.LiveStats) {
	line := []rune(lp.line(now, st))
	if lp.width > 1 && len(line) > lp.width-1 {
		line = line[:lp.width-1]
	}
	io.WriteString(lp.w, eraseLine+string(line))
}

// finish ends a live line that no run result replaced.
func (lp *livePrinter) finish() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.running {
		io.WriteString(lp.w, "\n")
		lp.running = false
	}
}

// line is the live line's text, for example
// "[3/9] reuseport rep 1: 4s/10s measuring, 958 req/s, p99 41.2ms | elapsed 31s, about 1m4s left".
func (lp *livePrinter) line(now time.Time, st loadgen.LiveStats) string {
	var b strings.Builder
	p := lp.cur
	fmt.Fprintf(&b, "[%d/%d] %s rep %d: ", p.Index, p.Total, p.Variant, p.Rep)
	switch {
	case st.Planned == 0:
		b.WriteString("starting")
	default:
		phase := "measuring"
		if st.Warmup {
			phase = "warm-up"
		}
		fmt.Fprintf(&b, "%s/%s %s, %.0f req/s, p99 %s", st.Elapsed.Round(time.Second), st.Planned.Round(time.Second),
			phase, st.RatePerSec, numfmt.Dur(st.P99))
		if st.Errors > 0 {
			fmt.Fprintf(&b, ", %d errors", st.Errors)
		}
	}
	perRun := lp.perRun
	if lp.doneN > 0 {
		perRun = lp.doneT / time.Duration(lp.doneN)
	}
	inRun := now.Sub(lp.runT0)
	left := max(perRun-inRun, 0) + time.Duration(p.Total-p.Index)*perRun
	fmt.Fprintf(&b, " | elapsed %s, about %s left", now.Sub(lp.start).Round(time.Second), left.Round(time.Second))
	return b.String()
}

// progressPrinter prints one line when a run starts and one when it ends.
func progressPrinter(w io.Writer, s scenario.Scenario) func(harness.Progress) {
	start := time.Now()
	return func(p harness.Progress) {
		if !p.Done {
			fmt.Fprintf(w, "[%d/%d] %s rep %d ...\n", p.Index, p.Total, p.Variant, p.Rep)
			return
		}
		r := p.Run
		status := "valid"
		if !r.Valid {
			status = "INVALID: " + r.Invalid[0]
		}
		elapsed := time.Since(start)
		left := time.Duration(float64(elapsed) / float64(p.Index) * float64(p.Total-p.Index))
		fmt.Fprintf(w, "[%d/%d] %s rep %d: %.0f req/s, p99 %s, errors %d, skew %s, %s (elapsed %s, about %s left)\n",
			p.Index, p.Total, p.Variant, p.Rep, r.AchievedRate, numfmt.Dur(r.Summary.P99), r.Errors,
			numfmt.Skew(r.Skew()), status, elapsed.Round(time.Second), left.Round(time.Second))
	}
}
