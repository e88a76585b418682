package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
)

// waitLine reads r until a line starts with prefix (copying everything to
// log), then copies the rest to log in the background.
func waitLine(t *testing.T, r io.Reader, prefix string, log *testkit.Buffer, timeout time.Duration) {
	t.Helper()
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		ok := false
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if !ok && strings.HasPrefix(sc.Text(), prefix) {
				ok = true
				found <- true
			}
		}
		if !ok {
			found <- false
		}
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("output ended before a line starting %q:\n%s", prefix, log.String())
		}
	case <-time.After(timeout):
		t.Fatalf("no line starting %q within %s:\n%s", prefix, timeout, log.String())
	}
}

// startWatched starts cmd with its standard output discarded and returns
// its standard error as a reader and a channel that receives Wait's result.
// Unlike StderrPipe, Wait here returns only after everything cmd wrote has
// been read, so a goroutine dump printed as cmd dies is not cut off.
func startWatched(t *testing.T, cmd *exec.Cmd) (io.Reader, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout = io.Discard
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		done <- err
	}()
	return pr, done
}

// exitWithin waits for cmd to exit and returns how long it took. If it
// takes longer than limit the test fails with what cmd printed and, so the
// failure says where it was stuck, its goroutines and those of the
// processes it started (SIGQUIT makes the Go runtime print every stack
// before it exits; theirs go to their logs in logDir).
func exitWithin(t *testing.T, cmd *exec.Cmd, done <-chan error, limit time.Duration, what, logDir string, log *testkit.Buffer) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(limit):
		// The processes the run started first: they write their stacks to
		// their logs, which lbbench then still has open.
		for _, p := range testkit.Descendants(cmd.Process.Pid) {
			syscall.Kill(p, syscall.SIGQUIT)
		}
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(100 * time.Millisecond) // waitLine's copier logs the last lines
		var logs strings.Builder
		if logDir != "" {
			files, _ := filepath.Glob(filepath.Join(logDir, "*.log"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				fmt.Fprintf(&logs, "\n--- %s:\n%s", f, b)
			}
		}
		t.Fatalf("still running %s after %s (stacks from SIGQUIT at the end):\n%s%s", limit, what, log.String(), logs.String())
	}
	return 0
}

// procsMatching lists live processes whose command line contains s.
func procsMatching(s string) []string {
	return testkit.Strings(testkit.LiveProcs(func(p testkit.Proc) bool { return strings.Contains(strings.Join(p.Args, "\x00"), s) }))
}

// lowRateScenario sends at 0.05 requests per second: a request at the
// start of each run and the next 20 s later, so each run lasts 20 s and
// spends it waiting for that second arrival.
const lowRateScenario = `name: low-rate
workers: {count: 2}
workload:
  arrival: {kind: constant, rate: 0.05}
  duration: 20500ms
  warmup: -1s
  classes:
    - {name: short, weight: 1, service: {value: 1ms}}
  clients: {connections: 2}
variants:
  - {name: rp, topology: reuseport}
repeat: 2
`

// TestRunInterruptLowRate: Ctrl-C (SIGINT to the real "lbbench run")
// during a 0.05/s run, while its generator waits 20 s for the next
// arrival, ends lbbench within 2 s, with exit status 130, the run that
// finished before saved in results.json, and no process left.
func TestRunInterruptLowRate(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: one run of 20 s first")
	}
	// Judges behaviour, not timing (its runs wait 20 s for an arrival, and
	// the exit within 2 s is TestRunDoubleInterruptKills's bound, there in
	// parallel too): runs beside the other parallel tests.
	t.Parallel()
	dir := t.TempDir()
	scen := filepath.Join(dir, "low.yaml")
	os.WriteFile(scen, []byte(lowRateScenario), 0o644)
	out := filepath.Join(dir, "out")
	cmd := binCmd(t, "run", scen, "-o", out)
	stderr, done := startWatched(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	var log testkit.Buffer
	// The second run's line: the first one is finished and saved.
	waitLine(t, stderr, "[2/2]", &log, 60*time.Second)
	// Its first request served: the generator now waits for the second,
	// due 20 s after it.
	waitRunServes(t, cmd.Process.Pid, 1, 30*time.Second, log.String)
	cmd.Process.Signal(os.Interrupt)
	took := exitWithin(t, cmd, done, 2*time.Second, "Ctrl-C in a 0.05/s run", filepath.Join(out, "logs"), &log)
	t.Logf("exited %s after Ctrl-C", took)
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d after Ctrl-C, want 130\n%s", code, log.String())
	}
	waitNoProcs(t)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("no results saved after Ctrl-C: %v\n%s", err, log.String())
	}
	if res.Complete || len(res.Runs) != 1 || res.Runs[0].Requests != 2 {
		t.Errorf("results after Ctrl-C: complete=%v, %d runs (want the 1 finished, with its 2 requests)", res.Complete, len(res.Runs))
	}
	if !strings.Contains(log.String(), "interrupted: 1 of 2 runs saved") {
		t.Errorf("message does not say the finished run was saved:\n%s", log.String())
	}
}

