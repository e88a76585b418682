package harness_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/testkit/fakedriver"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// The tests in this file exercise Run's loop alone: the fake driver
// (fakedriver.Driver) starts nothing and its deployments are Attackers
// that send no load, so every test is pure logic and fast. That Run
// drives real processes is shown by the drivers' own tests, not here.

// testScenario returns a valid scenario of the named variants (reuseport,
// so rendering needs only ports) repeated repeat times.
func testScenario(t *testing.T, repeat int, variants ...string) scenario.Scenario {
	t.Helper()
	s := scenario.Scenario{
		Name:    "fake",
		Workers: scenario.Workers{Count: fakedriver.Workers},
		Workload: workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100},
			Duration: time.Second,
			Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		},
		Repeat: repeat,
	}
	for _, v := range variants {
		s.Variants = append(s.Variants, scenario.Variant{Name: v, Topology: scenario.ReusePort})
	}
	s = s.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatalf("test scenario: %v", err)
	}
	return s
}

// plannedRun is one entry of a scenario's run order.
type plannedRun struct {
	ID, Variant string
	Rep         int
}

// planned spells out s.Schedule(0) as the runs Run must make, in order,
// with the IDs results.Run documents ("003-least_conn-r1").
func planned(s scenario.Scenario) []plannedRun {
	var out []plannedRun
	for _, slot := range s.Schedule(0) {
		name := s.Variants[slot.Variant].Name
		out = append(out, plannedRun{fmt.Sprintf("%03d-%s-r%d", len(out)+1, name, slot.Round), name, slot.Round})
	}
	return out
}

func ids(runs []plannedRun) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

func runIDs(runs []results.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// checkpoints returns a WithCheckpoint option that appends the number of
// runs each call sees to seen.
func checkpoints(seen *[]int) harness.Option {
	return harness.WithCheckpoint(func(r *results.Results) error {
		*seen = append(*seen, len(r.Runs))
		return nil
	})
}

// checkRuns fails unless got are exactly the runs want, in order.
func checkRuns(t *testing.T, got []results.Run, want []plannedRun) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d runs %q, want %d %q", len(got), runIDs(got), len(want), ids(want))
	}
	for i, w := range want {
		if g := got[i]; g.ID != w.ID || g.Variant != w.Variant || g.Rep != w.Rep {
			t.Errorf("run %d is %s (variant %s, rep %d), want %s (variant %s, rep %d)",
				i+1, g.ID, g.Variant, g.Rep, w.ID, w.Variant, w.Rep)
		}
	}
}

// checkDowns fails unless every deployment that came up was taken down
// exactly once, none is still up, and no two were ever up at once.
func checkDowns(t *testing.T, d *fakedriver.Driver, wantUp int) {
	t.Helper()
	deps := d.Deployments()
	if len(deps) != wantUp {
		t.Errorf("%d deployments came up, want %d", len(deps), wantUp)
	}
	for _, dep := range deps {
		if n := dep.Downs(); n != 1 {
			t.Errorf("%s: Down called %d times, want 1", dep.Plan().ID, n)
		}
	}
	if live := d.Live(); live != nil {
		t.Errorf("%s is still up after Run returned", live.Plan().ID)
	}
	if overlap := d.Overlaps(); len(overlap) > 0 {
		t.Errorf("two deployments up at once: %q", overlap)
	}
}

// TestRunFollowsOrder checks that Run makes exactly the runs of s.Schedule,
// in that order, with their IDs, and brings up one deployment at a time:
// every Up is followed by its own Down before the next Up.
func TestRunFollowsOrder(t *testing.T) {
	s := testScenario(t, 3, "alpha", "beta", "gamma")
	want := planned(s)
	// The fixture must interleave: with the identity order in every
	// repetition, a loop that ignored Order would pass.
	shuffled := false
	for i, slot := range s.Schedule(0) {
		shuffled = shuffled || i%len(s.Variants) != slot.Variant
	}
	if !shuffled {
		t.Fatalf("fixture: the schedule is the identity in every round; change the seed")
	}

	d := &fakedriver.Driver{}
	res, err := harness.Run(context.Background(), s, d)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Error != "" {
		t.Errorf("complete=%v error=%q, want complete and no error", res.Complete, res.Error)
	}
	if !reflect.DeepEqual(res.Order, ids(want)) {
		t.Errorf("Order = %q, want %q", res.Order, ids(want))
	}
	checkRuns(t, res.Runs, want)
	if res.Env.Driver != "fake" || res.Env.Containers == nil || res.Env.Containers.Generator != fakedriver.Generator {
		t.Errorf("env driver %q containers %+v: the driver's name and Describe are missing", res.Env.Driver, res.Env.Containers)
	}

	var wantLog []string
	plans := d.Plans()
	for i, w := range want {
		wantLog = append(wantLog, "up "+w.ID, "down "+w.ID)
		if p := plans[i]; p.ID != w.ID || p.Variant != w.Variant {
			t.Errorf("Up %d got plan %s of %s, want %s of %s", i+1, p.ID, p.Variant, w.ID, w.Variant)
		}
	}
	if got := d.Log(); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("driver calls:\n  %q\nwant:\n  %q", got, wantLog)
	}
	checkDowns(t, d, len(want))
}

