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
	rate     rateFlag
}

// bind registers the flags; what names the durations' kind of time.
func (v *overrides) bind(f *pflag.FlagSet, what string) {
	f.IntVar(&v.repeat, "repeat", 0, "runs per variant (overrides the scenario)")
	f.DurationVar(&v.duration, "duration", 0, "measured duration of each run"+what+" (overrides the scenario)")
	f.DurationVar(&v.warmup, "warmup", 0, "warm-up of each run, not recorded; 0 for none (overrides the scenario)")
	f.Var(&v.rate, "rate", "intended request rate: per second (960) or per duration (50/1s, 1/100ms); overrides the scenario")
}

// of is the scenario.Overrides of the flags the user gave.
func (v *overrides) of(changed func(string) bool) scenario.Overrides {
	var o scenario.Overrides
	if changed("repeat") {
		o.Repeat = &v.repeat
	}
	if changed("duration") {
		o.Duration = &v.duration
	}
	if changed("warmup") {
		o.Warmup = &v.warmup
	}
	if changed("rate") {
		o.RatePerSec = &v.rate.perSec
	}
	return o
}

// apply sets the flags the user gave on s (scenario.Overrides.Apply).
func (v *overrides) apply(s *scenario.Scenario, changed func(string) bool) error {
	return v.of(changed).Apply(s)
}
