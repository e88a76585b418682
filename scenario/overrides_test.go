package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

const overridesScenario = `name: over
workers: {count: 2}
workload:
  arrival: {rate: 100}
  duration: 5s
  classes:
    - {name: only, weight: 1, service: {value: 1ms}}
  clients: {connections: 4}
variants:
  - {name: rp, topology: reuseport}
  - {name: close, topology: shared, clients: {connections: 2, requests_per_conn: 1}}
`

// TestOverridesApply: the workload's overrides go to the scenario's
// workload, and those of the client model to every variant's own client
// model too; --variant keeps the variants named, in its order.
func TestOverridesApply(t *testing.T) {
	s, err := scenario.Parse("over.yaml", []byte(overridesScenario), topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	repeat, workers, conns, rate, d, warmup := 2, 3, 16, workloads.Rate(250), 2*time.Second, time.Duration(0)
	o := scenario.Overrides{
		Repeat:   &repeat,
		Workload: workloads.Overrides{Rate: &rate, Duration: &d, Warmup: &warmup, Connections: &conns},
		Workers:  &workers,
		Variants: []string{"close", "rp"},
	}
	if err := o.Apply(&s); err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if s.Repeat != 2 || s.Workers.Count != 3 || w.Arrival.RatePerSec != 250 || w.Duration != d || w.Warmup != workloads.NoWarmup || w.Clients.Connections != 16 {
		t.Errorf("repeat %d, workers %d, workload %+v", s.Repeat, s.Workers.Count, w)
	}
	if len(s.Variants) != 2 || s.Variants[0].Name != "close" || s.Variants[1].Name != "rp" {
		t.Fatalf("variants %+v", s.Variants)
	}
	if c := s.Variants[0].Clients; c == nil || c.Connections != 16 || c.RequestsPerConn != 1 {
		t.Errorf("the variant's own clients: %+v", c)
	}
	if s.Variants[1].Clients != nil {
		t.Errorf("a variant without clients of its own got some: %+v", s.Variants[1].Clients)
	}
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Error(err)
	}
}

// TestOverridesRefuse: a bad value is refused naming its flag.
func TestOverridesRefuse(t *testing.T) {
	zero, neg, huge := 0, -1, 2000
	rate := workloads.Rate(0)
	for want, o := range map[string]scenario.Overrides{
		"--repeat: must be between 1 and 1000":        {Repeat: &zero},
		"--repeat: must be between 1 and 1000 (":      {Repeat: &huge},
		"--rate: must be > 0":                         {Workload: workloads.Overrides{Rate: &rate}},
		"--connections must be at least 1, got -1":    {Workload: workloads.Overrides{Connections: &neg}},
		`--variant: scenario over has no variant "x"`: {Variants: []string{"rp", "x"}},
	} {
		s, err := scenario.Parse("over.yaml", []byte(overridesScenario), topologies.Catalog())
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Apply(&s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
}
