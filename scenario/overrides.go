package scenario

import (
	"fmt"
	"slices"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/workloads"
)

// Overrides adjust a scenario from the command line; run and model sim
// apply them alike (Apply). A nil field, or nil Variants, leaves the
// scenario's value. Each error names the flag it comes from.
type Overrides struct {
	// Repeat is --repeat.
	Repeat *int
	// Workload are the workload's overrides (--duration, --warmup,
	// --rate, --connections): set on the scenario's workload, and those
	// of the client model on every variant's own client model too.
	Workload workloads.Overrides
	// Workers and Concurrency are --workers and --concurrency.
	Workers, Concurrency *int
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
	if err := o.Workload.Apply(&s.Workload); err != nil {
		return err
	}
	for _, v := range s.Variants {
		if v.Clients != nil {
			if err := o.Workload.ApplyClients(v.Clients); err != nil {
				return err
			}
		}
	}
	if o.Workers != nil {
		s.Workers.Count = *o.Workers
	}
	if o.Concurrency != nil {
		s.Workers.Concurrency = *o.Concurrency
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
