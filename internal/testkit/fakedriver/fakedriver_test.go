package fakedriver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// bring is what the run loop would ask for run id: a reuseport variant
// of Workers workers.
func bring(t *testing.T, id string) harness.Bring {
	t.Helper()
	s := scenario.Scenario{
		Name:    "fake",
		Workers: scenario.Workers{Count: Workers},
		Workload: workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100},
			Duration: time.Second,
			Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		},
		Repeat:   1,
		Variants: []scenario.Variant{{Name: "v", Topology: scenario.ReusePort}},
	}.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	return harness.Bring{ID: id, Variant: s.Variants[0], Workers: s.Workers}
}

// TestRecordsARun: a deployment's calls as the run loop makes them are
// answered by default and recorded in order; Down is idempotent.
func TestRecordsARun(t *testing.T) {
	d := &Driver{}
	var env results.Env
	if err := d.Describe(context.Background(), scenario.Scenario{}, &env); err != nil || env.Containers == nil || env.Containers.Generator != Generator {
		t.Fatalf("Describe: %v, containers %+v", err, env.Containers)
	}
	if d.Name() != Name {
		t.Errorf("name %q", d.Name())
	}
	if p, _ := d.Ports(2); p != FirstPort {
		t.Errorf("first port %d, want %d", p, FirstPort)
	}
	if p, _ := d.Ports(1); p != FirstPort+2 {
		t.Errorf("second port %d, want %d: not consecutive", p, FirstPort+2)
	}
	var events []harness.Progress
	progress := d.Progress(&events)
	progress(harness.Progress{ID: "001"})
	dep, err := d.Up(context.Background(), bring(t, "001"))
	if err != nil {
		t.Fatal(err)
	}
	fd := dep.(*Deployment)
	if d.Live() != fd || fd.Plan().ID != "001" || dep.Entry() == "" || dep.Entry() != fd.Plan().Entry {
		t.Fatalf("live %v, plan %+v, entry %q", d.Live(), fd.Plan(), dep.Entry())
	}
	if st, err := dep.Stats(context.Background()); err != nil || st.Proxy != nil || len(st.Workers) != 0 {
		t.Errorf("Stats before the attack: %+v, %v", st, err)
	}
	if _, attacked := fd.Spec(); attacked {
		t.Error("attacked before Attack")
	}
	spec := workloads.Spec{Seed: 7}
	m, err := dep.Attack(context.Background(), spec)
	if err != nil || m.Requests != 100 || m.SendLag.Summarize().P99 > 2*time.Millisecond {
		t.Fatalf("default attack: %+v, %v", m, err)
	}
	if got, attacked := fd.Spec(); !attacked || got.Seed != 7 {
		t.Errorf("spec %+v (attacked %v), want the attack's", got, attacked)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		if err := dep.Down(ctx); err != nil {
			t.Fatal(err)
		}
	}
	progress(harness.Progress{ID: "001", Done: true})
	down := fd.FirstDown()
	if fd.Downs() != 2 || down.Err != nil || !down.Bounded || down.Deadline.Before(down.At) || d.Live() != nil {
		t.Errorf("downs %d, first %+v, live %v", fd.Downs(), down, d.Live())
	}
	if want := []string{"start 001", "up 001", "down 001", "done 001"}; !slices.Equal(d.Log(), want) {
		t.Errorf("log %q, want %q", d.Log(), want)
	}
	if len(events) != 2 || len(d.Plans()) != 1 || len(d.Deployments()) != 1 || len(d.Overlaps()) != 0 {
		t.Errorf("%d events, %d plans, %d deployments, overlaps %q", len(events), len(d.Plans()), len(d.Deployments()), d.Overlaps())
	}
}

// TestHooksFail: each hook makes the call it counts fail, with the plan
// it was asked about; Describe returns DescribeErr; an Up on a done
// context fails; an Up while another deployment is up is recorded.
func TestHooksFail(t *testing.T) {
	boom := errors.New("boom")
	var asked []string
	d := &Driver{
		DescribeErr: boom,
		UpErr: func(n int, p topologies.Plan) error {
			asked = append(asked, p.ID)
			if n == 2 {
				return boom
			}
			return nil
		},
		Attack: func(_ context.Context, n int, p topologies.Plan) (*results.Measurement, error) {
			if n == 1 && p.ID == "001" {
				return nil, boom
			}
			return Measurement(time.Millisecond), nil
		},
		Stats: func(n int, p topologies.Plan) (harness.Stats, error) {
			if n == 1 && p.ID == "001" {
				return harness.Stats{}, boom
			}
			return harness.Stats{Dead: []results.Failure{{Process: p.ID}}}, nil
		},
	}
	if err := d.Describe(context.Background(), scenario.Scenario{}, &results.Env{}); !errors.Is(err, boom) {
		t.Errorf("Describe: %v, want DescribeErr", err)
	}
	dep, err := d.Up(context.Background(), bring(t, "001"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dep.Stats(context.Background()); err != nil {
		t.Errorf("Stats before the attack asked the hook: %v", err)
	}
	if _, err := dep.Attack(context.Background(), workloads.Spec{}); !errors.Is(err, boom) {
		t.Errorf("first attack: %v, want the hook's error", err)
	}
	if _, err := dep.Stats(context.Background()); !errors.Is(err, boom) {
		t.Errorf("first Stats after the attack: %v, want the hook's error", err)
	}
	if st, err := dep.Stats(context.Background()); err != nil || len(st.Dead) != 1 || st.Dead[0].Process != "001" {
		t.Errorf("second Stats: %+v, %v", st, err)
	}
	if _, err := d.Up(context.Background(), bring(t, "002")); !errors.Is(err, boom) {
		t.Errorf("second Up: %v, want the hook's error", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Up(cancelled, bring(t, "003")); !errors.Is(err, context.Canceled) {
		t.Errorf("Up on a cancelled context: %v", err)
	}
	if want := []string{"001", "002"}; !slices.Equal(asked, want) {
		t.Errorf("UpErr asked about %q, want %q (not when the context was done)", asked, want)
	}
	if want := []string{"up 001", "up-failed 002", "up-failed 003"}; !slices.Equal(d.Log(), want) {
		t.Errorf("log %q, want %q", d.Log(), want)
	}
	if o := d.Overlaps(); len(o) != 2 || o[0] != "002 while 001 was up" {
		t.Errorf("overlaps %q, want 002 and 003 while 001 was up", o)
	}
	if len(d.Plans()) != 3 || len(d.Deployments()) != 1 || d.Live() != dep {
		t.Errorf("%d plans, %d deployments, live %v", len(d.Plans()), len(d.Deployments()), d.Live())
	}
}

// TestMeasurement: the default measurement is the clean run it says.
func TestMeasurement(t *testing.T) {
	m := Measurement(3 * time.Millisecond)
	var sum uint64
	for w, n := range m.ByWorker {
		if w < 0 || w >= Workers || n != ByWorker()[w] {
			t.Errorf("worker %d: %d responses", w, n)
		}
		sum += n
	}
	lag := m.SendLag.Summarize()
	if sum != m.Requests || m.Requests != 100 || m.AchievedRate != m.IntendedRate || len(m.Classes) != 1 ||
		lag.P50 < 3*time.Millisecond || lag.P99 > 4*time.Millisecond || m.Latency.Summarize().P50 < time.Millisecond {
		t.Errorf("measurement %+v, send lag %+v", m, lag)
	}
}
