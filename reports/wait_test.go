package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
)

// TestWaitShownWhereMeasured: the text, markdown and HTML summaries show
// the merged wait of a variant whose workers stamped, and say "not
// measured" for one whose did not, never a wait of zero.
func TestWaitShownWhereMeasured(t *testing.T) {
	r := fakeResults()
	for i := range r.Runs {
		if r.Runs[i].Variant != "least_conn" {
			continue
		}
		w := results.NewHistogram()
		for j := range 1000 {
			w.RecordDuration(time.Duration(j) * 10 * time.Microsecond) // 0 to 9.99 ms
		}
		r.Runs[i].Wait = w
	}
	var text, md, html bytes.Buffer
	if err := WriteText(&text, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeHTML(&html, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	// Two runs of 1000 merged: p50 about 5 ms, p99.9 about 10 ms (at the
	// histograms' resolution).
	for _, c := range []struct{ name, out, want string }{
		{"text", text.String(), "least_conn     4.99ms     9.89ms     9.98ms     9.99ms"},
		{"text", text.String(), "reuseport   not measured (no worker stamp)"},
		{"markdown", md.String(), "| least\\_conn | 2000 | 4.99ms | 9.89ms | 9.98ms"},
		{"markdown", md.String(), "| reuseport | not measured |"},
		{"html", html.String(), `<table id="wait-table">`},
		{"html", html.String(), "not measured (no worker stamp)"},
	} {
		if !strings.Contains(c.out, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.name, c.want, c.out)
		}
	}

	// Nothing stamped anywhere: no wait section at all.
	text.Reset()
	WriteText(&text, docOf(t, fakeResults(), nil))
	if strings.Contains(text.String(), "wait before") {
		t.Errorf("a wait section without any wait measured:\n%s", text.String())
	}
}
