package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
	"golang.org/x/sys/unix"
)

// hungRun runs scenario (two runs of 5 s) and, once the first run's
// workers serve, stops (SIGSTOP) the process victim picks. It checks that
// the run ends within a bound, exits 5 (runs failed) and leaves no lbbench
// process and not the stopped one, and returns both runs' results, the
// victim and lbbench's output.
func hungRun(t *testing.T, scenario string, victim func(t *testing.T, run int) int) (*results.Results, int, string) {
	t.Helper()
	res, pid, log, _ := faultRun(t, scenario, func(t *testing.T, run int) int {
		pid := victim(t, run)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		return pid
	})
	return res, pid, log
}

// faultRun runs scenario (two runs of 5 s) and applies fault once the
// first run's workers serve; fault returns a process that must be gone
// afterwards, or 0. It checks that the run ends within a bound, exits 5
// (runs failed) and leaves no lbbench process, and returns both runs'
// results, fault's pid, lbbench's output and the output directory.
func faultRun(t *testing.T, scenario string, fault func(t *testing.T, run int) int) (*results.Results, int, string, string) {
	t.Helper()
	dir := t.TempDir()
	scen := filepath.Join(dir, "hung.yaml")
	os.WriteFile(scen, []byte(strings.Replace(scenario, "duration: 1s", "duration: 5s", 1)), 0o644)
	out := filepath.Join(dir, "out")
	cmd := start(t, "run", scen, "-o", out, "-q")
	log := cmd.out
	waitRunServes(t, cmd.process.Pid, 50, 30*time.Second, log.String)
	pid := fault(t, cmd.process.Pid)
	begun := time.Now()
	select {
	case <-cmd.done:
		if code := testkit.ExitStatus(cmd.err); code != job.ExitFailedRuns {
			t.Fatalf("run: exit %d (%v), want 5: a run failed\n%s", code, cmd.err, log.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("run did not end 90 s after the fault:\n%s", log.String())
	}
	t.Logf("run ended %s after the fault", time.Since(begun).Round(time.Millisecond))
	waitNoProcs(t)
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); pid != 0 && err == nil {
		t.Errorf("the stopped process %d is still there", pid)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs, want both runs recorded; error %q\n%s", res.Complete, len(res.Runs), res.Error, log.String())
	}
	return res, pid, log.String(), out
}

// checkHung checks the first run failed naming process with an exit that
// says it stopped answering, its measurement kept, and the second run
// completed with nothing dead.
func checkHung(t *testing.T, res *results.Results, process, exit string) {
	t.Helper()
	failed, ok := res.Runs[0], res.Runs[1]
	if failed.Valid || len(failed.Failed) != 1 || failed.Failed[0].Process != process || failed.Failed[0].Exit != exit {
		t.Errorf("run with a stopped process: valid=%v failed=%+v, want %q: %q", failed.Valid, failed.Failed, process, exit)
	}
	if failed.Requests == 0 {
		t.Errorf("the failed run's measurement was not kept")
	}
	if ok.Requests == 0 || len(ok.Failed) != 0 {
		t.Errorf("the next run: requests=%d failed=%v (%q), want a completed run with nothing dead", ok.Requests, ok.Failed, ok.Invalid)
	}
}

// TestRunWorkerStoppedIsAFailedRun: SIGSTOP of one worker mid-attack (it
// is alive and answers nothing). Its supervisor reports it as not
// answering its stats; the run is recorded as failed with the reason and
// its measurement, the stopped worker is gone after the run, and the
// scenario's second run completes.
func TestRunWorkerStoppedIsAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two runs of 5 s")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	scen := "name: stop-worker\n" + smallWorkers + "variants:\n  - {name: rp, topology: reuseport}\nrepeat: 2\n"
	var victim int
	res, _, _ := hungRun(t, scen, func(t *testing.T, run int) int {
		admins := serveAdmins(run)
		if len(admins) != 1 {
			t.Fatalf("serve admins %v, want 1", admins)
		}
		victim = supervisorStatus(t, admins[0])[1].PID
		return victim
	})
	checkHung(t, res, "workers: worker 1 (pid "+strconv.Itoa(victim)+")",
		"stopped answering: no stats within 2s; it is stopped (SIGSTOP or a debugger)")
}

// TestRunProxyStoppedIsAFailedRun: SIGSTOP of the built-in proxy
// mid-attack. Its stats do not come within 5 s: the run is recorded as
// failed ("proxy (pid N)", stopped answering), the proxy is killed, the
// measurement is kept and the second run completes.
func TestRunProxyStoppedIsAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two runs of 5 s")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	scen := "name: stop-proxy\n" + smallWorkers + "variants:\n  - {name: lc, topology: proxy, proxy: {policy: least_conn}}\nrepeat: 2\n"
	res, pid, _ := hungRun(t, scen, func(t *testing.T, run int) int {
		proxies := childrenWithArg(run, "proxy")
		if len(proxies) != 1 {
			t.Fatalf("proxies %v, want 1", proxies)
		}
		return proxies[0]
	})
	checkHung(t, res, "proxy (pid "+strconv.Itoa(pid)+")",
		"stopped answering: no stats within 5s; it was stopped (SIGSTOP or a debugger); killed")
}

