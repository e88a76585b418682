package main

// End-to-end test of the bring-your-own-server example
// (scenarios/gunicorn.yaml): gunicorn and uvicorn run through the exec
// target of the shared topology.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
)

// requireTools skips the test when a tool is missing, or fails it when CI
// is set (scripts/setup.sh installs them there).
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI is set; scripts/setup.sh installs it)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// TestRunGunicornUvicorn runs a short version of scenarios/gunicorn.yaml:
// every run must complete without errors at the intended rate, every
// response must be attributed to a worker (busyapp's X-Worker), and the
// load must reach more than one of the server's worker processes.
func TestRunGunicornUvicorn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts gunicorn and uvicorn")
	}
	requireTools(t, "gunicorn", "uvicorn")
	apps, err := filepath.Abs("../../scenarios/apps")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "byos.yaml")
	os.WriteFile(scen, []byte(fmt.Sprintf(`name: byos
workers: {count: 3, concurrency: 1}
workload:
  arrival: {kind: poisson, rate: 150}
  duration: 2s
  classes:
    - {name: short, path: /work, weight: 90, service: {dist: exp, mean: 2ms}}
    - {name: long,  path: /work, weight: 10, service: {dist: fixed, value: 20ms}}
  clients: {connections: 16, keepalive: false}
  timeout: 5s
variants:
  - {name: builtin-idle, topology: shared, accept_when: idle}
  - name: gunicorn-sync
    topology: shared
    target: {exec: "gunicorn --workers {workers} --worker-class sync --bind fd://{fd} --log-level warning busyapp:app", probe: /healthz, dir: %q}
  - name: uvicorn
    topology: shared
    target: {exec: "uvicorn --fd {fd} --workers {workers} --no-access-log --log-level warning busyapp:asgi", probe: /healthz, dir: %q}
repeat: 1
`, apps, apps)), 0o644)
	out := filepath.Join(dir, "out")
	lbOK(t, "run", scen, "-o", out)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 3 {
		t.Fatalf("complete=%v with %d runs, want 3", res.Complete, len(res.Runs))
	}
	for _, run := range res.Runs {
		if run.Requests < 240 || run.Requests > 360 {
			t.Errorf("%s: %d requests in 2s at 150/s", run.ID, run.Requests)
		}
		if run.Errors != 0 {
			t.Errorf("%s: %d errors: %v", run.ID, run.Errors, run.ErrorKinds)
		}
		var attributed uint64
		busyWorkers := 0
		for _, w := range run.Workers {
			attributed += w.Responses
			if w.Responses > 0 {
				busyWorkers++
			}
		}
		if attributed != run.Requests {
			t.Errorf("%s: %d responses attributed to workers of %d", run.ID, attributed, run.Requests)
		}
		if busyWorkers < 2 {
			t.Errorf("%s: responses on %d worker(s), want the load spread over more than one: %+v", run.ID, busyWorkers, run.Workers)
		}
		// The apps stamp through scenarios/apps/lbbench_times.py: the wait
		// of every request is measured, the connection wait only where
		// the server says when it accepted (the built-in worker).
		if run.Wait == nil || uint64(run.Wait.TotalCount()) != run.Requests {
			t.Errorf("%s: wait measured for %v of %d requests", run.ID, run.Wait, run.Requests)
		} else if p50 := run.Wait.Quantile(0.5); p50 > 20*time.Millisecond {
			t.Errorf("%s: wait p50 %s at about 25%% utilization", run.ID, p50)
		}
		if builtin := run.Variant == "builtin-idle"; (run.ConnWait != nil) != builtin {
			t.Errorf("%s: connection wait %v; want it measured only for the built-in worker, which stamps its accepts", run.ID, run.ConnWait)
		}
		t.Logf("%s: %d requests, p99 %v, workers %+v", run.ID, run.Requests, run.Summary.P99, run.Workers)
	}
	waitNoProcs(t)
}