// TestRunTimesAsStored checks that the times a run records are the wall
// clock's alone, as results.json keeps them: with the monotonic clock's
// reading too, the scenario's length in a report made in memory was
// measured on that clock and in one made from the file on the wall
// clock, and the two reports of one run differed when NTP slewed it.
func TestRunTimesAsStored(t *testing.T) {
	s := testScenario(t, 1, "alpha", "beta")
	res, err := harness.Run(context.Background(), s, &fakedriver.Driver{})
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]time.Time{"Started": res.Started, "Finished": res.Finished}
	for _, r := range res.Runs {
		times[r.ID+" Started"] = r.Started
	}
	for name, tm := range times {
		// Time.String shows the monotonic reading as "m=±...".
		if tm.IsZero() || strings.Contains(tm.String(), " m=") {
			t.Errorf("%s = %s, want a wall-clock time alone", name, tm)
		}
	}
	if len(times) != 4 {
		t.Errorf("%d times checked, want the scenario's 2 and its 2 runs'", len(times))
	}
}

// TestRunCheckpoints checks that the checkpoint sees the results after
// every run, one run more each time, then once more at the end with the
// final state; and that a checkpoint error stops the scenario and is
// returned.
func TestRunCheckpoints(t *testing.T) {
	errDisk := errors.New("disk full")
	tests := []struct {
		name   string
		failAt int // checkpoint call that fails; 0 for none
		// Runs seen by each checkpoint call, and Complete at the last.
		wantSeen     []int
		wantComplete bool
		wantUps      int
	}{
		{name: "after every run", wantSeen: []int{1, 2, 3, 4, 4}, wantComplete: true, wantUps: 4},
		{name: "error stops the loop", failAt: 2, wantSeen: []int{1, 2, 2}, wantUps: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testScenario(t, 2, "alpha", "beta")
			want := planned(s)
			var seen []int
			var last results.Results
			checkpoint := func(r *results.Results) error {
				seen = append(seen, len(r.Runs))
				last = *r
				// The runs so far, in order.
				for i, run := range r.Runs {
					if run.ID != want[i].ID {
						t.Errorf("checkpoint %d: run %d is %s, want %s", len(seen), i+1, run.ID, want[i].ID)
					}
				}
				if len(seen) == tt.failAt {
					return errDisk
				}
				return nil
			}
			d := &fakedriver.Driver{}
			res, err := harness.Run(context.Background(), s, d, harness.WithCheckpoint(checkpoint))
			if tt.failAt == 0 && err != nil {
				t.Fatal(err)
			}
			if tt.failAt != 0 {
				if !errors.Is(err, errDisk) {
					t.Fatalf("Run returned %v, want the checkpoint's error", err)
				}
				if res.Complete || !strings.Contains(res.Error, errDisk.Error()) {
					t.Errorf("complete=%v error=%q, want incomplete with the checkpoint's error", res.Complete, res.Error)
				}
				if last.Complete || last.Error == "" {
					t.Errorf("last checkpoint saw complete=%v error=%q, want the final, failed state", last.Complete, last.Error)
				}
			}
			if !reflect.DeepEqual(seen, tt.wantSeen) {
				t.Errorf("checkpoints saw %v runs, want %v", seen, tt.wantSeen)
			}
			if last.Complete != tt.wantComplete {
				t.Errorf("last checkpoint saw complete=%v, want %v", last.Complete, tt.wantComplete)
			}
			checkRuns(t, res.Runs, want[:tt.wantSeen[len(tt.wantSeen)-1]])
			checkDowns(t, d, tt.wantUps)
		})
	}
}

