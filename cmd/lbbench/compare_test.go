package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lbbench/lbbench/job"
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
