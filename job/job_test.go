package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/internal/testkit/fakedriver"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// The tests in this file exercise the job's logic alone (outputs checked
// first, checkpoints, comparison, claims, exit statuses): the fake driver
// (fakedriver.Driver) starts nothing and its deployments return synthetic
// measurements. That a job runs real processes is shown by cmd/lbbench's
// end-to-end tests.

// fake says how the fake driver's deployments answer: with resultstest's
// latency shape scaled by scale[variant] (1 when absent); dead names the
// runs (by plan ID prefix, "002") whose Stats report a dead worker;
// cancel, when set, is called with the run's ID at the start of every
// attack.
type fake struct {
	scale  map[string]float64
	dead   map[string]bool
	cancel func(id string)
	// round, when set, scales a variant's runs by round (from 1) in place
	// of scale; wait is how long every attack takes.
	round func(variant string, round int) float64
	wait  time.Duration
	// bursts, when set, gives every run's measurement the bursts it
	// returns for the run's plan ID.
	bursts func(id string) *results.Bursts
	// late names the attacks (counted from 1) whose requests were all
	// sent late: the generator fell behind, and the run is invalid.
	late map[int]bool
}

// driver is the shared fake driver, its hooks answering as f says.
func (f fake) driver() *fakedriver.Driver {
	return &fakedriver.Driver{
		Attack: func(ctx context.Context, n int, p topologies.Plan) (*results.Measurement, error) {
			if f.cancel != nil {
				f.cancel(p.ID)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			scale, ok := f.scale[p.Variant]
			if !ok {
				scale = 1
			}
			if f.round != nil {
				_, r, _ := strings.Cut(p.ID[strings.LastIndex(p.ID, "-"):], "-r")
				n, err := strconv.Atoi(r)
				if err != nil {
					return nil, fmt.Errorf("no round in run ID %q", p.ID)
				}
				scale = f.round(p.Variant, n)
			}
			time.Sleep(f.wait)
			m := resultstest.Run(p.Variant, scale, 0).Measurement
			m.IntendedRate, m.AchievedRate = 1000, 1000
			m.SendLag = results.NewHistogram()
			m.SendLag.RecordDuration(100 * time.Microsecond)
			if f.late[n] {
				m.SendLag.RecordDuration(4 * scenario.DefaultMaxSendLagP99)
			}
			m.Classes = []results.Class{{Name: "a", Requests: m.Requests, Latency: m.Latency}}
			if f.bursts != nil {
				m.Bursts = f.bursts(p.ID)
			}
			return &m, nil
		},
		Stats: func(_ int, p topologies.Plan) (harness.Stats, error) {
			if f.dead[p.ID[:3]] {
				return harness.Stats{Dead: []results.Failure{{Process: "workers: worker 1 (pid 42)", Exit: "signal: killed"}}}, nil
			}
			return harness.Stats{}, nil
		},
	}
}

// testScenario is a valid scenario of the named variants, repeated
// repeat times, with the given claims.
func testScenario(t *testing.T, repeat int, variants []string, claims ...scenario.Claim) scenario.Scenario {
	t.Helper()
	s := scenario.Scenario{
		Name:    "job",
		Workers: scenario.Workers{Count: 2},
		Workload: workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100},
			Duration: time.Second,
			Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		},
		Repeat: repeat,
		Claims: claims,
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

// options is a job of s into a fresh directory on d, its outputs in out.
func options(t *testing.T, s scenario.Scenario, d *fakedriver.Driver, out *bytes.Buffer) Options {
	t.Helper()
	return Options{
		Scenario: s, Out: filepath.Join(t.TempDir(), "out"), Dirs: []string{"logs"},
		Driver: func(context.Context) (harness.Driver, func(), error) { return d, func() {}, nil },
		Stdout: out, Stderr: out,
	}
}

func code(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return ExitPass
	}
	var je *Error
	if !errors.As(err, &je) {
		return ExitError
	}
	return je.Code
}

