package main

import (
	"time"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
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

// check validates the flags the user gave, each on its own, so the error
// names the flag; the scenario's Validate then checks them together with
// the rest (products, arrivals per run).
func (v *overrides) check(changed func(string) bool) error {
	if changed("repeat") && (v.repeat < 1 || v.repeat > scenario.MaxRepeat) {
		return field.Errorf("--repeat", "must be between 1 and %d (past a few dozen runs the confidence intervals barely narrow), got %d", scenario.MaxRepeat, v.repeat)
	}
	if changed("duration") && (v.duration < workloads.MinDuration || v.duration > workloads.MaxRunTime) {
		return field.Errorf("--duration", "must be between %s and %s, got %s", workloads.MinDuration, workloads.MaxRunTime, v.duration)
	}
	if changed("warmup") && (v.warmup < 0 || v.warmup > workloads.MaxRunTime) {
		return field.Errorf("--warmup", "must be between 0 and %s, got %s", workloads.MaxRunTime, v.warmup)
	}
	if r := float64(v.rate.perSec); changed("rate") && (!(r > 0) || r > workloads.MaxRate) {
		return field.Errorf("--rate", "must be > 0 and at most %.0e requests per second, got %g", workloads.MaxRate, r)
	}
	return nil
}

// apply checks the flags the user gave and sets them on s.
func (v *overrides) apply(s *scenario.Scenario, changed func(string) bool) error {
	if err := v.check(changed); err != nil {
		return err
	}
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
		s.Workload.Arrival.RatePerSec = v.rate.perSec
	}
	return nil
}
