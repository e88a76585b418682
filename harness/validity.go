package harness

import (
	"fmt"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// judge fills run's validity from its measurement.
func judge(run *results.Run, v scenario.Validity) {
	run.Valid = true
	invalid := func(format string, args ...any) {
		run.Valid = false
		run.Invalid = append(run.Invalid, fmt.Sprintf(format, args...))
	}
	if run.Requests == 0 {
		invalid("no measured requests")
	}
	if run.Unmapped > 0 {
		invalid("%d results could not be mapped to their intended send time", run.Unmapped)
	}
	if run.IntendedRate > 0 {
		if e := 1 - run.AchievedRate/run.IntendedRate; e > v.MaxRateError {
			invalid("achieved rate %.1f/s is %.1f%% below intended %.1f/s (tolerance %.1f%%): the generator fell behind",
				run.AchievedRate, 100*e, run.IntendedRate, 100*v.MaxRateError)
		}
	}
	if run.Requests > 0 && run.SendLag != nil {
		if p99 := run.SendLag.Quantile(0.99); p99 > v.MaxSendLagP99 {
			why := "the generator fell behind"
			if g := run.Generator; g.Held > 0 {
				why = fmt.Sprintf("the generator fell behind (%d requests held back at its cap of %d in flight)", g.Held, g.MaxInFlight)
			}
			invalid("send lag p99 %s exceeds %s: %s", p99, v.MaxSendLagP99, why)
		}
	}
}
