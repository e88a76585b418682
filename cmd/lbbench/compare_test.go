package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/reports"
)

func TestParseTolerance(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		tol    float64
		err    string
	}{
		{in: "10%", tol: 0.10},
		{in: "p99=10%", metric: "p99", tol: 0.10},
		{in: "p99.9=0.2", metric: "p99.9", tol: 0.2},
		{in: " p50 = 2.5% ", metric: "p50", tol: 0.025},
		{in: "error_rate=1%", metric: "error_rate", tol: 0.01},
		{in: "p99=10", err: "not a fraction; write 10% for a percentage"},
		{in: "p42=10%", err: "unknown metric \"p42\""},
		{in: "p99=", err: "want a percentage"},
		{in: "p99=-5%", err: "must be above 0"},
		{in: "0", err: "must be above 0"},
		{in: "2000%", err: "at most 1000%"},
		{in: "NaN", err: "must be above 0"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			m, tol, err := parseTolerance(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || m != tc.metric || !(tol > tc.tol-1e-12 && tol < tc.tol+1e-12) {
				t.Errorf("= %q %g %v, want %q %g", m, tol, err, tc.metric, tc.tol)
			}
		})
	}
}

func FuzzParseTolerance(f *testing.F) {
	for _, s := range []string{"10%", "p99=10%", "error_rate=0.01", "=", "%", "p50=1e-3", "p99=+Inf%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, tol, err := parseTolerance(s)
		if err != nil {
			return
		}
		// What parses is a usable tolerance for a known metric.
		if !(tol > 0 && tol <= 10) {
			t.Fatalf("%q: tolerance %g", s, tol)
		}
		if m != "" {
			o := reports.CompareOptions{Tolerances: map[string]float64{m: tol}}
			if m != reports.MetricErrorRate || tol <= 1 {
				if err := o.WithDefaults().Validate(); err != nil {
					t.Fatalf("%q parsed to %s=%g, which options reject: %v", s, m, tol, err)
				}
			}
		}
	})
}

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
	vs := func(o reports.Outcome) []reports.Verdict {
		return []reports.Verdict{{Outcome: reports.Pass}, {Outcome: o}}
	}
	for _, tc := range []struct {
		outcome      reports.Outcome
		inconclusive string
		code         int
	}{
		{reports.Pass, "", 0}, {reports.Fail, "", 1}, {reports.Fail, "pass", 1},
		{reports.Inconclusive, "", 3}, {reports.Inconclusive, "pass", 0}, {reports.Inconclusive, "fail", 1},
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
