package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/browser"
	"github.com/lbbench/lbbench/internal/browser/browsertest"
)

// page writes body as an HTML file and returns its file:// URL.
func page(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte("<!DOCTYPE html><html><head><meta charset=utf-8><link rel=icon href=\"data:,\"><title>t</title></head><body>"+body+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: path}).String()
}

func open(t *testing.T, exe, u string) *browser.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	p, err := browser.Open(ctx, u, browser.WithExecutable(exe), browser.WithViewport(800, 600, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestObserves shows that what the report tests rely on can fail: a clean
// page shows only its own request, and each kind of misbehaviour is seen.
func TestObserves(t *testing.T) {
	exe := browsertest.Require(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/gif")
		w.Write([]byte("GIF89a"))
	}))
	defer srv.Close()

	t.Run("clean", func(t *testing.T) {
		u := page(t, "<p id=x>hello</p>")
		p := open(t, exe, u)
		if got := p.Requests(); !slices.Equal(got, []string{u}) {
			t.Errorf("requests %v, want just the page", got)
		}
		if c := p.ConsoleProblems(); len(c) != 0 {
			t.Errorf("console %v", c)
		}
		text, err := browser.Eval[string](context.Background(), p, `document.getElementById("x").textContent`)
		if err != nil || text != "hello" {
			t.Errorf("eval: %q, %v", text, err)
		}
		png, err := p.Screenshot(context.Background(), true)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("screenshot: %d bytes, %v", len(png), err)
		}
	})
	t.Run("request", func(t *testing.T) {
		p := open(t, exe, page(t, fmt.Sprintf(`<img src="%s/pixel.gif" alt="">`, srv.URL)))
		if got := p.Requests(); len(got) != 2 || !strings.HasPrefix(got[1], srv.URL) {
			t.Errorf("requests %v, want the page and the image", got)
		}
		if hits.Load() == 0 {
			t.Error("the image server saw no request")
		}
	})
	t.Run("console", func(t *testing.T) {
		p := open(t, exe, page(t, `<script>console.error("boom")</script>`))
		if c := p.ConsoleProblems(); len(c) != 1 || !strings.Contains(c[0], "boom") {
			t.Errorf("console %v", c)
		}
	})
	t.Run("exception", func(t *testing.T) {
		p := open(t, exe, page(t, `<script>null.x</script>`))
		if c := p.ConsoleProblems(); len(c) == 0 || !strings.Contains(strings.Join(c, " "), "exception") {
			t.Errorf("console %v", c)
		}
	})
	t.Run("dialog", func(t *testing.T) {
		p := open(t, exe, page(t, `<script>alert("hi")</script><p>after</p>`))
		if d := p.Dialogs(); len(d) != 1 || !strings.Contains(d[0], "hi") {
			t.Errorf("dialogs %v", d)
		}
	})
}