func TestRunWritesEverythingAndPasses(t *testing.T) {
	var out bytes.Buffer
	o := options(t, testScenario(t, 4, []string{"slow", "fast"}), fake{scale: map[string]float64{"fast": 0.5}}.driver(), &out)
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if !res.Complete || len(res.Runs) != 8 {
		t.Fatalf("complete %v, %d runs", res.Complete, len(res.Runs))
	}
	for _, f := range []string{"results.json", "summary.txt", "report.html", "summary.md", "verdicts.json", "comparison.md"} {
		if _, err := os.Stat(filepath.Join(o.Out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	saved, err := results.ReadFile(filepath.Join(o.Out, "results.json"))
	if err != nil || len(saved.Runs) != 8 {
		t.Fatalf("results.json: %v", err)
	}
	// The comparison is for information: every variant against the first.
	for _, want := range []string{"lbbench: scenario job: 8 runs", "comparison with the first variant, slow", "fast", "results: " + filepath.Join(o.Out, "results.json")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	vs, err := compare.ReadVerdicts(filepath.Join(o.Out, "verdicts.json"))
	if err != nil || len(vs) == 0 {
		t.Fatalf("verdicts: %v, %v", vs, err)
	}
}

// TestRemadeRunsInTheVerdictLine: a run the generator fell behind in,
// made again (run --retry-invalid), is counted with its cause in the line
// that states the verdict, printed, in comparison.md and in the step
// summary; the comparison uses its retry.
func TestRemadeRunsInTheVerdictLine(t *testing.T) {
	var out bytes.Buffer
	o := options(t, testScenario(t, 3, []string{"slow", "fast"}), fake{scale: map[string]float64{"fast": 0.5}, late: map[int]bool{2: true}}.driver(), &out)
	o.Harness = []harness.Option{harness.WithRetries(1)}
	o.StepSummary = filepath.Join(t.TempDir(), "summary.md")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if len(res.Runs) != 7 || res.Runs[1].Valid || !strings.HasSuffix(res.Runs[2].ID, "-retry1") || !res.Runs[2].Valid {
		t.Fatalf("runs %v: want the second invalid, then its valid retry", runIDs(res.Runs))
	}
	const note = "; 1 run re-made: " + harness.CauseBehind + " ×1)"
	line := ""
	for l := range strings.Lines(out.String()) {
		if strings.HasPrefix(l, "verdict: ") {
			line = l
		}
	}
	if !strings.HasSuffix(line, note+"\n") {
		t.Errorf("verdict line %q lacks %q:\n%s", line, note, out.String())
	}
	for _, f := range []string{filepath.Join(o.Out, "comparison.md"), o.StepSummary} {
		md, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(md), note+"\n") {
			t.Errorf("%s (%v) lacks %q:\n%s", f, err, note, md)
		}
	}
}

// runIDs are the IDs of runs, in order.
func runIDs(runs []results.Run) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

func TestOutputsCheckedBeforeTheDriver(t *testing.T) {
	var out bytes.Buffer
	o := options(t, testScenario(t, 1, []string{"a"}), fake{}.driver(), &out)
	if err := os.MkdirAll(filepath.Join(o.Out, "results.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	made := false
	o.Driver = func(context.Context) (harness.Driver, func(), error) {
		made = true
		return nil, nil, errors.New("unreachable")
	}
	res, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "results.json is a directory") || res != nil || made {
		t.Fatalf("err %v, results %v, driver made %v: want the output refused before anything", err, res, made)
	}
}

func TestFailedRunsExit(t *testing.T) {
	var out bytes.Buffer
	o := options(t, testScenario(t, 2, []string{"a", "b"}), fake{dead: map[string]bool{"002": true}}.driver(), &out)
	res, err := Run(context.Background(), o)
	if c := code(t, err); c != ExitFailedRuns || !strings.Contains(err.Error(), "1 of 4 runs failed") {
		t.Fatalf("exit %d (%v), want %d", c, err, ExitFailedRuns)
	}
	if !res.Complete || FailedRuns(res) != 1 || res.Runs[1].Valid {
		t.Errorf("complete %v, %d failed runs: the scenario must go on and record the failed run", res.Complete, FailedRuns(res))
	}
}

func TestClaimsExit(t *testing.T) {
	claim := scenario.Claim{Say: "a is twice as fast", Check: "p99(a) < 0.5 * p99(b)"}
	for _, tc := range []struct {
		name         string
		failOnClaims bool
		want         int
	}{{"reported only", false, ExitPass}, {"fail on claims", true, ExitClaims}} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := options(t, testScenario(t, 6, []string{"a", "b"}, claim), fake{}.driver(), &out)
			o.FailOnClaims = tc.failOnClaims
			_, err := Run(context.Background(), o)
			if c := code(t, err); c != tc.want {
				t.Fatalf("exit %d (%v), want %d\n%s", c, err, tc.want, out.String())
			}
			if !strings.Contains(out.String(), "FAILS") {
				t.Errorf("the failing claim is not shown:\n%s", out.String())
			}
		})
	}
}

func TestInterruptedKeepsFinishedRuns(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := fake{cancel: func(id string) {
		if strings.HasPrefix(id, "003") {
			cancel()
		}
	}}.driver()
	o := options(t, testScenario(t, 2, []string{"a", "b"}), d, &out)
	res, err := Run(ctx, o)
	if c := code(t, err); c != ExitInterrupted || !strings.Contains(err.Error(), "2 of 4 runs saved") {
		t.Fatalf("exit %d (%v), want %d saying 2 of 4 runs saved", c, err, ExitInterrupted)
	}
	saved, rerr := results.ReadFile(filepath.Join(o.Out, "results.json"))
	if rerr != nil || len(saved.Runs) != 2 || saved.Complete || res.Complete {
		t.Fatalf("results.json: %v, %d runs: want the 2 finished ones, incomplete", rerr, len(saved.Runs))
	}
}

func TestVerdictExit(t *testing.T) {
	vs := func(o compare.Outcome) []compare.Verdict {
		return []compare.Verdict{{Outcome: compare.Pass}, {Outcome: o}}
	}
	for _, tc := range []struct {
		outcome      compare.Outcome
		inconclusive string
		code         int
	}{
		{compare.Pass, "", 0}, {compare.Fail, "", 1}, {compare.Fail, "pass", 1},
		{compare.Inconclusive, "", 3}, {compare.Inconclusive, "pass", 0}, {compare.Inconclusive, "fail", 1},
	} {
		if c := code(t, VerdictExit(vs(tc.outcome), tc.inconclusive)); c != tc.code {
			t.Errorf("%s with --inconclusive=%q: exit %d, want %d", tc.outcome, tc.inconclusive, c, tc.code)
		}
	}
}

// TestUntilDecided: a large change is decided in a few rounds and the run
// stops there, recording why; the verdicts are the paired method's.
func TestUntilDecided(t *testing.T) {
	var out bytes.Buffer
	o := options(t, testScenario(t, 3, []string{"slow", "fast"}), fake{scale: map[string]float64{"fast": 0.5}}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 8
	o.Compare = compare.Options{Metrics: []string{results.MetricP99}}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	st := res.Stop
	if st == nil || !st.Decided || st.Rounds != compare.MinRounds || len(res.Runs) != 2*st.Rounds || len(res.Order) != len(res.Runs) {
		t.Fatalf("stop %+v, %d runs of %d planned", st, len(res.Runs), len(res.Order))
	}
	vs, err := compare.ReadVerdicts(filepath.Join(o.Out, "verdicts.json"))
	if err != nil || len(vs) != 1 || vs[0].Outcome != compare.Pass || vs[0].Method != compare.MethodPaired {
		t.Fatalf("verdicts %+v, %v", vs, err)
	}
	// The looks' comparison is recorded, so that judging the results
	// again gives these verdicts (lbbench compare).
	saved, err := results.ReadFile(filepath.Join(o.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if j := saved.Stop.Judging; j == nil || len(j.Metrics) != 1 || j.Metrics[0] != results.MetricP99 || j.Alpha != compare.DefaultAlpha || j.Tolerances[results.MetricP99] != compare.DefaultTolerance {
		t.Errorf("judging recorded %+v", saved.Stop.Judging)
	}
	for _, want := range []string{"until decided (3 to 8 rounds", "rounds: 3 of at most 8: every judged metric decided after 3 rounds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// No comparison to decide: refused up front.
	one := options(t, testScenario(t, 3, []string{"a"}), fake{}.driver(), &out)
	one.UntilDecided = true
	if _, err := Run(context.Background(), one); code(t, err) != ExitError || !strings.Contains(err.Error(), "--until-decided") {
		t.Errorf("one variant until decided: %v", err)
	}
}