// TestRunPartialResultsOnError makes run k fail at each step that can fail
// and checks that Run keeps runs 1..k-1, says why it stopped, returns an
// error that wraps the driver's, and took down every deployment that came
// up.
func TestRunPartialResultsOnError(t *testing.T) {
	const k = 3 // of 4 runs
	errBoom := errors.New("boom")
	tests := []struct {
		name   string
		driver func() *fakedriver.Driver
		wantUp int // deployments that came up
	}{
		{
			name: "up",
			driver: func() *fakedriver.Driver {
				return &fakedriver.Driver{UpErr: func(n int, _ topologies.Plan) error {
					if n == k {
						return fmt.Errorf("fake: start: %w", errBoom)
					}
					return nil
				}}
			},
			wantUp: k - 1,
		},
		{
			name: "attack",
			driver: func() *fakedriver.Driver {
				return &fakedriver.Driver{Attack: func(_ context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
					if n == k {
						return nil, errBoom
					}
					return fakedriver.Measurement(time.Millisecond), nil
				}}
			},
			wantUp: k,
		},
		{
			name: "stats",
			driver: func() *fakedriver.Driver {
				return &fakedriver.Driver{Stats: func(n int, _ topologies.Plan) (harness.Stats, error) {
					if n == k {
						return harness.Stats{}, errBoom
					}
					return harness.Stats{}, nil
				}}
			},
			wantUp: k,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testScenario(t, 2, "alpha", "beta")
			want := planned(s)
			d := tt.driver()
			var seen []int
			res, err := harness.Run(context.Background(), s, d, checkpoints(&seen))
			if !errors.Is(err, errBoom) {
				t.Fatalf("Run returned %v, want an error wrapping %v", err, errBoom)
			}
			if res == nil {
				t.Fatal("no results with the error")
			}
			checkRuns(t, res.Runs, want[:k-1])
			if res.Complete || res.Error != err.Error() {
				t.Errorf("complete=%v error=%q, want incomplete with error %q", res.Complete, res.Error, err)
			}
			if want := []int{1, 2, 2}; !reflect.DeepEqual(seen, want) {
				t.Errorf("checkpoints saw %v runs, want %v: one per finished run, then the partial results", seen, want)
			}
			if n := len(d.Plans()); n != k {
				t.Errorf("Up called %d times, want %d: the scenario went on after the error", n, k)
			}
			checkDowns(t, d, tt.wantUp)
		})
	}
}

// TestRunPartialResultsOnCancel cancels the context while run k's load is
// on. The finished runs stay, the interrupted one is dropped, and the
// deployment still goes down, with a context of its own that is live but
// bounded by DefaultTeardown.
func TestRunPartialResultsOnCancel(t *testing.T) {
	const k = 3 // of 4 runs
	s := testScenario(t, 2, "alpha", "beta")
	want := planned(s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	attacking := make(chan struct{})
	d := &fakedriver.Driver{Attack: func(ctx context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
		if n < k {
			return fakedriver.Measurement(time.Millisecond), nil
		}
		close(attacking)
		<-ctx.Done()
		// What a real generator returns: what it recorded so far.
		return fakedriver.Measurement(time.Millisecond), ctx.Err()
	}}
	var seen []int
	type outcome struct {
		res *results.Results
		err error
	}
	done := make(chan outcome)
	go func() {
		res, err := harness.Run(ctx, s, d, checkpoints(&seen))
		done <- outcome{res, err}
	}()
	<-attacking
	cancel()
	out := <-done

	if !errors.Is(out.err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", out.err)
	}
	checkRuns(t, out.res.Runs, want[:k-1])
	if out.res.Complete || out.res.Error == "" {
		t.Errorf("complete=%v error=%q, want incomplete with the reason", out.res.Complete, out.res.Error)
	}
	if want := []int{1, 2, 2}; !reflect.DeepEqual(seen, want) {
		t.Errorf("checkpoints saw %v runs, want %v: one per finished run, then the partial results", seen, want)
	}
	if n := len(d.Plans()); n != k {
		t.Errorf("Up called %d times after cancellation during run %d", n, k)
	}
	checkDowns(t, d, k)

	down := d.Deployments()[k-1].FirstDown()
	if down.Err != nil {
		t.Errorf("Down of the interrupted run got a context already done (%v): it could not drain", down.Err)
	}
	if !down.Bounded {
		t.Fatal("Down of the interrupted run got a context without a deadline: it could hang forever")
	}
	if left := down.Deadline.Sub(down.At); left <= 0 || left > harness.DefaultTeardown {
		t.Errorf("Down's deadline was %s away, want in (0, %s]", left, harness.DefaultTeardown)
	}
}

// TestRunProgress checks that every run reports a start before its Up and
// a done after its Down, with its position, its name and, when done, the
// run itself.
func TestRunProgress(t *testing.T) {
	s := testScenario(t, 2, "alpha", "beta")
	want := planned(s)
	d := &fakedriver.Driver{}
	var events []harness.Progress
	res, err := harness.Run(context.Background(), s, d, harness.WithProgress(d.Progress(&events)))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2*len(want) {
		t.Fatalf("%d progress events, want %d (a start and a done per run)", len(events), 2*len(want))
	}
	var wantLog []string
	for i, w := range want {
		wantLog = append(wantLog, "start "+w.ID, "up "+w.ID, "down "+w.ID, "done "+w.ID)
		for j, ev := range events[2*i : 2*i+2] {
			done := j == 1
			if ev.Index != i+1 || ev.Total != len(want) || ev.ID != w.ID || ev.Variant != w.Variant || ev.Rep != w.Rep || ev.Done != done {
				t.Errorf("event %d = %+v, want index %d/%d, %s (variant %s, rep %d), done=%v",
					2*i+j, ev, i+1, len(want), w.ID, w.Variant, w.Rep, done)
			}
			switch {
			case !done && ev.Run != nil:
				t.Errorf("start event of %s carries a run", w.ID)
			case done && ev.Run == nil:
				t.Errorf("done event of %s carries no run", w.ID)
			case done && (ev.Run.ID != w.ID || ev.Run.Rep != w.Rep || ev.Run.Requests != res.Runs[i].Requests):
				t.Errorf("done event of %s carries run %s rep %d", w.ID, ev.Run.ID, ev.Run.Rep)
			}
		}
	}
	if got := d.Log(); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("progress and driver calls:\n  %q\nwant:\n  %q", got, wantLog)
	}
}

