package compare

import (
	"strings"
	"testing"

	"github.com/lbbench/lbbench/results"
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
			m, tol, err := ParseTolerance(tc.in)
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
		m, tol, err := ParseTolerance(s)
		if err != nil {
			return
		}
		// What parses is a usable tolerance for a known metric.
		if !(tol > 0 && tol <= 10) {
			t.Fatalf("%q: tolerance %g", s, tol)
		}
		if m != "" {
			o := Options{Tolerances: map[string]float64{m: tol}}
			if m != results.MetricErrorRate || tol <= 1 {
				if err := o.WithDefaults().Validate(); err != nil {
					t.Fatalf("%q parsed to %s=%g, which options reject: %v", s, m, tol, err)
				}
			}
		}
	})
}

func TestTolerances(t *testing.T) {
	got, err := Tolerances([]string{"10%", "p99=5%", "error_rate=2%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range results.VerdictMetrics() {
		want := 0.10
		switch m {
		case "p99":
			want = 0.05
		case results.MetricErrorRate:
			want = 0.02
		}
		if got[m] < want-1e-12 || got[m] > want+1e-12 {
			t.Errorf("%s: %g, want %g", m, got[m], want)
		}
	}
	if got, err := Tolerances(nil); got != nil || err != nil {
		t.Errorf("no settings: %v, %v; want the defaults (nil)", got, err)
	}
	if _, err := Tolerances([]string{"p99=10"}); err == nil || !strings.Contains(err.Error(), `tolerance "p99=10"`) {
		t.Errorf("bad setting: %v", err)
	}
}