// childrenWithArg returns the pids of pid's live children whose first
// argument is sub (an lbbench subcommand).
func childrenWithArg(pid int, sub string) []int {
	var out []int
	for _, c := range childrenOf(pid, "") {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/cmdline")
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == sub {
			out = append(out, c)
		}
	}
	return out
}

// TestRunReuseportStrangerIsAFailedRun: a same-user process binds the
// reuseport workers' port with SO_REUSEPORT during the first run (the
// kernel lets it join their group and gives it a share of the
// connections). The run is recorded as failed, naming the port; the
// second run, without the stranger, completes. (An earlier lbbench let
// the stranger take 15 of 40 connections unnoticed.)
func TestRunReuseportStrangerIsAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two runs of 5 s")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	scen := "name: stranger\n" + smallWorkers + "variants:\n  - {name: rp, topology: reuseport}\nrepeat: 2\n"
	var port string
	res, _, _, _ := faultRun(t, scen, func(t *testing.T, run int) int {
		serves := childrenWithArg(run, prefork.ServeSubcommand)
		if len(serves) != 1 {
			t.Fatalf("serve processes %v, want 1", serves)
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(serves[0]) + "/cmdline")
		args := strings.Split(string(cmdline), "\x00")
		for i, a := range args[:len(args)-1] {
			if a == "--"+prefork.FlagPort {
				port = args[i+1]
			}
		}
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
			return serr
		}}
		ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatalf("join the workers' port %s: %v", port, err)
		}
		// Accept and drop: a stranger serving nothing. Closed when the
		// first run's stats have seen it, before the second run.
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		go func() {
			// Gone with the first run's serve, before the next one binds.
			for {
				if _, err := os.Stat("/proc/" + strconv.Itoa(serves[0])); err != nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			ln.Close()
		}()
		return 0
	})
	failed, ok := res.Runs[0], res.Runs[1]
	want := "1 listening sockets not the workers' joined their SO_REUSEPORT group and took a share of the connections"
	if failed.Valid || len(failed.Failed) != 1 || failed.Failed[0].Process != "port "+port || failed.Failed[0].Exit != want || !failed.Failed[0].Alive {
		t.Errorf("run with a stranger on the port: valid=%v failed=%+v, want port %s: %q", failed.Valid, failed.Failed, port, want)
	}
	if ok.Requests == 0 || len(ok.Failed) != 0 {
		t.Errorf("the next run: requests=%d failed=%v (%q), want a completed run with nothing wrong", ok.Requests, ok.Failed, ok.Invalid)
	}
}

// TestRunNginxStoppedIsAFailedRun: SIGSTOP of nginx's one worker process
// mid-attack (the master is alive, nothing answers, its stats included):
// the run is recorded as failed, the proxy "stopped answering" and
// killed, its measurement kept; the second run completes; no lbbench and
// no nginx process is left.
func TestRunNginxStoppedIsAFailedRun(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	nginx := nginxForFaults(t)
	scen := "name: ng-stop\n" + smallWorkers + "variants:\n  - {name: ng, topology: proxy, proxy: {engine: nginx, policy: least_conn, upstream_keepalive: false, threads: 1}}\nrepeat: 2\n"
	var stopped int
	res, _, _, out := faultRun(t, scen, func(t *testing.T, run int) int {
		// run -> guard (the lbbench binary) -> nginx master -> its worker.
		var workers []int
		for _, g := range childrenOf(run, bin) {
			for _, m := range childrenOf(g, nginx) {
				workers = append(workers, childrenOf(m, nginx)...)
			}
		}
		if len(workers) != 1 {
			t.Fatalf("nginx workers %v, want 1", workers)
		}
		stopped = workers[0]
		if err := syscall.Kill(stopped, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		return stopped
	})
	waitNoEngineProcs(t, out)
	failed, ok := res.Runs[0], res.Runs[1]
	if failed.Valid || len(failed.Failed) != 1 || !strings.HasPrefix(failed.Failed[0].Process, "proxy") ||
		!strings.HasPrefix(failed.Failed[0].Exit, "stopped answering") || !strings.HasSuffix(failed.Failed[0].Exit, "killed") {
		t.Errorf("run with nginx's worker stopped: valid=%v failed=%+v, want the proxy stopped answering and killed", failed.Valid, failed.Failed)
	}
	if failed.Requests == 0 {
		t.Errorf("the failed run's measurement was not kept")
	}
	if ok.Requests == 0 || len(ok.Failed) != 0 {
		t.Errorf("the next run: requests=%d failed=%v (%q), want a completed run with nothing dead", ok.Requests, ok.Failed, ok.Invalid)
	}
}
