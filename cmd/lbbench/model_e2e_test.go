package main

// End-to-end tests of "lbbench model": the built binary, as a user runs it.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/results"
)

func TestModelBalls(t *testing.T) {
	out, errOut, code := lbbench(t, "model", "balls", "--tasks", "5", "--workers", "3", "--json", "--trials", "5000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r model.BallsResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// 5 tasks on 3 workers, K = 2*ceil(5/3) = 4: a given worker gets 4 or 5
	// in C(5,4)*2 + 1 = 11 of 3^5 = 243 assignments, and two workers cannot
	// both, so some worker does in 33 of 243.
	random := r.Dispatch[0]
	if r.Spec.AtLeast != 4 || random.Given.Exact != "11/243" || random.Some.Exact != "11/81" || random.Simulated {
		t.Errorf("K=%d given %s some %s simulated %v; want 4, 11/243, 11/81, false", r.Spec.AtLeast, random.Given.Exact, random.Some.Exact, random.Simulated)
	}
	if p2c := r.Dispatch[2]; !p2c.Simulated || p2c.Trials != 5000 {
		t.Errorf("p2c simulated %v with %d trials", p2c.Simulated, p2c.Trials)
	}

	out, _, code = lbbench(t, "model", "balls", "--tasks", "16", "--workers", "8", "--trials", "2000")
	for _, want := range []string{"random (exact)", "least_loaded (exact)", "p2c (simulated, 2000 trials)", "36636447412167/281474976710656"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, table lacks %q:\n%s", code, want, out)
		}
	}

	_, errOut, code = lbbench(t, "model", "balls", "--tasks", "1000", "--workers", "8")
	if code != 2 || !strings.Contains(errOut, "tasks: must be between 1 and 400") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestModelSim simulates the default scenario, then reads the results back
// with "lbbench report", alone and beside a copy standing for a measured
// run.
func TestModelSim(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	out, errOut, code := lbbench(t, "model", "sim", "default", "--duration", "2s", "--repeat", "2", "-o", sim)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, want := range []string{"SIMULATED", "reuseport", "least_conn_keepalive", "least_conn_no_keepalive"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(errOut, "simulated in"); n != 6 {
		t.Errorf("%d progress lines, want 6:\n%s", n, errOut)
	}
	r, err := results.ReadFile(filepath.Join(sim, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Simulated || r.Env.Driver != "sim" || len(r.Runs) != 6 || !r.Complete {
		t.Fatalf("simulated %v driver %q runs %d complete %v", r.Simulated, r.Env.Driver, len(r.Runs), r.Complete)
	}
	summary, err := os.ReadFile(filepath.Join(sim, "summary.txt"))
	if err != nil || !strings.HasPrefix(string(summary), "SIMULATED") {
		t.Errorf("summary.txt: %v\n%s", err, summary)
	}

	// Side by side with another results directory, as with a measured one.
	other := filepath.Join(dir, "measured")
	if _, errOut, code := lbbench(t, "model", "sim", "default", "--duration", "1s", "--repeat", "1", "--variant", "reuseport", "-q", "-o", other); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	both := filepath.Join(dir, "both")
	if _, errOut, code := lbbench(t, "report", sim, other, "-o", both); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	html, err := os.ReadFile(filepath.Join(both, "report.html"))
	if err != nil || !strings.Contains(string(html), "sim/reuseport") || !strings.Contains(string(html), "measured/reuseport") {
		t.Errorf("combined report lacks sim/reuseport or measured/reuseport (%v)", err)
	}
}

// TestModelSimInterrupt: Ctrl-C (SIGINT to the real "lbbench model sim")
// once its first run is done stops the simulation: exit status 130, the
// runs finished before it saved in results.json (simulated, incomplete)
// and named in the message, and the report written as after a measured
// run's Ctrl-C. Each run simulates about a million requests, so the
// signal lands while a later one is being simulated.
func TestModelSimInterrupt(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	out := filepath.Join(t.TempDir(), "sim")
	cmd := binCmd(t, "model", "sim", "default", "--variant", "reuseport", "--repeat", "3",
		"--duration", "20s", "--rate", "50000", "--workers", "64", "--connections", "512", "-o", out)
	stderr, done := startWatched(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	var log testkit.Buffer
	waitLine(t, stderr, "[1/3]", &log, 2*time.Minute)
	cmd.Process.Signal(os.Interrupt)
	exitWithin(t, cmd, done, time.Minute, "Ctrl-C in model sim", "", &log)
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d after Ctrl-C, want 130\n%s", code, log.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("no results saved after Ctrl-C: %v\n%s", err, log.String())
	}
	n := len(res.Runs)
	if !res.Simulated || res.Complete || n < 1 || n > 2 {
		t.Fatalf("results after Ctrl-C: simulated %v complete %v, %d runs (want the 1 or 2 finished of 3)\n%s", res.Simulated, res.Complete, n, log.String())
	}
	for _, r := range res.Runs {
		if r.Requests == 0 || !r.Valid {
			t.Errorf("saved run %s: %d requests, valid %v: want a whole run", r.ID, r.Requests, r.Valid)
		}
	}
	if want := fmt.Sprintf("interrupted: %d of 3 runs saved", n); !strings.Contains(log.String(), want) {
		t.Errorf("message does not say %q:\n%s", want, log.String())
	}
	if summary, err := os.ReadFile(filepath.Join(out, "summary.txt")); err != nil || !strings.HasPrefix(string(summary), "SIMULATED") {
		t.Errorf("summary.txt after Ctrl-C: %v\n%s", err, summary)
	}
}

func TestModelSimErrors(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unknown variant":  {[]string{"--variant", "nope"}, `scenario default has no variant "nope"`},
		"bad override":     {[]string{"--workers", "0"}, "workers.count: at least 1 worker is required"},
		"unknown scenario": {[]string{"no-such-scenario"}, `no scenario file "no-such-scenario"`},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"model", "sim", "-o", filepath.Join(dir, "out")}, tc.args...)
			_, errOut, code := lbbench(t, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want 2 and %q:\n%s", code, tc.want, errOut)
			}
		})
	}
}
