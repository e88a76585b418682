package main

import (
	"io"
	"math"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
	"github.com/spf13/pflag"
)

// parseOverrides parses args as the run command would and applies them to
// the default scenario, then validates the result as run does.
func parseOverrides(t *testing.T, args ...string) error {
	t.Helper()
	var o overrides
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.bind(f, "")
	if err := f.Parse(args); err != nil {
		return err
	}
	data, err := scenarios.Get("default")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("default.yaml", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.apply(&s, f.Changed); err != nil {
		return err
	}
	return s.Validate(topologies.Catalog())
}

func TestOverridesRefuseBadValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "NaN"}, `invalid argument "NaN" for "--rate" flag: "NaN" is not a rate`},
		{[]string{"--rate", "+Inf"}, `"+Inf" is not a rate`},
		{[]string{"--rate", "-inf"}, `"-inf" is not a rate`},
		{[]string{"--rate", "1e12"}, "--rate: must be > 0 and at most 1e+06"},
		{[]string{"--rate", "2e6/1s"}, "--rate: must be > 0 and at most 1e+06 requests per second, got 2e+06"},
		{[]string{"--rate", "0"}, "max-rate attack"},
		{[]string{"--rate", "50/0s"}, "positive duration"},
		{[]string{"--repeat", "1000000000"}, "--repeat: must be between 1 and 1000"},
		{[]string{"--repeat", "0"}, "--repeat: must be between 1 and 1000"},
		{[]string{"--duration", "1ns"}, "--duration: must be between 100ms and 24h0m0s"},
		{[]string{"--duration", "100000h"}, "--duration: must be between 100ms and 24h0m0s"},
		{[]string{"--warmup", "-1s"}, "--warmup: must be between 0 and 24h0m0s"},
		// Each value is fine alone; together they ask too much.
		{[]string{"--rate", "900000", "--duration", "10m"}, "workload.arrival: asks for 5.42e+08 arrivals in one run"},
		{[]string{"--repeat", "1000", "--duration", "20h"}, "repeat: repeat × variants × (warm-up + duration) is"},
	}
	for _, c := range cases {
		err := parseOverrides(t, c.args...)
		if err == nil {
			t.Errorf("%v: accepted, want %q", c.args, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v:\n  got  %v\n  want %s", c.args, err, c.want)
		}
	}
	if err := parseOverrides(t, "--rate", "250.5", "--repeat", "2", "--duration", "3s", "--warmup", "0s"); err != nil {
		t.Errorf("valid overrides refused: %v", err)
	}
}

// TestOverridesRateSyntax: run's --rate takes the spellings attack and
// scenario files take (960, 50/1s, 1/100ms), all per second in the end.
func TestOverridesRateSyntax(t *testing.T) {
	for in, want := range map[string]workloads.Rate{"960": 960, "50/1s": 50, "1/100ms": 10, "30/m": 0.5} {
		var o overrides
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.bind(f, "")
		if err := f.Parse([]string{"--rate", in}); err != nil {
			t.Fatalf("--rate %s: %v", in, err)
		}
		var s scenario.Scenario
		if err := o.apply(&s, f.Changed); err != nil || s.Workload.Arrival.RatePerSec != want {
			t.Errorf("--rate %s: rate %g, %v; want %g", in, s.Workload.Arrival.RatePerSec, err, want)
		}
	}
}

// FuzzOverrides feeds arbitrary flag values through pflag, the overrides
// and the scenario's Validate: an error, or a scenario within bounds with
// finite numbers; never a panic.
func FuzzOverrides(f *testing.F) {
	f.Add("NaN", "3", "10s", "1s")
	f.Add("+Inf", "1", "1ns", "0s")
	f.Add("-Inf", "0", "-5s", "-1s")
	f.Add("1e308", "2147483647", "2562047h", "2562047h")
	f.Add("1e12", "-1", "9223372036854775807ns", "1h")
	f.Add("0x1p-1074", "1000", "24h", "0s")
	f.Add("250", "3", "2s", "500ms")
	data, err := scenarios.Get("default")
	if err != nil {
		f.Fatal(err)
	}
	cat := topologies.Catalog()
	f.Fuzz(func(t *testing.T, rate, repeat, duration, warmup string) {
		var o overrides
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.bind(fs, "")
		if err := fs.Parse([]string{"--rate=" + rate, "--repeat=" + repeat, "--duration=" + duration, "--warmup=" + warmup}); err != nil {
			return
		}
		s, err := scenario.Parse("default.yaml", data, cat)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.apply(&s, fs.Changed); err != nil {
			return
		}
		if err := s.Validate(cat); err != nil {
			return
		}
		w := s.Workload
		if r := float64(w.Arrival.RatePerSec); math.IsNaN(r) || math.IsInf(r, 0) || r > workloads.MaxRate {
			t.Fatalf("accepted rate %g", w.Arrival.RatePerSec)
		}
		if s.Repeat < 1 || s.Repeat > scenario.MaxRepeat || w.Duration > workloads.MaxRunTime || w.WarmupTime() > workloads.MaxRunTime {
			t.Fatalf("accepted repeat %d, duration %s, warm-up %s", s.Repeat, w.Duration, w.WarmupTime())
		}
	})
}
