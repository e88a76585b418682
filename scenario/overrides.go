package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/workloads"
)

// Overrides adjust a scenario from the command line; run and model sim
// apply them alike (Apply). A nil field, or nil Variants, leaves the
// scenario's value. Each error names the flag it comes from.
type Overrides struct {
	// Repeat is --repeat, Duration --duration, RatePerSec --rate.
	Repeat     *int
	Duration   *time.Duration
	RatePerSec *workloads.Rate
	// Warmup is --warmup; zero means no warm-up.
	Warmup *time.Duration
	// Workers, Concurrency and Connections are --workers, --concurrency
	// and --connections (every variant's client model too).
	Workers, Concurrency, Connections *int
	// Variants, --variant, keeps only the variants named, in this order.
	Variants []string
}

// Apply checks each override on its own and sets it on s; s's Validate
// then checks them together with the rest.
func (o Overrides) Apply(s *Scenario) error {
	if o.Repeat != nil {
		if *o.Repeat < 1 || *o.Repeat > MaxRepeat {
			return field.Errorf("--repeat", "must be between 1 and %d (past a few dozen runs the confidence intervals barely narrow), got %d", MaxRepeat, *o.Repeat)
		}
		s.Repeat = *o.Repeat
	}
	if o.Duration != nil {
		if d := *o.Duration; d < workloads.MinDuration || d > workloads.MaxRunTime {
			return field.Errorf("--duration", "must be between %s and %s, got %s", workloads.MinDuration, workloads.MaxRunTime, d)
		}
		s.Workload.Duration = *o.Duration
	}
	if o.Warmup != nil {
		if d := *o.Warmup; d < 0 || d > workloads.MaxRunTime {
			return field.Errorf("--warmup", "must be between 0 and %s, got %s", workloads.MaxRunTime, d)
		}
		s.Workload.Warmup = *o.Warmup
		if *o.Warmup == 0 {
			s.Workload.Warmup = -1 // a spec's "no warm-up"; zero there is the default
		}
	}
	if o.RatePerSec != nil {
		if r := float64(*o.RatePerSec); !(r > 0) || r > workloads.MaxRate {
			return field.Errorf("--rate", "must be > 0 and at most %.0e requests per second, got %g", workloads.MaxRate, r)
		}
		s.Workload.Arrival.RatePerSec = *o.RatePerSec
	}
	if o.Workers != nil {
		s.Workers.Count = *o.Workers
	}
	if o.Concurrency != nil {
		s.Workers.Concurrency = *o.Concurrency
	}
	if o.Connections != nil {
		s.Workload.Clients.Connections = *o.Connections
		for _, v := range s.Variants {
			if v.Clients != nil {
				v.Clients.Connections = *o.Connections
			}
		}
	}
	if o.Variants != nil {
		var keep []Variant
		for _, name := range o.Variants {
			i := slices.IndexFunc(s.Variants, func(v Variant) bool { return v.Name == name })
			if i < 0 {
				return fmt.Errorf("--variant: scenario %s has no variant %q", s.Name, name)
			}
			keep = append(keep, s.Variants[i])
		}
		s.Variants = keep
	}
	return nil
}