// TestRunCarriesStats checks that a run holds the deployment's counters:
// the proxy's and engine's as returned, and one Worker per worker joining
// the workers' own counters with the responses the client attributed to
// each (Measurement.ByWorker). Counters for unknown worker indexes are
// dropped.
func TestRunCarriesStats(t *testing.T) {
	s := testScenario(t, 1, "alpha")
	proxy := &results.ProxyStats{Policy: "least_conn", Mode: "l7", Decisions: 100, ClientConns: 4}
	engine := &results.EngineStats{Engine: "nginx", Nginx: &results.NginxStatus{Requests: 100}}
	d := &fakedriver.Driver{Stats: func(int, topologies.Plan) (harness.Stats, error) {
		return harness.Stats{
			// Out of index order, worker 1 missing, one index out of range.
			Workers: []results.WorkerStats{
				{Index: 2, Requests: 21, Connections: 2, MaxQueue: 3},
				{Index: 0, Requests: 52, Connections: 1, MaxQueue: 1},
				{Index: fakedriver.Workers, Requests: 999},
				{Index: -1, Requests: 999},
			},
			Proxy:  proxy,
			Engine: engine,
		}, nil
	}}
	res, err := harness.Run(context.Background(), s, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(res.Runs))
	}
	run := res.Runs[0]
	wantWorkers := []results.Worker{
		{Index: 0, Responses: fakedriver.ByWorker()[0], Requests: 52, Connections: 1, MaxQueue: 1},
		{Index: 1, Responses: fakedriver.ByWorker()[1]},
		{Index: 2, Responses: fakedriver.ByWorker()[2], Requests: 21, Connections: 2, MaxQueue: 3},
	}
	if !reflect.DeepEqual(run.Workers, wantWorkers) {
		t.Errorf("workers:\n  %+v\nwant:\n  %+v", run.Workers, wantWorkers)
	}
	if run.Proxy != proxy || run.Engine != engine {
		t.Errorf("proxy %+v engine %+v, want the deployment's %+v and %+v", run.Proxy, run.Engine, proxy, engine)
	}
	if entry := d.Plans()[0].Entry; run.Entry != entry || run.Entry == "" {
		t.Errorf("entry %q, want the plan's %q", run.Entry, entry)
	}
	if run.Requests != 100 || run.Summary != run.Latency.Summarize() {
		t.Errorf("requests %d summary %+v: the measurement was not carried", run.Requests, run.Summary)
	}
}

