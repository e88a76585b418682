package harness_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/testkit/fakedriver"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
)

// stealDriver wraps the fake driver so that its deployments'
// Stats report the host's steal by CPU: steal(n, after) is what the n-th
// deployment (from 1) reports before (after false) and after the load.
type stealDriver struct {
	*fakedriver.Driver
	steal func(n int, after bool) map[int]time.Duration
	ups   int
}

func (d *stealDriver) Up(ctx context.Context, b harness.Bring) (harness.Deployment, error) {
	dep, err := d.Driver.Up(ctx, b)
	if err != nil {
		return nil, err
	}
	d.ups++
	return &stealDeployment{Deployment: dep, d: d, n: d.ups}, nil
}

type stealDeployment struct {
	harness.Deployment
	d     *stealDriver
	n     int
	calls int
}

func (s *stealDeployment) Stats(ctx context.Context) (harness.Stats, error) {
	st, err := s.Deployment.Stats(ctx)
	s.calls++
	st.Steal = s.d.steal(s.n, s.calls > 1)
	return st, err
}

// TestRunStealRetried: a run during which the server's CPUs were stolen
// past validity.max_steal is invalid, with its reason, and made again by
// WithRetries; its retry, on a quiet host, is valid; every run records the
// server's steal and CPUs.
func TestRunStealRetried(t *testing.T) {
	s := testScenario(t, 1, "alpha", "beta")
	wall := s.Workload.WarmupTime() + fakedriver.Measurement(0).Duration
	d := &stealDriver{Driver: &fakedriver.Driver{}, steal: func(n int, after bool) map[int]time.Duration {
		st := map[int]time.Duration{0: time.Second, 1: 2 * time.Second}
		if n == 1 && after {
			// A fifth of each CPU's time.
			st[0] += wall / 5
			st[1] += wall / 5
		}
		return st
	}}
	res, err := harness.Run(context.Background(), s, d, harness.WithRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	p := ids(planned(s))
	if got, want := runIDs(res.Runs), []string{p[0], p[0] + "-retry1", p[1]}; !slices.Equal(got, want) {
		t.Fatalf("runs %q, want %q", got, want)
	}
	first := res.Runs[0]
	if first.Valid || len(first.Invalid) != 1 || !strings.Contains(first.Invalid[0], "the host stole 20.0% of the run's 2 CPUs") {
		t.Errorf("stolen run: valid=%v reasons %q; want invalid, the host stole 20.0%% of 2 CPUs", first.Valid, first.Invalid)
	}
	if got := harness.Remade(res); !maps.Equal(got, map[string]int{harness.CauseSteal: 1}) {
		t.Errorf("Remade = %v, want 1 run, host steal", got)
	}
	if first.Server == nil || *first.Server != (results.Server{CPUs: 2, Steal: 2 * wall / 5}) {
		t.Errorf("stolen run's server %+v, want 2 CPUs, %s", first.Server, 2*wall/5)
	}
	for _, r := range res.Runs[1:] {
		if !r.Valid || r.Server == nil || *r.Server != (results.Server{CPUs: 2}) {
			t.Errorf("%s: valid=%v %q server %+v; want valid, 2 CPUs, no steal", r.ID, r.Valid, r.Invalid, r.Server)
		}
	}
}

// TestRunNotRetried: a saturated run (valid) and a failed one are
// measurements, made once even with retries allowed, however much the
// host stole during the failed one.
func TestRunNotRetried(t *testing.T) {
	s := testScenario(t, 1, "alpha", "beta")
	d := &stealDriver{
		Driver: &fakedriver.Driver{
			Attack: func(_ context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
				m := fakedriver.Measurement(time.Millisecond)
				if n == 1 {
					// Late sends at the in-flight cap, with CPU to spare.
					m = fakedriver.Measurement(20 * time.Millisecond)
					m.Generator.Held, m.Generator.MaxInFlight, m.Generator.CPUs = 40, 16, 2
				}
				return m, nil
			},
			Stats: func(n int, _ topologies.Plan) (harness.Stats, error) {
				if n == 2 {
					return harness.Stats{Dead: []results.Failure{{Process: "workers: worker 0 (pid 1)", Exit: "signal: killed"}}}, nil
				}
				return harness.Stats{}, nil
			},
		},
		steal: func(n int, after bool) map[int]time.Duration {
			if n == 2 && after {
				return map[int]time.Duration{0: time.Hour}
			}
			return map[int]time.Duration{0: 0}
		},
	}
	res, err := harness.Run(context.Background(), s, d, harness.WithRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIDs(res.Runs), ids(planned(s)); !slices.Equal(got, want) {
		t.Fatalf("runs %q, want %q: neither made again", got, want)
	}
	if r := res.Runs[0]; !r.Valid || r.Saturated == "" {
		t.Errorf("%s: valid=%v saturated %q; want a valid saturated run", r.ID, r.Valid, r.Saturated)
	}
	if r := res.Runs[1]; r.Valid || len(r.Failed) != 1 || !strings.HasPrefix(r.Invalid[0], "failed: ") || !slices.ContainsFunc(r.Invalid, func(s string) bool { return strings.Contains(s, "the host stole") }) {
		t.Errorf("%s: valid=%v reasons %q; want failed first, the steal too", r.ID, r.Valid, r.Invalid)
	}
}

// fakeNeighbours answers each Watch with the next of others, and logs
// every Watch and end in log next to the attacks.
type fakeNeighbours struct {
	mu     sync.Mutex
	others [][]string
	log    *[]string
}

func (f *fakeNeighbours) Watch() func() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, "watch")
	var seen []string
	if len(f.others) > 0 {
		seen, f.others = f.others[0], f.others[1:]
	}
	return func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		*f.log = append(*f.log, "end")
		return seen
	}
}

// TestRunConcurrent: each run's load is watched for other lbbench runs
// (Watch before the attack, its end after); a run that saw one records it
// and is invalid, and WithRetries makes it again.
func TestRunConcurrent(t *testing.T) {
	s := testScenario(t, 1, "alpha", "beta")
	var log []string
	var mu sync.Mutex
	d := &fakedriver.Driver{Attack: func(context.Context, int, topologies.Plan) (*results.Measurement, error) {
		mu.Lock()
		log = append(log, "attack")
		mu.Unlock()
		return fakedriver.Measurement(time.Millisecond), nil
	}}
	other := "pid 4242, scenario other, since 15:04:05"
	n := &fakeNeighbours{others: [][]string{{other}}, log: &log}
	res, err := harness.Run(context.Background(), s, d, harness.WithRetries(1), harness.WithNeighbours(n))
	if err != nil {
		t.Fatal(err)
	}
	p := ids(planned(s))
	if got, want := runIDs(res.Runs), []string{p[0], p[0] + "-retry1", p[1]}; !slices.Equal(got, want) {
		t.Fatalf("runs %q, want %q", got, want)
	}
	if r := res.Runs[0]; r.Valid || !slices.Equal(r.Concurrent, []string{other}) || !strings.Contains(r.Invalid[0], other) {
		t.Errorf("%s: valid=%v concurrent %q reasons %q; want invalid, naming %q", r.ID, r.Valid, r.Concurrent, r.Invalid, other)
	}
	for _, r := range res.Runs[1:] {
		if !r.Valid || r.Concurrent != nil {
			t.Errorf("%s: valid=%v concurrent %q; want valid, none", r.ID, r.Valid, r.Concurrent)
		}
	}
	if want := slices.Repeat([]string{"watch", "attack", "end"}, 3); !slices.Equal(log, want) {
		t.Errorf("calls %q, want %q", log, want)
	}
}
