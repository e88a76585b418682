package job

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/baseline"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// TestInjectCostRefused: an injected cost with an unknown role, a
// negative or too long duration, or no baseline, and one the scenario
// cannot take (a proxy cost without the built-in proxy), are usage
// errors, found before the driver is made or the baseline built.
func TestInjectCostRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cost     map[string]time.Duration
		baseline string
		want     string
	}{
		{"unknown role", map[string]time.Duration{"generator": time.Millisecond}, "HEAD", `--inject-cost: unknown role "generator" (known: proxy, workers)`},
		{"negative", map[string]time.Duration{topologies.RoleWorkers: -time.Microsecond}, "HEAD", "--inject-cost: workers: the CPU time per request must be between 0 and 1s, got -1µs"},
		{"too long", map[string]time.Duration{topologies.RoleProxy: time.Minute}, "HEAD", "--inject-cost: proxy: the CPU time per request must be between 0 and 1s, got 1m0s"},
		{"no baseline", map[string]time.Duration{topologies.RoleWorkers: time.Millisecond}, "", "--inject-cost makes this build cost more than its baseline: give --baseline REF too"},
		// The test scenario's variants are reuseport: no proxy. Found
		// before the build (a ref that does not exist is never looked
		// at).
		{"no proxy", map[string]time.Duration{topologies.RoleProxy: time.Millisecond}, "no-such-ref",
			"--inject-cost proxy=1ms: no variant of scenario job runs the built-in proxy to spend it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := options(t, testScenario(t, 1, []string{"a"}), fake{}.driver(), &out)
			o.InjectCost, o.Baseline = tc.cost, tc.baseline
			made := false
			o.Driver = func(context.Context) (harness.Driver, func(), error) {
				made = true
				return nil, nil, errors.New("unreachable")
			}
			res, err := Run(context.Background(), o)
			if code(t, err) != ExitError || !strings.Contains(err.Error(), tc.want) || res != nil || made {
				t.Fatalf("exit %d, %v (results %v, driver made %v)\nwant exit %d and %q", code(t, err), err, res, made, ExitError, tc.want)
			}
		})
	}
	// What the scenario cannot take is found before the build too.
	var out0 bytes.Buffer
	o0 := options(t, testScenario(t, 1, []string{"a"}), fake{}.driver(), &out0)
	o0.InjectSlowdown, o0.Baseline = 20, "no-such-ref"
	if _, err := Run(context.Background(), o0); err == nil || !strings.Contains(err.Error(), "with the baseline variants: variants[0].service_scale: must be between 0.1 and 10") {
		t.Errorf("slowdown 20: %v", err)
	}
	// Zero costs inject nothing and need no baseline.
	var out bytes.Buffer
	o := options(t, testScenario(t, 1, []string{"a"}), fake{}.driver(), &out)
	o.InjectCost = map[string]time.Duration{topologies.RoleProxy: 0}
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("a zero cost: %v", err)
	}
}

// TestInjectedIntoThisBuildOnly: with a baseline, this build's variants
// get the injected costs and slowdown and their --inject-cost flags (a
// proxy cost only where the built-in proxy runs), the baseline's twins
// (another build's binary) neither.
func TestInjectedIntoThisBuildOnly(t *testing.T) {
	s := testScenario(t, 1, []string{"a"})
	s.Variants = []scenario.Variant{
		scenario.Variant{Name: "lc", Topology: scenario.Proxy}.WithDefaults(),
		scenario.Variant{Name: "rp", Topology: scenario.ReusePort}.WithDefaults(),
	}
	o := Options{InjectSlowdown: 1.2, InjectCost: map[string]time.Duration{topologies.RoleProxy: 40 * time.Microsecond, topologies.RoleWorkers: 20 * time.Microsecond}}
	got := o.injected(baseline.Twins(s))
	if err := got.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 2 || s.Variants[0].ProxyCost != 0 {
		t.Fatalf("the scenario given was changed: %+v", s.Variants)
	}
	if names := len(got.Variants); names != 4 {
		t.Fatalf("%d variants, want 4 (each and its twin)", names)
	}
	for _, v := range got.Variants {
		mine := v.Build == ""
		wantProxy := map[bool]time.Duration{true: 40 * time.Microsecond}[mine && v.Topology == scenario.Proxy]
		wantWorker, wantScale := map[bool]time.Duration{true: 20 * time.Microsecond}[mine], map[bool]float64{true: 1.2}[mine]
		if v.ProxyCost != wantProxy || v.WorkerCost != wantWorker || v.ServiceScale != wantScale {
			t.Errorf("%s: proxy cost %s, worker cost %s, service scale %g; want %s, %s, %g", v.Name, v.ProxyCost, v.WorkerCost, v.ServiceScale, wantProxy, wantWorker, wantScale)
		}
		exe := ""
		if !mine {
			exe = "/tmp/lbbench-base"
		}
		p, err := topologies.RenderRun("001", v, got.Workers, fake{}.driver(), exe)
		if err != nil {
			t.Fatal(err)
		}
		for _, proc := range p.Processes {
			args := proc.Args()
			has := slices.Contains(args, "--inject-cost")
			want := mine && (proc.Role == topologies.RoleWorkers || v.Topology == scenario.Proxy)
			if has != want {
				t.Errorf("%s: %s %v: --inject-cost there %v, want %v", v.Name, proc.Role, args, has, want)
			}
		}
	}
	if got, want := o.injections(), "service times ×1.2, proxy +40µs of CPU per request, workers +20µs of CPU per request"; got != want {
		t.Errorf("injections %q, want %q", got, want)
	}
}