// TestRunAttackerGetsVariantWorkload checks what Run hands a deployment's
// Attacker: the workload of each variant (its own client model when it
// has one) in the run's round (scenario.Scenario.WorkloadFor), the same
// seed for every variant of a round and another in each round, round 1's
// the file's; and that each run records its seed.
func TestRunAttackerGetsVariantWorkload(t *testing.T) {
	s := testScenario(t, 2, "alpha")
	churn := scenario.Variant{Name: "churn", Topology: scenario.ReusePort,
		Clients: &workloads.Clients{Connections: 7, RequestsPerConn: 1}}
	s.Variants = append(s.Variants, churn)
	s = s.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	d := &fakedriver.Driver{}
	res, err := harness.Run(context.Background(), s, d)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]results.Run{}
	for _, r := range res.Runs {
		runs[r.ID] = r
	}
	seeds := map[int]uint64{} // by round
	for _, dep := range d.Deployments() {
		plan := dep.Plan()
		spec, _ := dep.Spec()
		v := s.Variants[0]
		if plan.Variant == churn.Name {
			v = s.Variants[1]
		}
		run, ok := runs[plan.ID]
		if !ok {
			t.Fatalf("deployment %s has no run in the results", plan.ID)
		}
		if want := s.WorkloadFor(v, run.Rep); !reflect.DeepEqual(spec, want) {
			t.Errorf("%s attacked with %+v, want %+v", plan.ID, spec, want)
		}
		if run.Seed != spec.Seed {
			t.Errorf("%s records seed %d, attacked with %d", run.ID, run.Seed, spec.Seed)
		}
		if seed, ok := seeds[run.Rep]; ok && seed != spec.Seed {
			t.Errorf("round %d: seeds %d and %d, want one per round", run.Rep, seed, spec.Seed)
		}
		seeds[run.Rep] = spec.Seed
	}
	if n := len(d.Deployments()); n != 4 {
		t.Errorf("%d deployments, want 4", n)
	}
	if seeds[1] != s.Workload.Seed || seeds[2] == seeds[1] {
		t.Errorf("seeds by round %v: want the file's (%d) in round 1 and another in round 2", seeds, s.Workload.Seed)
	}
}

// TestRunDescribeRefusesBeforeAnyRun: a driver's Describe error (an engine
// it cannot find) stops the scenario before the first Up, with the error
// in the results.
func TestRunDescribeRefusesBeforeAnyRun(t *testing.T) {
	s := testScenario(t, 2, "alpha")
	d := &fakedriver.Driver{DescribeErr: errors.New("no nginx here")}
	res, err := harness.Run(context.Background(), s, d)
	if err == nil || !strings.Contains(err.Error(), "no nginx here") || res.Error == "" || res.Complete {
		t.Fatalf("err %v, results error %q complete %v: want Describe's error, recorded", err, res.Error, res.Complete)
	}
	if n := len(d.Plans()); n != 0 {
		t.Errorf("%d Ups after Describe failed, want none", n)
	}
}

// TestRunJudgesValidity checks that Run judges each run against the
// scenario's own Validity: a send lag p99 beyond MaxSendLagP99 makes the
// run invalid and says so.
func TestRunJudgesValidity(t *testing.T) {
	tests := []struct {
		name      string
		bound     time.Duration // Validity.MaxSendLagP99; 0 for the default
		lag       time.Duration
		wantValid bool
	}{
		{name: "lag within default", lag: time.Millisecond, wantValid: true},
		{name: "lag beyond default", lag: 4 * scenario.DefaultMaxSendLagP99, wantValid: false},
		{name: "same lag within a looser bound", bound: 8 * scenario.DefaultMaxSendLagP99, lag: 4 * scenario.DefaultMaxSendLagP99, wantValid: true},
		{name: "lag beyond a tighter bound", bound: 500 * time.Microsecond, lag: time.Millisecond, wantValid: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testScenario(t, 1, "alpha")
			if tt.bound != 0 {
				s.Validity.MaxSendLagP99 = tt.bound
			}
			d := &fakedriver.Driver{Attack: func(context.Context, int, topologies.Plan) (*results.Measurement, error) {
				return fakedriver.Measurement(tt.lag), nil
			}}
			res, err := harness.Run(context.Background(), s, d)
			if err != nil {
				t.Fatal(err)
			}
			run := res.Runs[0]
			if run.Valid != tt.wantValid {
				t.Fatalf("valid=%v (reasons %q), want %v", run.Valid, run.Invalid, tt.wantValid)
			}
			if tt.wantValid && len(run.Invalid) != 0 {
				t.Errorf("valid run with reasons %q", run.Invalid)
			}
			if !tt.wantValid && (len(run.Invalid) != 1 || !strings.Contains(run.Invalid[0], "send lag p99")) {
				t.Errorf("reasons %q, want one about the send lag p99", run.Invalid)
			}
		})
	}
}

