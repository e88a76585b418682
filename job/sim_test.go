package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
)

// simScenario is the built-in default scenario, one second long, with
// repeat rounds.
func simScenario(t *testing.T, repeat int) scenario.Scenario {
	t.Helper()
	data, err := scenarios.Get(scenarios.Default)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("default", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	s.Workload.Duration = time.Second
	s.Repeat = repeat
	return s
}

// TestSimulatorResults runs a whole simulated scenario through the run
// loop, writes it and reads it back, and renders the measured results'
// table from it: the results are marked simulated, every run is the
// model's run of its variant in its round's workload, and progress is
// reported before and after every run.
func TestSimulatorResults(t *testing.T) {
	s := simScenario(t, 2)
	var starts, ends, checkpoints int
	res, err := harness.Run(context.Background(), s, Simulator{}, harness.WithVersion("v9", "abc"),
		harness.WithCheckpoint(func(*results.Results) error { checkpoints++; return nil }),
		harness.WithProgress(func(p results.Progress) {
			if p.Done {
				ends++
			} else {
				starts++
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Simulated || res.Env.Driver != model.Driver || res.Env.Pinning != simPinning || !res.Complete || len(res.Runs) != 6 || starts != 6 || ends != 6 || checkpoints != 7 {
		t.Fatalf("simulated %v driver %q pinning %q complete %v, %d runs, progress %d/%d, %d checkpoints",
			res.Simulated, res.Env.Driver, res.Env.Pinning, res.Complete, len(res.Runs), starts, ends, checkpoints)
	}
	for _, r := range res.Runs {
		v := s.Variants[slicesIndex(s, r.Variant)]
		want, _, err := model.SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, r.Rep))
		if err != nil {
			t.Fatal(err)
		}
		if r.Seed != want.Seed || !reflect.DeepEqual(r.ByWorker, want.ByWorker) || r.Summary != want.Summary || !reflect.DeepEqual(r.Workers, want.Workers) || !r.Valid || r.Entry != want.Entry {
			t.Errorf("%s: seed %d, by worker %v, summary %+v, workers %+v, valid %v, entry %q; the model's run in round %d: %d, %v, %+v, %+v, entry %q",
				r.ID, r.Seed, r.ByWorker, r.Summary, r.Workers, r.Valid, r.Entry, r.Rep, want.Seed, want.ByWorker, want.Summary, want.Workers, want.Entry)
		}
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := res.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Simulated || back.Runs[0].Latency.TotalCount() != int64(back.Runs[0].Requests) || len(back.Runs[0].Intervals) == 0 {
		t.Errorf("read back: simulated %v, %d recorded of %d requests, %d intervals", back.Simulated, back.Runs[0].Latency.TotalCount(), back.Runs[0].Requests, len(back.Runs[0].Intervals))
	}
	doc, err := Report(back, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := reports.WriteText(&buf, doc); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Variants {
		if !strings.Contains(buf.String(), v.Name) {
			t.Errorf("table lacks %s:\n%s", v.Name, buf.String())
		}
	}
}

// slicesIndex is the index of the variant named name in s.
func slicesIndex(s scenario.Scenario, name string) int {
	for i, v := range s.Variants {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// TestSimulateJobInterrupted: a simulated job cancelled after its first
// run ends with ExitInterrupted and keeps that run in results.json, its
// table headed SIMULATED; a scenario the model cannot simulate is refused
// before anything is written.
func TestSimulateJobInterrupted(t *testing.T) {
	s := simScenario(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	stop := harness.WithProgress(func(p results.Progress) {
		if p.Done && p.Index == 1 {
			cancel()
		}
	})
	res, err := Run(ctx, Options{Scenario: s, Out: out, Simulate: true, Harness: []harness.Option{stop}, Stdout: &stdout, Stderr: &stderr})
	var je *Error
	if !errors.As(err, &je) || je.Code != ExitInterrupted || !strings.Contains(err.Error(), "1 of 6 runs saved") {
		t.Fatalf("got %v, want exit %d saying 1 of 6 runs saved", err, ExitInterrupted)
	}
	if res == nil || !res.Simulated || len(res.Runs) != 1 {
		t.Fatalf("results %+v, want the 1 simulated run finished", res)
	}
	back, err := results.ReadFile(filepath.Join(out, reports.ResultsFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Simulated || back.Complete || len(back.Runs) != 1 {
		t.Errorf("saved: simulated %v complete %v, %d runs; want 1 simulated run, incomplete", back.Simulated, back.Complete, len(back.Runs))
	}
	if !strings.HasPrefix(strings.TrimLeft(stdout.String(), "\n"), "SIMULATED") {
		t.Errorf("table not headed SIMULATED:\n%s", stdout.String())
	}
	if summary, err := os.ReadFile(filepath.Join(out, "summary.txt")); err != nil || !strings.HasPrefix(string(summary), "SIMULATED") {
		t.Errorf("summary.txt not headed SIMULATED (%v):\n%s", err, summary)
	}

	s.Workers.Target = &scenario.Target{Exec: "my-server --port {port}"}
	refused := filepath.Join(t.TempDir(), "refused")
	if _, err := Run(context.Background(), Options{Scenario: s, Out: refused, Simulate: true, Stdout: &stdout, Stderr: &stderr}); !errors.Is(err, model.ErrUnsupported) {
		t.Errorf("got %v, want model.ErrUnsupported", err)
	}
	if _, err := os.Stat(refused); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused simulation created %s (%v)", refused, err)
	}
}
