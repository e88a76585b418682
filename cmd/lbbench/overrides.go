package main

import (
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
	"github.com/spf13/pflag"
)

// workloadFlags are the flags that override a workload's rate, duration
// and warm-up. run and model sim bind them (overrides.bind), attack with
// its own words; all three map them alike (of).
type workloadFlags struct {
	duration time.Duration
	warmup   time.Duration
	rate     rateFlag
}

// of is the workloads.Overrides of the flags the user gave.
func (w *workloadFlags) of(changed func(string) bool) workloads.Overrides {
	var o workloads.Overrides
	if changed("duration") {
		o.Duration = &w.duration
	}
	if changed("warmup") {
		o.Warmup = &w.warmup
	}
	if changed("rate") {
		o.Rate = &w.rate.perSec
	}
	return o
}

// overrides are the flags that adjust a scenario from the command line;
// run and model sim share them.
type overrides struct {
	repeat   int
	workload workloadFlags
}

// bind registers the flags; what names the durations' kind of time.
func (v *overrides) bind(f *pflag.FlagSet, what string) {
	f.IntVar(&v.repeat, "repeat", 0, "runs per variant (overrides the scenario)")
	f.DurationVar(&v.workload.duration, "duration", 0, "measured duration of each run"+what+" (overrides the scenario)")
	f.DurationVar(&v.workload.warmup, "warmup", 0, "warm-up of each run, not recorded; 0 for none (overrides the scenario)")
	f.Var(&v.workload.rate, "rate", "intended request rate: per second (960) or per duration (50/1s, 1/100ms); overrides the scenario")
}

// of is the scenario.Overrides of the flags the user gave.
func (v *overrides) of(changed func(string) bool) scenario.Overrides {
	o := scenario.Overrides{Workload: v.workload.of(changed)}
	if changed("repeat") {
		o.Repeat = &v.repeat
	}
	return o
}

// apply sets the flags the user gave on s (scenario.Overrides.Apply).
func (v *overrides) apply(s *scenario.Scenario, changed func(string) bool) error {
	return v.of(changed).Apply(s)
}
