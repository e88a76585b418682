package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
)

// supervisorStatus returns what the "lbbench serve" at admin reports of its
// workers (its /stats answers 503 once one died, with the same body).
func supervisorStatus(t *testing.T, admin string) []prefork.WorkerStatus {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep prefork.StatsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	return rep.Status
}

// TestRunWorkerKilledIsAFailedRun: SIGKILL of one worker of the real
// "lbbench run"'s first run, mid-attack. The run is recorded in
// results.json as failed (invalid, the dead worker named with "signal:
// killed"), the scenario goes on and completes its second run, the
// summary says so, the exit status is 5 (runs failed; the others are
// results), and
// nothing is left: no lbbench process, no listener on the workers' ports.
func TestRunWorkerKilledIsAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two runs of 5 s")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	dir := t.TempDir()
	scen := filepath.Join(dir, "kill.yaml")
	os.WriteFile(scen, []byte(strings.Replace(smallScenario, "duration: 1s", "duration: 5s", 1)), 0o644)
	out := filepath.Join(dir, "out")
	cmd := start(t, "run", scen, "-o", out, "-q")
	stdout, log := cmd.stdout, cmd.stderr

	// The first run's workers serve (the order is randomized: rp or lc);
	// kill worker 1.
	waitRunServes(t, cmd.process.Pid, 50, 30*time.Second, log.String)
	admins := serveAdmins(cmd.process.Pid)
	if len(admins) != 1 {
		t.Fatalf("serve admins %v, want 1", admins)
	}
	status := supervisorStatus(t, admins[0])
	if len(status) != 3 {
		t.Fatalf("status %+v, want 3 workers", status)
	}
	victim := status[1]
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	select {
	case <-cmd.done:
		if err := cmd.err; testkit.ExitStatus(err) != job.ExitFailedRuns {
			t.Fatalf("run: exit %d (%v), want 5: a run failed\n%s\n%s", testkit.ExitStatus(err), err, stdout.String(), log.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("run did not end:\n%s", log.String())
	}
	waitNoProcs(t)
	for _, s := range status {
		if c, err := net.DialTimeout("tcp", s.Endpoint, time.Second); err == nil {
			c.Close()
			t.Errorf("something still listens on worker %d's %s", s.Index, s.Endpoint)
		}
	}

	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs, want both runs recorded; error %q", res.Complete, len(res.Runs), res.Error)
	}
	failed, ok := &res.Runs[0], &res.Runs[1]
	wantProc := "workers: worker 1 (pid " + strconv.Itoa(victim.PID) + ")"
	if failed.Valid || len(failed.Failed) != 1 || failed.Failed[0].Process != wantProc || !strings.Contains(failed.Failed[0].Exit, "signal: killed") {
		t.Errorf("killed run: valid=%v failed=%+v, want invalid with %q died of signal: killed", failed.Valid, failed.Failed, wantProc)
	}
	if len(failed.Invalid) == 0 || !strings.HasPrefix(failed.Invalid[0], "failed: "+wantProc+" died (signal: killed") {
		t.Errorf("killed run's reasons %q", failed.Invalid)
	}
	if len(failed.Failed) == 1 && len(failed.Failed[0].LogTail) == 0 {
		t.Errorf("no log tail recorded for the dead worker")
	}
	if failed.Requests == 0 {
		t.Errorf("the failed run's measurement was not kept")
	}
	// The next run completed, nothing died in it. (Its validity, send lag
	// and rate, depends on how busy the machine is: not asserted.)
	if ok.Requests == 0 || len(ok.Failed) != 0 || slices.ContainsFunc(ok.Invalid, func(s string) bool { return strings.HasPrefix(s, "failed:") }) {
		t.Errorf("the next run: requests=%d failed=%v reasons %q, want a completed run with nothing dead", ok.Requests, ok.Failed, ok.Invalid)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.txt"))
	if !strings.Contains(string(summary), "failed: "+wantProc) || !strings.Contains(stdout.String(), "failed: "+wantProc) {
		t.Errorf("the summary does not name the dead worker:\n%s", summary)
	}
}

// childrenOf returns the pids of the live processes whose parent is pid
// and whose executable is exe ("" for any).
func childrenOf(pid int, exe string) []int {
	return testkit.PIDs(testkit.LiveProcs(func(p testkit.Proc) bool { return p.PPID == pid && (exe == "" || p.Exe == exe) }))
}

// TestRunNginxMasterKilledIsAFailedRun: SIGKILL of nginx's master during
// the first run (its workers would go on serving): the run is recorded as
// failed, naming nginx's master and "signal: killed"; the second run
// completes; no lbbench and no nginx process is left.
func TestRunNginxMasterKilledIsAFailedRun(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	nginx := nginxForFaults(t)
	scen := strings.NewReplacer("duration: 1s", "duration: 3s").Replace(`name: ng-kill
` + smallWorkers + `variants:
  - {name: ng, topology: proxy, proxy: {engine: nginx, policy: least_conn, upstream_keepalive: false}}
repeat: 2
`)
	res, _, _, out := faultRun(t, scen, func(t *testing.T, run int) int {
		// run -> guard (the lbbench binary) -> nginx master.
		var master []int
		for _, g := range childrenOf(run, bin) {
			master = append(master, childrenOf(g, nginx)...)
		}
		if len(master) != 1 {
			t.Fatalf("nginx masters %v, want 1", master)
		}
		if err := syscall.Kill(master[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		return master[0]
	})
	waitNoEngineProcs(t, out)
	failed, ok := res.Runs[0], res.Runs[1]
	want := "proxy: " + nginx + " (the engine's master process)"
	if failed.Valid || len(failed.Failed) != 1 || failed.Failed[0].Process != want || !strings.HasPrefix(failed.Failed[0].Exit, "signal: killed") {
		t.Errorf("run with nginx's master killed: valid=%v failed=%+v, want %q died of signal: killed", failed.Valid, failed.Failed, want)
	}
	if ok.Requests == 0 || len(ok.Failed) != 0 {
		t.Errorf("the next run: requests=%d failed=%v (%q), want a completed run with nothing dead", ok.Requests, ok.Failed, ok.Invalid)
	}
}

// nginxForFaults skips under -short (two runs with nginx) and returns
// nginx's resolved path: a failure in CI when it is not installed, a skip
// elsewhere.
func nginxForFaults(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: two runs with nginx")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("nginx is not installed (scripts/setup.sh installs it): %v", err)
		}
		t.Skip("nginx is not installed")
	}
	nginx, _ = filepath.EvalSymlinks(nginx)
	return nginx
}
