package model_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
)

// This test is external (package model_test): package reports imports
// model (claims are judged against model balls), so an internal test of
// model cannot import reports.

// defaultScenario is the built-in default scenario, one second long.
func defaultScenario(t *testing.T) scenario.Scenario {
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
	return s
}

// TestSimulateResults writes and reads back a whole simulated scenario and
// renders the measured results' table from it.
func TestSimulateResults(t *testing.T) {
	s := defaultScenario(t)
	s.Repeat = 2
	var starts, ends int
	res, err := model.Simulate(context.Background(), s, model.WithVersion("v9", "abc"), model.WithProgress(func(p results.Progress) {
		if p.Done {
			ends++
		} else {
			starts++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Simulated || res.Env.Driver != model.Driver || !res.Complete || len(res.Runs) != 6 || starts != 6 || ends != 6 {
		t.Fatalf("simulated %v driver %q complete %v, %d runs, progress %d/%d", res.Simulated, res.Env.Driver, res.Complete, len(res.Runs), starts, ends)
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
	var buf bytes.Buffer
	sums, err := reports.Summarize(back)
	if err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteText(&buf, &reports.Doc{Results: back, Summaries: sums}); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Variants {
		if !strings.Contains(buf.String(), v.Name) {
			t.Errorf("table lacks %s:\n%s", v.Name, buf.String())
		}
	}
}
