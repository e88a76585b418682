package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

func TestScenarioFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = scenario.Parse(name, data, topologies.Catalog())
			if strings.HasSuffix(name, ".good.yaml") {
				if err != nil {
					t.Fatalf("good fixture: %v", err)
				}
				return
			}
			first, _, _ := strings.Cut(string(data), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("bad fixture without a '# want: ' first line")
			}
			if err == nil {
				t.Fatalf("no error, want %q", want)
			}
			var fe *scenario.FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FieldError", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, want)
			}
		})
	}
}

func TestEmbeddedScenariosValid(t *testing.T) {
	for _, name := range scenarios.Names() {
		data, err := scenarios.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario.Parse(name+".yaml", data, topologies.Catalog()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestScheduleBalanced(t *testing.T) {
	data, _ := scenarios.Get(scenarios.Default)
	s, err := scenario.Parse("default.yaml", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	s.Repeat = 6
	sched := s.Schedule(0)
	if len(sched) != 6*len(s.Variants) {
		t.Fatalf("%d runs, want %d", len(sched), 6*len(s.Variants))
	}
	distinct := map[string]bool{}
	for r := 1; r <= 6; r++ {
		seen := make([]bool, len(s.Variants))
		key := ""
		for _, slot := range sched[(r-1)*len(s.Variants) : r*len(s.Variants)] {
			if slot.Round != r {
				t.Fatalf("run %s in round %d, want %d", slot.ID, slot.Round, r)
			}
			seen[slot.Variant] = true
			key += string(rune('a' + slot.Variant))
		}
		for v, ok := range seen {
			if !ok {
				t.Fatalf("round %d misses variant %d", r, v)
			}
		}
		distinct[key] = true
	}
	if len(distinct) < 2 {
		t.Errorf("6 rounds all in the same order: not randomized")
	}
	for i, slot := range sched {
		want := scenario.RunID(i+1, s.Variants[slot.Variant].Name, slot.Round)
		if slot.Index != i+1 || slot.ID != want {
			t.Fatalf("run %d: index %d id %q, want %q", i+1, slot.Index, slot.ID, want)
		}
	}
	// Reproducible from the seed, and a longer schedule begins with the
	// shorter one (a run that goes on until decided follows it).
	longer := s.Schedule(9)
	for i := range sched {
		if longer[i] != sched[i] {
			t.Fatalf("run %d: %+v in 9 rounds, %+v in 6", i+1, longer[i], sched[i])
		}
	}
	if id := scenario.RunID(3, "reuseport", 2); id != "003-reuseport-r2" {
		t.Errorf("RunID = %q", id)
	}
}

// TestWorkloadForRounds: a variant's workload in round r is the file's
// with a seed of round r: the file's in round 1 (and 0), the same for
// every variant of a round, distinct across rounds; a closed-loop
// workload keeps the file's seed in every round.
func TestWorkloadForRounds(t *testing.T) {
	data, _ := scenarios.Get(scenarios.Default)
	s, err := scenario.Parse("default.yaml", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) < 2 {
		t.Fatalf("the default scenario has %d variants, want 2 or more", len(s.Variants))
	}
	file := s.Workload.Seed
	seen := map[uint64]int{}
	for r := 0; r <= 20; r++ {
		a, b := s.WorkloadFor(s.Variants[0], r), s.WorkloadFor(s.Variants[1], r)
		if a.Seed != b.Seed {
			t.Errorf("round %d: variants seeded %d and %d, want one seed per round", r, a.Seed, b.Seed)
		}
		if r <= 1 {
			if a.Seed != file {
				t.Errorf("round %d: seed %d, want the file's %d", r, a.Seed, file)
			}
			continue
		}
		if prev, ok := seen[a.Seed]; ok || a.Seed == file {
			t.Errorf("round %d: seed %d already used (round %d, or the file's)", r, a.Seed, prev)
		}
		seen[a.Seed] = r
		a.Seed = file
		if want := s.WorkloadFor(s.Variants[0], 1); !reflect.DeepEqual(a, want) {
			t.Errorf("round %d: workload differs from round 1's beyond the seed:\n%+v\n%+v", r, a, want)
		}
	}

	closed := s
	closed.Workload.Closed = &workloads.Closed{}
	for r := 0; r <= 3; r++ {
		if got := closed.WorkloadFor(closed.Variants[0], r).Seed; got != file {
			t.Errorf("closed loop, round %d: seed %d, want the file's %d", r, got, file)
		}
	}
}

// TestRateSpellingsInScenarios: a scenario file's rates read vegeta's
// spelling as well as a number per second, in every arrival that has one.
func TestRateSpellingsInScenarios(t *testing.T) {
	for doc, want := range map[string][]workloads.Rate{
		"arrival: {rate: 50/1s}":                                                               {50},
		"arrival: {kind: poisson, rate: '1/100ms'}":                                            {10},
		"arrival: {kind: ramp, from: 30/m, to: 960}":                                           {0.5, 960},
		"arrival: {kind: steps, steps: [{rate: 5/s, duration: 1s}, {rate: 20, duration: 1s}]}": {5, 20},
	} {
		data := "name: r\nworkers: {count: 2}\nworkload:\n  " + doc + "\n  classes: [{name: only, weight: 1}]\nvariants:\n  - {name: rp, topology: reuseport}\n"
		s, err := scenario.Parse("r.yaml", []byte(data), topologies.Catalog())
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		a := s.Workload.Arrival
		var got []workloads.Rate
		switch a.Kind {
		case workloads.Ramp:
			got = []workloads.Rate{a.From, a.To}
		case workloads.Steps:
			for _, st := range a.Steps {
				got = append(got, st.RatePerSec)
			}
		default:
			got = []workloads.Rate{a.RatePerSec}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rates %v, want %v", doc, got, want)
		}
	}
}

// TestVerdicts: a scenario names the metrics its comparisons judge; an
// unknown or repeated one is refused with its field and the known names.
func TestVerdicts(t *testing.T) {
	base := "name: v\nworkers: {count: 2}\nworkload:\n  arrival: {rate: 50}\n  classes: [{name: only, weight: 1}]\nvariants:\n  - {name: rp, topology: reuseport}\n"
	s, err := scenario.Parse("v.yaml", []byte(base+"verdicts: [p99, cpu_per_request(workers)]\n"), topologies.Catalog())
	if err != nil || !slices.Equal(s.Verdicts, []string{"p99", "cpu_per_request(workers)"}) {
		t.Fatalf("%v %v", s.Verdicts, err)
	}
	for doc, want := range map[string]string{
		"verdicts: [p99, p99]\n":        `verdicts[1]: "p99" given twice`,
		"verdicts: [p90]\n":             `verdicts[0]: unknown metric "p90" (known: p50, p99`,
		"verdicts: [cpu_per_request]\n": `unknown metric "cpu_per_request"`,
		"verdicts: ['']\n":              `verdicts[0]: is empty`,
	} {
		if _, err := scenario.Parse("v.yaml", []byte(base+doc), topologies.Catalog()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestInjectedCosts: a variant's injected costs (lbbench run
// --inject-cost) are bounded, a proxy cost needs the built-in proxy and a
// worker cost the built-in worker, and a scenario file cannot set them.
func TestInjectedCosts(t *testing.T) {
	const file = `name: costs
workers: {count: 2}
workload:
  arrival: {rate: 100}
  classes:
    - {name: only, weight: 1, service: {value: 1ms}}
variants:
  - {name: v, topology: proxy}
`
	base, err := scenario.Parse("costs.yaml", []byte(file), topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	const us = time.Microsecond
	for _, tc := range []struct {
		name string
		edit func(*scenario.Scenario)
		want string // "": valid
	}{
		{"both on the built-in proxy", func(s *scenario.Scenario) { s.Variants[0].ProxyCost, s.Variants[0].WorkerCost = 40*us, 40*us }, ""},
		{"unix", func(s *scenario.Scenario) { s.Variants[0].Topology, s.Variants[0].ProxyCost = scenario.Unix, 40*us }, ""},
		{"l4", func(s *scenario.Scenario) { s.Variants[0].Topology, s.Variants[0].ProxyCost = scenario.L4, 40*us }, ""},
		{"worker cost without a proxy", func(s *scenario.Scenario) {
			s.Variants[0] = scenario.Variant{Name: "v", Topology: scenario.ReusePort, WorkerCost: 40 * us}
		}, ""},
		{"negative proxy cost", func(s *scenario.Scenario) { s.Variants[0].ProxyCost = -us },
			"variants[0].proxy_cost: must be between 0 (none) and 1s of CPU per request, got -1µs"},
		{"worker cost past the bound", func(s *scenario.Scenario) { s.Variants[0].WorkerCost = 2 * time.Second },
			"variants[0].worker_cost: must be between 0 (none) and 1s of CPU per request, got 2s"},
		{"proxy cost without a proxy", func(s *scenario.Scenario) {
			s.Variants[0] = scenario.Variant{Name: "v", Topology: scenario.Shared, ProxyCost: 40 * us}
		}, "variants[0].proxy_cost: an injected proxy cost (--inject-cost proxy=D) needs the built-in proxy; topology shared has no proxy"},
		{"proxy cost on nginx", func(s *scenario.Scenario) {
			s.Variants[0].Proxy.Engine, s.Variants[0].ProxyCost = scenario.Nginx, 40*us
		}, "variants[0].proxy_cost: an injected proxy cost (--inject-cost proxy=D) needs the built-in proxy; engine nginx runs this variant's proxy"},
		{"worker cost on the variant's target", func(s *scenario.Scenario) {
			s.Variants[0].Target, s.Variants[0].WorkerCost = &scenario.Target{Exec: "srv --port {port}"}, 40*us
		}, "variants[0].worker_cost: an injected worker cost (--inject-cost workers=D) needs the built-in worker; the variant's target runs a foreign server"},
		{"worker cost on workers.target", func(s *scenario.Scenario) {
			s.Workers.Target, s.Variants[0].WorkerCost = &scenario.Target{Exec: "srv --port {port}"}, 40*us
		}, "variants[0].worker_cost: an injected worker cost (--inject-cost workers=D) needs the built-in worker; workers.target runs a foreign server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Variants = slices.Clone(base.Variants)
			tc.edit(&s)
			s = s.WithDefaults()
			err := s.Validate(topologies.Catalog())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v\nwant %q", err, tc.want)
			}
		})
	}

	for _, key := range []string{"proxy_cost", "worker_cost"} {
		_, err := scenario.Parse("costs.yaml", []byte(strings.Replace(file, "topology: proxy}", "topology: proxy, "+key+": 40us}", 1)), topologies.Catalog())
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("a scenario file setting %s: %v, want it refused", key, err)
		}
	}
}
