package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

func TestCompareFlagsOptions(t *testing.T) {
	c := compareFlags{tolerances: []string{"5%", "p99=20%", "error_rate=2%"}, alpha: 0.01, resamples: 500, seed: 9, metrics: []string{"p99"}}
	o, err := c.options()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"p50": 0.05, "p99": 0.20, "p99.9": 0.05, "throughput": 0.05, "cpu_per_request(proxy)": 0.05, "error_rate": 0.02}
	all := o
	all.Metrics = []string{"p50", "p99", "p99.9", "error_rate", "throughput", "cpu_per_request(proxy)"}
	all = all.WithDefaults()
	for m, tol := range want {
		if all.Tolerances[m] != tol {
			t.Errorf("tolerance of %s %g, want %g (all: %v)", m, all.Tolerances[m], tol, all.Tolerances)
		}
	}
	if o.Alpha != 0.01 || o.Resamples != 500 || o.Seed != 9 || len(o.Metrics) != 1 {
		t.Errorf("options %+v", o)
	}
	for _, bad := range []compareFlags{
		{alpha: 0.05, resamples: 500, inconclusive: "maybe"},
		{alpha: 2, resamples: 500},
		{alpha: 0.05, resamples: 500, metrics: []string{"mean"}},
		{alpha: 0.05, resamples: 500, tolerances: []string{"x"}},
	} {
		if _, err := bad.options(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestExitCode: a job's exit status reaches the process as it is, any
// other error is 2.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{&job.Error{Code: job.ExitRegression, Err: errors.New("verdict: regression")}, 1},
		{fmt.Errorf("wrapped: %w", &job.Error{Code: job.ExitFailedRuns, Err: errors.New("runs failed")}), 5},
		{&exitError{code: 130, err: errors.New("interrupted")}, 130},
		{errors.New("no such file"), 2},
	} {
		if got := exitCode(tc.err); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

// TestCompareUntilDecidedLook: compare on results made until decided
// judges as the run's last look did: at the level that look was given,
// on the metrics, tolerances and alpha the run recorded (a 98% interval
// at look 2 of 4, not the 90% of a single look), unless --metric or
// --alpha say otherwise.
func TestCompareUntilDecidedLook(t *testing.T) {
	r := &results.Results{Schema: results.SchemaVersion, Scenario: scenario.Scenario{Name: "ud",
		Variants: []scenario.Variant{{Name: "base", Topology: scenario.ReusePort}, {Name: "cand", Topology: scenario.ReusePort}}}, Complete: true}
	for round, x := range []float64{1.31, 1.22, 1.27, 1.35} {
		b, c := resultstest.Run("base", 1, 0), resultstest.Run("cand", x, 0)
		b.Rep, c.Rep = round+1, round+1
		b.ID, c.ID = fmt.Sprintf("b%d", round), fmt.Sprintf("c%d", round)
		r.Runs = append(r.Runs, b, c)
	}
	r.Stop = &results.Stop{Rounds: 4, MaxRounds: 6, Reason: "budget", Judging: &results.Judging{
		Metrics: []string{results.MetricP99}, Tolerances: map[string]float64{results.MetricP99: 0.1}, Alpha: 0.05}}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	judge := func(changed map[string]bool, c compareFlags) string {
		var out bytes.Buffer
		c.alpha, c.resamples, c.seed, c.interval = max(c.alpha, compare.DefaultAlpha), compare.DefaultResamples, compare.DefaultSeed, compare.DefaultInterval
		err := runCompare(compareOptions{compareFlags: c, baselineVariant: "base"}, []string{path}, func(f string) bool { return changed[f] }, &out)
		var e *job.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("compare: %v", err)
		}
		return out.String()
	}
	got := judge(nil, compareFlags{})
	if !strings.Contains(got, "98% interval") || strings.Contains(got, "p50") {
		t.Errorf("the run's look: want p99 alone at a 98%% interval:\n%s", got)
	}
	got = judge(map[string]bool{"metric": true}, compareFlags{metrics: []string{results.MetricP50}})
	if !strings.Contains(got, "p50") || !strings.Contains(got, "98% interval") {
		t.Errorf("--metric p50 at the run's look: want p50 at a 98%% interval:\n%s", got)
	}
	// A run whose looks judged its claims alone recorded no comparison:
	// the default metrics and alpha, at the run's look.
	r.Stop.Judging = &results.Judging{Claims: []string{"p99(cand) < 2 * p99(base)"}, ClaimsAlpha: 0.05}
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got = judge(nil, compareFlags{})
	if !strings.Contains(got, "p50") || !strings.Contains(got, "p99") || !strings.Contains(got, "98% interval") {
		t.Errorf("claims only judged at the looks: want the default metrics at a 98%% interval:\n%s", got)
	}
}