// TestRunRecordsFailedRun: a deployment whose Stats reports a dead process
// (with an error reading another's counters) yields a recorded run, marked
// invalid with the dead process first among the reasons, and the scenario
// goes on: every run done, complete, no error. Without a dead process a
// Stats error still stops the scenario.
func TestRunRecordsFailedRun(t *testing.T) {
	s := testScenario(t, 2, "alpha")
	dead := results.Failure{Process: "workers: worker 1 (pid 42)", Exit: "signal: killed", LogTail: []string{"prefork: worker 1 (pid 42) exited: signal: killed"}}
	d := &fakedriver.Driver{Stats: func(n int, _ topologies.Plan) (harness.Stats, error) {
		if n == 1 {
			return harness.Stats{Dead: []results.Failure{dead}}, errors.New("stats of proxy: connection refused")
		}
		return harness.Stats{}, nil
	}}
	var seen []int
	res, err := harness.Run(context.Background(), s, d, checkpoints(&seen))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs, want both", res.Complete, len(res.Runs))
	}
	failed, next := res.Runs[0], res.Runs[1]
	if failed.Valid || !reflect.DeepEqual(failed.Failed, []results.Failure{dead}) {
		t.Errorf("failed run: valid=%v failed=%+v", failed.Valid, failed.Failed)
	}
	want := []string{"failed: workers: worker 1 (pid 42) died (signal: killed)", "failed: stats of proxy: connection refused"}
	if len(failed.Invalid) < 2 || !reflect.DeepEqual(failed.Invalid[:2], want) {
		t.Errorf("reasons %q, want %q first", failed.Invalid, want)
	}
	if failed.Requests != 100 {
		t.Errorf("the failed run's measurement was not kept: %d requests", failed.Requests)
	}
	if !next.Valid || len(next.Failed) != 0 {
		t.Errorf("next run: valid=%v failed=%v %q", next.Valid, next.Failed, next.Invalid)
	}
	if deps := d.Deployments(); len(deps) != 2 || deps[0].Downs() != 1 || deps[1].Downs() != 1 {
		t.Errorf("deployments %d, each must be taken down once", len(deps))
	}

	d = &fakedriver.Driver{Stats: func(int, topologies.Plan) (harness.Stats, error) {
		return harness.Stats{}, errors.New("stats of proxy: connection refused")
	}}
	res, err = harness.Run(context.Background(), s, d)
	if err == nil || len(res.Runs) != 0 {
		t.Errorf("a stats error with nothing dead: %v, %d runs; want the error and no run", err, len(res.Runs))
	}
}

