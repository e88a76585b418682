package main

import (
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/spf13/pflag"
)

// overrides are the flags that adjust a scenario from the command line;
// run and model sim share them.
type overrides struct {
	repeat   int
	duration time.Duration
	warmup   time.Duration
	rate     float64
}

// bind registers the flags; what names the durations' kind of time.
func (v *overrides) bind(f *pflag.FlagSet, what string) {
	f.IntVar(&v.repeat, "repeat", 0, "runs per variant (overrides the scenario)")
	f.DurationVar(&v.duration, "duration", 0, "measured duration of each run"+what+" (overrides the scenario)")
	f.DurationVar(&v.warmup, "warmup", 0, "warm-up of each run, not recorded; 0 for none (overrides the scenario)")
	f.Float64Var(&v.rate, "rate", 0, "intended request rate per second (overrides the scenario)")
}

// apply sets the flags the user gave on s.
func (v *overrides) apply(s *scenario.Scenario, changed func(string) bool) {
	if changed("repeat") {
		s.Repeat = v.repeat
	}
	if changed("duration") {
		s.Workload.Duration = v.duration
	}
	if changed("warmup") {
		s.Workload.Warmup = noneIfZero(v.warmup)
	}
	if changed("rate") {
		s.Workload.Arrival.RatePerSec = v.rate
	}
}
