package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// TestJudge: each way a run can be too distorted to count, and the reason
// it is given.
func TestJudge(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond}
	lagging := func(held int) results.Measurement {
		m := *syntheticMeasurement(20 * time.Millisecond)
		m.Generator.Held, m.Generator.MaxInFlight = uint64(held), 16
		return m
	}
	for _, tc := range []struct {
		name string
		m    results.Measurement
		want []string
	}{
		{"clean", *syntheticMeasurement(time.Millisecond), nil},
		{"no requests", results.Measurement{}, []string{"no measured requests"}},
		{"slow sender", func() results.Measurement {
			m := *syntheticMeasurement(time.Millisecond)
			m.AchievedRate = 80
			return m
		}(), []string{"achieved rate 80.0/s is 20.0% below intended 100.0/s"}},
		{"send lag", lagging(0), []string{"exceeds 5ms: the generator fell behind"}},
		{"send lag at the cap", lagging(40), []string{"(40 requests held back at its cap of 16 in flight)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := results.Run{Measurement: tc.m}
			judge(&run, v)
			if run.Valid != (len(tc.want) == 0) || len(run.Invalid) != len(tc.want) {
				t.Fatalf("valid=%v reasons %q, want %q", run.Valid, run.Invalid, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(run.Invalid[i], w) {
					t.Errorf("reason %q lacks %q", run.Invalid[i], w)
				}
			}
		})
	}
}
