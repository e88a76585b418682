package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

func TestLivePrinter(t *testing.T) {
	var buf bytes.Buffer
	s := scenario.Scenario{Name: "s"}
	s.Workload.Duration = 10 * time.Second
	plain := progressPrinter(&buf, s)
	lp := newLivePrinter(&buf, s, plain, time.Now())
	lp.progress(harness.Progress{Index: 1, Total: 3, Variant: "reuseport", Rep: 2})
	lp.live(loadgen.LiveStats{Elapsed: 4 * time.Second, Planned: 10 * time.Second, RatePerSec: 958, P99: 41200 * time.Microsecond, Errors: 3})
	out := buf.String()
	for _, want := range []string{eraseLine + "[1/3] reuseport rep 2: starting", eraseLine + "[1/3] reuseport rep 2: 4s/10s measuring, 958 req/s, p99 41.2ms, 3 errors | elapsed "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "\n") {
		t.Errorf("live lines must not end lines:\n%q", out)
	}
	// The result line replaces the live line; later stats are not drawn.
	buf.Reset()
	run := &results.Run{Valid: true}
	lp.progress(harness.Progress{Index: 1, Total: 3, Variant: "reuseport", Rep: 2, Done: true, Run: run})
	lp.live(loadgen.LiveStats{Elapsed: 11 * time.Second, Planned: 10 * time.Second})
	if out := buf.String(); !strings.HasPrefix(out, eraseLine+"[1/3] reuseport rep 2: 0 req/s") || strings.Count(out, eraseLine) != 1 || !strings.HasSuffix(out, "\n") {
		t.Errorf("result line %q", out)
	}
	// A narrow terminal gets a cut line, never a wrapped one.
	buf.Reset()
	lp.width = 30
	lp.progress(harness.Progress{Index: 2, Total: 3, Variant: "a-very-long-variant-name", Rep: 1})
	line := strings.TrimPrefix(buf.String(), eraseLine)
	if n := utf8.RuneCountInString(line); n != 29 {
		t.Errorf("line of %d runes on a 30-column terminal: %q", n, line)
	}
	lp.finish()
	if !strings.HasSuffix(buf.String(), "\n") {
		t.Error("finish left the live line open")
	}
}