// stuckServer is an HTTP server on the socket lbbench serve hands it (fd
// 3) that ignores SIGTERM and SIGINT: its process manager's drain, and so
// the run's teardown, wait for it until their stop timeouts. Once it has
// answered 20 requests (the load, past the readiness probes) it creates
// the file named by its second argument.
const stuckServer = `import os, signal, socket, sys, threading, http.server
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
count, lock = [0], threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with lock:
            count[0] += 1
            if count[0] == 20:
                open(sys.argv[2], "w").close()
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H, bind_and_activate=False)
srv.socket.close()
srv.socket = socket.socket(fileno=int(sys.argv[1]))
srv.serve_forever()
`

// TestRunDoubleInterruptKills: the first Ctrl-C ends the attack, and the
// teardown then waits on a server that ignores SIGTERM (it would wait the
// 10 s stop timeout); a second Ctrl-C ends lbbench at once, killing that
// server: no lbbench process and no server process is left.
func TestRunDoubleInterruptKills(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts Python servers")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	py := pythonInterpreter(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "stuck_server.py")
	os.WriteFile(script, []byte(stuckServer), 0o644)
	scen := filepath.Join(dir, "stuck.yaml")
	os.WriteFile(scen, []byte(`name: stuck
workers:
  count: 1
  target:
    exec: "`+py+` `+script+` {fd} `+filepath.Join(dir, "loaded")+`"
    probe: /
workload:
  arrival: {kind: constant, rate: 50}
  duration: 60s
  warmup: -1s
  classes:
    - {name: any, path: /, weight: 1, service: {value: 0s}}
  clients: {connections: 2}
variants:
  - {name: rp, topology: reuseport}
repeat: 1
`), 0o644)
	out := filepath.Join(dir, "out")
	cmd := binCmd(t, "run", scen, "-o", out)
	stderr, done := startWatched(t, cmd)
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, p := range procsMatching(script) {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	var log testkit.Buffer
	waitLine(t, stderr, "[1/1]", &log, 30*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for len(procsMatching(script)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the server never started:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Up, ready, under load: the server says so.
	for _, err := os.Stat(filepath.Join(dir, "loaded")); err != nil; _, err = os.Stat(filepath.Join(dir, "loaded")) {
		if time.Now().After(deadline) {
			t.Fatalf("the server never had 20 requests:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	// The teardown is stuck on the server: lbbench is still there a
	// second later.
	select {
	case <-done:
		t.Fatalf("exited on the first Ctrl-C: the server did not hold the teardown, so this tests nothing:\n%s", log.String())
	case <-time.After(1500 * time.Millisecond):
	}
	if len(procsMatching(script)) == 0 {
		t.Fatalf("the server is gone after the first Ctrl-C: nothing holds the teardown:\n%s", log.String())
	}
	cmd.Process.Signal(os.Interrupt)
	took := exitWithin(t, cmd, done, 2*time.Second, "the second Ctrl-C", filepath.Join(out, "logs"), &log)
	t.Logf("exited %s after the second Ctrl-C", took)
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d, want 130\n%s", code, log.String())
	}
	waitNoProcs(t)
	if left := procsMatching(script); len(left) > 0 {
		t.Errorf("server processes left behind:\n%s", strings.Join(left, "\n"))
	}
	if _, err := results.ReadFile(filepath.Join(out, "results.json")); err != nil {
		t.Errorf("no results.json after the double Ctrl-C: %v", err)
	}
}
