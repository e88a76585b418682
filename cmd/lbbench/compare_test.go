package main

import (
	"errors"
	"testing"

	"github.com/lbbench/lbbench/compare"
)

func TestCompareFlagsOptions(t *testing.T) {
	c := compareFlags{tolerances: []string{"5%", "p99=20%", "error_rate=2%"}, alpha: 0.01, resamples: 500, seed: 9, metrics: []string{"p99"}}
	o, err := c.options()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"p50": 0.05, "p99": 0.20, "p99.9": 0.05, "throughput": 0.05, "error_rate": 0.02}
	for m, tol := range want {
		if o.Tolerances[m] != tol {
			t.Errorf("tolerance of %s %g, want %g (all: %v)", m, o.Tolerances[m], tol, o.Tolerances)
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

func TestVerdictExit(t *testing.T) {
	vs := func(o compare.Outcome) []compare.Verdict {
		return []compare.Verdict{{Outcome: compare.Pass}, {Outcome: o}}
	}
	for _, tc := range []struct {
		outcome      compare.Outcome
		inconclusive string
		code         int
	}{
		{compare.Pass, "", 0}, {compare.Fail, "", 1}, {compare.Fail, "pass", 1},
		{compare.Inconclusive, "", 3}, {compare.Inconclusive, "pass", 0}, {compare.Inconclusive, "fail", 1},
	} {
		err := verdictExit(vs(tc.outcome), tc.inconclusive)
		code := 0
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else if err != nil {
			t.Fatalf("%v", err)
		}
		if code != tc.code || exitCode(err) != tc.code {
			t.Errorf("%s with --inconclusive=%q: exit %d, want %d", tc.outcome, tc.inconclusive, code, tc.code)
		}
	}
}