// TestRunUntilDecided: with WithRounds, Run asks Stop after every round
// from Min on and ends at the first decision, planning only the rounds it
// made; without a decision it makes Max rounds and says so, naming what
// the last look left undecided; a budget that one more round would pass
// stops it before that round, naming the same.
func TestRunUntilDecided(t *testing.T) {
	s := testScenario(t, 2, "alpha", "beta")
	var asked []int
	d := &fakedriver.Driver{}
	res, err := harness.Run(context.Background(), s, d, harness.WithRounds(harness.Rounds{Min: 3, Max: 10, Stop: func(res *results.Results, round int) harness.Look {
		asked = append(asked, round)
		if len(res.Runs) != 2*round {
			t.Errorf("asked after round %d with %d runs", round, len(res.Runs))
		}
		return harness.Look{Decided: round == 5, Reason: "decided", Undecided: []string{"not yet"}}
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(asked, []int{3, 4, 5}) || len(res.Runs) != 10 || len(res.Order) != 10 || !res.Complete {
		t.Fatalf("asked %v, %d runs, %d planned, complete %v", asked, len(res.Runs), len(res.Order), res.Complete)
	}
	if st := res.Stop; st == nil || !st.Decided || st.Rounds != 5 || st.MaxRounds != 10 || st.Reason != "decided" || st.Undecided != nil {
		t.Errorf("stop %+v", res.Stop)
	}

	undecided := func(_ *results.Results, round int) harness.Look {
		return harness.Look{Undecided: []string{fmt.Sprintf("claim x after %d", round), "p99 of b vs a"}}
	}
	res, _ = harness.Run(context.Background(), s, &fakedriver.Driver{}, harness.WithRounds(harness.Rounds{Min: 3, Max: 4, Stop: undecided}))
	if st := res.Stop; len(res.Runs) != 8 || st == nil || st.Decided || st.Rounds != 4 ||
		st.Reason != "not decided within the 4 rounds allowed; undecided at the last look: claim x after 4; p99 of b vs a" ||
		!reflect.DeepEqual(st.Undecided, []string{"claim x after 4", "p99 of b vs a"}) {
		t.Errorf("undecided: %d runs, stop %+v", len(res.Runs), st)
	}

	slow := &fakedriver.Driver{Attack: func(ctx context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
		time.Sleep(20 * time.Millisecond) // a run's load takes time; the budget is ten of them
		return fakedriver.Measurement(time.Millisecond), nil
	}}
	res, _ = harness.Run(context.Background(), s, slow, harness.WithRounds(harness.Rounds{Min: 3, Max: 10, Budget: 200 * time.Millisecond, Stop: undecided}))
	if st := res.Stop; st == nil || st.Decided || st.Rounds >= 10 || len(res.Runs) != 2*st.Rounds || len(res.Order) != len(res.Runs) || !strings.Contains(st.Reason, "budget") {
		t.Errorf("budget: %d runs of %d planned, stop %+v", len(res.Runs), len(res.Order), st)
	} else if st.Rounds >= 3 && (!strings.HasSuffix(st.Reason, fmt.Sprintf("; undecided at the last look: claim x after %d; p99 of b vs a", st.Rounds)) || len(st.Undecided) != 2) {
		t.Errorf("budget: the last look's undecided are not named: %+v", st)
	}
	// A round of one variant is one run, the round's first and last.
	res, _ = harness.Run(context.Background(), testScenario(t, 2, "alpha"), slow, harness.WithRounds(harness.Rounds{Min: 3, Max: 30, Budget: 200 * time.Millisecond, Stop: undecided}))
	if st := res.Stop; st == nil || st.Decided || st.Rounds >= 30 || len(res.Runs) != st.Rounds || !strings.Contains(st.Reason, "budget") {
		t.Errorf("budget, one variant: %d runs, stop %+v", len(res.Runs), st)
	}
}

// TestRunRetriesInvalidRuns: with WithRetries(2), a run the generator
// fell behind in is made again at once, in its round, until it is valid or
// two retries are spent; the invalid attempts stay, the retries' IDs are
// in the order after their run's, and a round with no retry needed is
// untouched. Without the option nothing is made again.
func TestRunRetriesInvalidRuns(t *testing.T) {
	s := testScenario(t, 2, "alpha", "beta")
	behind := 4 * scenario.DefaultMaxSendLagP99
	// Attacks: round 1's first run invalid, its retry valid; its second
	// valid; round 2's first valid, its second invalid three times (two
	// retries, still invalid).
	lags := map[int]time.Duration{1: behind, 5: behind, 6: behind, 7: behind}
	newDriver := func() *fakedriver.Driver {
		return &fakedriver.Driver{Attack: func(_ context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
			return fakedriver.Measurement(max(lags[n], time.Millisecond)), nil
		}}
	}
	var events []harness.Progress
	d := newDriver()
	res, err := harness.Run(context.Background(), s, d, harness.WithRetries(2), harness.WithProgress(d.Progress(&events)))
	if err != nil {
		t.Fatal(err)
	}
	p := ids(planned(s))
	want := []string{p[0], p[0] + "-retry1", p[1], p[2], p[3], p[3] + "-retry1", p[3] + "-retry2"}
	if got := runIDs(res.Runs); !slices.Equal(got, want) {
		t.Fatalf("runs %q, want %q", got, want)
	}
	if !slices.Equal(res.Order, want) {
		t.Errorf("order %q, want %q", res.Order, want)
	}
	valid := []bool{false, true, true, true, false, false, false}
	for i, r := range res.Runs {
		if r.Valid != valid[i] {
			t.Errorf("%s valid=%v, want %v", r.ID, r.Valid, valid[i])
		}
		if wantRep := []int{1, 1, 1, 2, 2, 2, 2}[i]; r.Rep != wantRep {
			t.Errorf("%s in round %d, want %d", r.ID, r.Rep, wantRep)
		}
	}
	if last := events[len(events)-1]; last.Index != 7 || last.Total != 7 || !last.Done {
		t.Errorf("last progress %+v, want run 7 of 7 done", last)
	}
	checkDowns(t, d, 7)
	// Three attempts were made again (the last of round 2's second run,
	// still invalid, was not).
	if got := harness.Remade(res); !maps.Equal(got, map[string]int{harness.CauseBehind: 3}) {
		t.Errorf("Remade = %v, want 3 runs, the generator fell behind", got)
	}
	d = newDriver()
	res, err = harness.Run(context.Background(), s, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(res.Runs); len(got) != 4 {
		t.Errorf("without retries: runs %q, want the 4 planned", got)
	}
	if got := harness.Remade(res); got != nil {
		t.Errorf("without retries: Remade = %v, want none", got)
	}
}

// TestBuildsRunTheirExecutables: a variant of a Build runs that build's
// executable; with the empty name mapped, the variants of this build run
// that one (a copy of this build), and without it the driver's own.
func TestBuildsRunTheirExecutables(t *testing.T) {
	s := testScenario(t, 1, "a", "b")
	s.Variants[1].Name, s.Variants[1].Build = "a@base", "base"
	for _, tc := range []struct {
		name   string
		builds map[string]string
		want   map[string]string // variant: the executable of its processes
	}{
		{"base only", map[string]string{"base": "/b/lbbench"}, map[string]string{"a": "", "a@base": "/b/lbbench"}},
		{"a copy of this build", map[string]string{"base": "/b/lbbench", "": "/b/lbbench-this"}, map[string]string{"a": "/b/lbbench-this", "a@base": "/b/lbbench"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakedriver.Driver{}
			if _, err := harness.Run(context.Background(), s, d, harness.WithBuilds(tc.builds)); err != nil {
				t.Fatal(err)
			}
			if len(d.Plans()) != 2 {
				t.Fatalf("%d plans, want 2", len(d.Plans()))
			}
			for _, p := range d.Plans() {
				for _, proc := range p.Processes {
					if want := tc.want[p.Variant]; proc.Exe != want {
						t.Errorf("%s: its %s process runs %q, want %q", p.ID, proc.Role, proc.Exe, want)
					}
				}
			}
		})
	}
}

// TestRunUntilDecidedOnSchedule: with At, Stop is asked only after the
// scheduled rounds; the budget's last round, passed over by the schedule,
// is looked at all the same, and the scheduled looks are recorded.
func TestRunUntilDecidedOnSchedule(t *testing.T) {
	s := testScenario(t, 2, "alpha", "beta")
	at := func(round int) bool { return round%4 == 0 } // 4, 8, 12
	var asked []int
	stop := func(_ *results.Results, round int) harness.Look {
		asked = append(asked, round)
		return harness.Look{Undecided: []string{fmt.Sprintf("p99 after %d", round)}}
	}
	res, _ := harness.Run(context.Background(), s, &fakedriver.Driver{}, harness.WithRounds(harness.Rounds{Min: 3, Max: 12, At: at, Looks: 3, Stop: stop}))
	if st := res.Stop; !reflect.DeepEqual(asked, []int{4, 8, 12}) || st == nil || st.Decided || st.Rounds != 12 || st.Looks != 3 ||
		!reflect.DeepEqual(st.Undecided, []string{"p99 after 12"}) {
		t.Errorf("asked after %v, stop %+v; want after 4, 8 and 12, 3 looks", asked, st)
	}

	// Round 5's runs are slow: after it, one more round as long as the
	// mean would pass the budget. Looked at after 4, then after 5 (off
	// the schedule), which decides.
	asked = nil
	slow := &fakedriver.Driver{Attack: func(ctx context.Context, n int, _ topologies.Plan) (*results.Measurement, error) {
		d := 10 * time.Millisecond
		if n == 9 || n == 10 {
			d = 300 * time.Millisecond
		}
		time.Sleep(d)
		return fakedriver.Measurement(time.Millisecond), nil
	}}
	res, _ = harness.Run(context.Background(), s, slow, harness.WithRounds(harness.Rounds{Min: 3, Max: 12, At: at, Looks: 3, Budget: 800 * time.Millisecond,
		Stop: func(res *results.Results, round int) harness.Look {
			asked = append(asked, round)
			return harness.Look{Decided: !at(round), Reason: "decided at the budget's last round"}
		}}))
	if st := res.Stop; !reflect.DeepEqual(asked, []int{4, 5}) || st == nil || !st.Decided || st.Rounds != 5 || len(res.Runs) != 10 || st.Looks != 3 {
		t.Errorf("budget: asked after %v, %d runs, stop %+v; want after 4 and 5, decided after 5", asked, len(res.Runs), st)
	}
}
