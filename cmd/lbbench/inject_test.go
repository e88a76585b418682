package main

import (
	"bytes"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInjectCostFlag: --inject-cost takes ROLE=DURATION, repeated or
// comma-separated, and refuses anything else as a usage error (exit 2)
// that says what is wrong, before anything runs.
func TestInjectCostFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want map[string]time.Duration
	}{
		{[]string{"proxy=40us"}, map[string]time.Duration{"proxy": 40 * time.Microsecond}},
		{[]string{"proxy=40us,workers=1ms"}, map[string]time.Duration{"proxy": 40 * time.Microsecond, "workers": time.Millisecond}},
		{[]string{"workers=0", "proxy=125µs"}, map[string]time.Duration{"proxy": 125 * time.Microsecond, "workers": 0}},
	} {
		var got map[string]time.Duration
		f := injectCostFlag{&got}
		for _, a := range tc.args {
			if err := f.Set(a); err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%q parsed to %v, want %v", tc.args, got, tc.want)
		}
		if s := f.String(); tc.want["proxy"] == 40*time.Microsecond && !strings.HasPrefix(s, "proxy=40µs") {
			t.Errorf("%q shows as %q", tc.args, s)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--inject-cost", "generator=1ms"}, `unknown role "generator" (known: proxy, workers)`},
		{[]string{"--inject-cost", "proxy"}, `want ROLE=DURATION with ROLE proxy or workers, for example proxy=40us, got "proxy"`},
		{[]string{"--inject-cost", "=1ms"}, `want ROLE=DURATION`},
		{[]string{"--inject-cost", "proxy=40"}, `proxy: "40" is not a duration (for example 40us or 1ms)`},
		{[]string{"--inject-cost", "proxy=fast"}, `proxy: "fast" is not a duration`},
		{[]string{"--inject-cost", "workers=-1ms"}, "workers: the CPU time per request must be between 0 and 1s, got -1ms"},
		{[]string{"--inject-cost", "proxy=2s"}, "proxy: the CPU time per request must be between 0 and 1s, got 2s"},
		{[]string{"--inject-cost", "proxy=1ms,proxy=2ms"}, "proxy given twice"},
		{[]string{"--inject-cost", "proxy=1ms", "--inject-cost", "proxy=2ms"}, "proxy given twice"},
		// Parsed, then refused by the job: nothing to compare with.
		{[]string{"--inject-cost", "workers=100us"}, "--inject-cost makes this build cost more than its baseline: give --baseline REF too"},
	} {
		var out bytes.Buffer
		cmd := newRunCmd()
		cmd.SetArgs(append([]string{"gate", "-q", "-o", filepath.Join(t.TempDir(), "out")}, tc.args...))
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: exit %d, %v\nwant exit 2 and %q", tc.args, code, err, tc.want)
		}
	}
}
