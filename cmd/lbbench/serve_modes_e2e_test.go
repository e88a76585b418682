package main

// End-to-end tests of lbbench serve's listen modes, accept strategies,
// process management, proxy configuration output and exec targets, on the
// built binary with real child processes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
)

// serveProc is a running "lbbench serve" whose stdout and stderr go to
// files, so that a test can read what it printed before "ready".
type serveProc struct {
	cmd            *exec.Cmd
	exited         chan struct{} // closed once cmd.Wait returned
	admin          string
	stdout, stderr string // paths
}

// startServe runs "lbbench serve ARGS --admin ADDR" in its own process
// group, waits until it says it is ready, and kills the group at the end
// of the test.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	dir := t.TempDir()
	sp := &serveProc{
		admin:  "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t)),
		stdout: filepath.Join(dir, "stdout"),
		stderr: filepath.Join(dir, "stderr"),
	}
	outf, err := os.Create(sp.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer outf.Close()
	errf, err := os.Create(sp.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	sp.cmd = binCmd(t, append([]string{"serve", "--admin", sp.admin}, args...)...)
	sp.cmd.Stdout, sp.cmd.Stderr = outf, errf
	sp.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	sp.exited = exited
	go func() { sp.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-sp.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(sp.log(t), "lbbench serve: ready") {
		select {
		case <-exited:
			t.Fatalf("serve %v exited: %v\n%s", args, sp.cmd.ProcessState, sp.log(t))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %v not ready:\n%s", args, sp.log(t))
		}
	}
	return sp
}

// log returns what serve wrote to stderr so far.
func (sp *serveProc) log(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(sp.stderr)
	return string(b)
}

// out returns what serve wrote to stdout so far.
func (sp *serveProc) out(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(sp.stdout)
	return string(b)
}

// stats fetches the admin /stats report, whatever its status.
func (sp *serveProc) stats(t *testing.T) (int, prefork.StatsReport) {
	t.Helper()
	resp, err := http.Get("http://" + sp.admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep prefork.StatsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatalf("decode /stats: %v", err)
	}
	return resp.StatusCode, rep
}

// stop sends SIGTERM and waits for serve to exit, returning its error.
func (sp *serveProc) stop(t *testing.T) error {
	t.Helper()
	sp.cmd.Process.Signal(syscall.SIGTERM)
	sp.wait(t, 20*time.Second)
	if !sp.cmd.ProcessState.Success() {
		return fmt.Errorf("serve exited with %v", sp.cmd.ProcessState)
	}
	return nil
}

// wait waits for serve to exit, failing the test after timeout.
func (sp *serveProc) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-sp.exited:
	case <-time.After(timeout):
		t.Fatalf("serve did not exit within %v:\n%s", timeout, sp.log(t))
	}
}

// fetch sends one GET on a fresh connection to a "host:port" or
// "unix:/path" endpoint and returns the status and X-Worker.
func fetch(ep, path string) (int, string, error) {
	if p, ok := strings.CutPrefix(ep, prefork.UnixPrefix); ok {
		return testkit.Probe("unix", p, path)
	}
	return testkit.Probe("tcp", ep, path)
}

// shortTempDir is a directory short enough for Unix socket paths.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lbs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// listenArgs are the serve flags for a listen mode with n workers.
func listenArgs(t *testing.T, mode string, n int) []string {
	t.Helper()
	args := []string{"--workers", strconv.Itoa(n), "--listen", mode}
	switch mode {
	case "ports":
		args = append(args, "--port", strconv.Itoa(testkit.ConsecutivePorts(t, n)))
	case "unix":
		args = append(args, "--socket-dir", filepath.Join(shortTempDir(t), "s"))
	default:
		args = append(args, "--port", strconv.Itoa(testkit.FreePort(t)))
	}
	return args
}

func TestServeEveryListenMode(t *testing.T) {
	const n = 3
	for _, mode := range []string{"reuseport", "shared", "ports", "unix"} {
		t.Run(mode, func(t *testing.T) {
			sp := startServe(t, listenArgs(t, mode, n)...)
			_, rep := sp.stats(t)
			if len(rep.Status) != n {
				t.Fatalf("status of %d workers, want %d", len(rep.Status), n)
			}
			sent := 0
			for i, st := range rep.Status {
				for range 3 {
					code, w, err := fetch(st.Endpoint, "/work?ms=1")
					if err != nil || code != 200 {
						t.Fatalf("GET %s: %d %v", st.Endpoint, code, err)
					}
					if (mode == "ports" || mode == "unix") && w != strconv.Itoa(i) {
						t.Errorf("%s answered as worker %q, want %d", st.Endpoint, w, i)
					}
					sent++
				}
			}
			code, rep := sp.stats(t)
			var conns uint64
			for _, w := range rep.Workers {
				conns += w.Connections
			}
			if code != 200 || int(conns) != sent {
				t.Errorf("/stats %d: %d connections accepted, want %d", code, conns, sent)
			}
			if err := sp.stop(t); err != nil {
				t.Errorf("%v\n%s", err, sp.log(t))
			}
			waitNoProcs(t)
		})
	}
}

func TestServeReusePortOnUnixSocket(t *testing.T) {
	out, err := binCmd(t, "serve", "--listen", "reuseport", "--socket-dir", shortTempDir(t)).CombinedOutput()
	if code := testkit.ExitStatus(err); code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{"SO_REUSEPORT", "the kernel refuses SO_REUSEPORT on Unix sockets", "operation not supported", "--listen unix"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
	waitNoProcs(t)
}

func TestServeSharedAcceptStrategies(t *testing.T) {
	const n, conns = 3, 60
	for _, accept := range []string{"netpoll", "blocking", "epoll-exclusive"} {
		t.Run(accept, func(t *testing.T) {
			sp := startServe(t, append(listenArgs(t, "shared", n), "--accept", accept)...)
			if !strings.Contains(sp.log(t), "(shared, accept "+accept+")") {
				t.Errorf("ready line does not name the strategy:\n%s", sp.log(t))
			}
			_, rep := sp.stats(t)
			ep := rep.Status[0].Endpoint
			answered := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range conns / 4 {
						code, w, err := fetch(ep, "/work?ms=2")
						mu.Lock()
						if err != nil || code != 200 {
							t.Errorf("GET: %d %v", code, err)
						}
						answered[w]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			_, rep = sp.stats(t)
			var total uint64
			per := make([]uint64, n)
			for _, w := range rep.Workers {
				per[w.Index] = w.Connections
				total += w.Connections
				if int(w.Connections) != answered[strconv.Itoa(w.Index)] {
					t.Errorf("worker %d: /stats says %d connections, it answered %d", w.Index, w.Connections, answered[strconv.Itoa(w.Index)])
				}
			}
			if total != conns {
				t.Errorf("/stats: %d connections in all, want %d", total, conns)
			}
			t.Logf("%s: connections per worker %v", accept, per)
			if err := sp.stop(t); err != nil {
				t.Errorf("%v\n%s", err, sp.log(t))
			}
		})
	}
}

func TestServeSIGTERMLosesNoRequestInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("drains several serve processes under load")
	}
	// Behaviour only (no request lost), so in the parallel phase.
	t.Parallel()
	for _, args := range [][]string{
		{"shared", "--accept", "netpoll"},
		{"shared", "--accept", "blocking"},
		{"shared", "--accept", "epoll-exclusive"},
		{"ports"},
		{"unix"},
	} {
		t.Run(strings.Join(args, "-"), func(t *testing.T) {
			if testing.Short() && args[len(args)-1] != "blocking" {
				t.Skip("short: only shared with blocking accept, the strategy whose close is subtlest")
			}
			const n, inflight = 2, 8
			sp := startServe(t, append(append(listenArgs(t, args[0], n), args[1:]...), "--concurrency", "2")...)
			_, rep := sp.stats(t)
			type result struct {
				code int
				err  error
			}
			results := make(chan result, inflight)
			for i := range inflight {
				ep := rep.Status[i%n].Endpoint
				go func() {
					code, _, err := fetch(ep, "/work?ms=600")
					results <- result{code, err}
				}()
			}
			// Every request is accepted (in service or queued in a
			// worker) before the signal.
			deadline := time.Now().Add(15 * time.Second)
			for {
				_, rep := sp.stats(t)
				var held int64
				for _, w := range rep.Workers {
					held += w.Active + w.Queued
				}
				if held == inflight {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("requests never all in flight: %+v", rep.Workers)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := sp.stop(t); err != nil {
				t.Errorf("%v\n%s", err, sp.log(t))
			}
			for range inflight {
				if r := <-results; r.err != nil || r.code != 200 {
					t.Errorf("request in flight at SIGTERM: %d %v", r.code, r.err)
				}
			}
			waitNoProcs(t)
		})
	}
}

func TestServeKilledWorker(t *testing.T) {
	t.Run("reported and serve stops", func(t *testing.T) {
		sp := startServe(t, listenArgs(t, "ports", 2)...)
		_, rep := sp.stats(t)
		pid := rep.Status[1].PID
		syscall.Kill(pid, syscall.SIGKILL)
		sp.wait(t, 15*time.Second)
		log := sp.log(t)
		for _, want := range []string{fmt.Sprintf("prefork: worker 1 (pid %d) exited: signal: killed", pid), "a worker failed; stopping"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
		if sp.cmd.ProcessState.ExitCode() != 2 {
			t.Errorf("serve exited %v, want status 2", sp.cmd.ProcessState)
		}
		waitNoProcs(t)
	})
	t.Run("restarted with --restart", func(t *testing.T) {
		sp := startServe(t, append(listenArgs(t, "ports", 2), "--restart", "--health-interval", "100ms")...)
		_, rep := sp.stats(t)
		old := rep.Status[1]
		syscall.Kill(old.PID, syscall.SIGKILL)
		deadline := time.Now().Add(15 * time.Second)
		for {
			code, rep := sp.stats(t)
			st := rep.Status[1]
			if code == 200 && st.Restarts == 1 && st.State == prefork.StateRunning {
				if st.PID == old.PID || st.LastExit != "signal: killed" {
					t.Errorf("status after restart %+v", st)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("worker 1 not restarted: %d %+v\n%s", code, rep, sp.log(t))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if code, w, err := fetch(old.Endpoint, "/work"); err != nil || code != 200 || w != "1" {
			t.Errorf("restarted worker's endpoint: %d %q %v", code, w, err)
		}
		if !strings.Contains(sp.log(t), "prefork: worker 1 restarted") {
			t.Errorf("log does not report the restart:\n%s", sp.log(t))
		}
		if err := sp.stop(t); err != nil {
			t.Errorf("%v\n%s", err, sp.log(t))
		}
		waitNoProcs(t)
	})
}

// TestServePrintConfig checks that the upstream block serve prints is
// accepted by the real nginx and HAProxy, wrapped in a minimal
// configuration in a temporary directory, and that nginx with it reaches
// every worker.
func TestServePrintConfig(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	for _, format := range []string{"nginx", "haproxy"} {
		bin := map[string]string{"nginx": "/usr/sbin/nginx", "haproxy": "/usr/sbin/haproxy"}[format]
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s is needed (scripts/setup.sh installs it): %v", bin, err)
		}
		for _, mode := range []string{"ports", "unix", "shared"} {
			t.Run(format+"/"+mode, func(t *testing.T) {
				sp := startServe(t, append(listenArgs(t, mode, 3), "--print-config", format)...)
				block := sp.out(t)
				_, rep := sp.stats(t)
				wantServers := 3
				if mode == "shared" {
					wantServers = 1
				}
				if got := strings.Count(block, "server "); got != wantServers {
					t.Errorf("%d servers in\n%s\nwant %d", got, block, wantServers)
				}
				for _, st := range rep.Status {
					ep := st.Endpoint
					if format == "haproxy" {
						ep = strings.Replace(ep, "unix:", "unix@", 1)
					}
					if !strings.Contains(block, ep) {
						t.Errorf("block lacks endpoint %s:\n%s", ep, block)
					}
				}
				dir := t.TempDir()
				listen := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
				conf := filepath.Join(dir, format+".conf")
				var check *exec.Cmd
				if format == "nginx" {
					full := "events {}\nhttp {\n    access_log off;\n" +
						"    client_body_temp_path " + dir + "/body;\n    proxy_temp_path " + dir + "/proxy;\n" +
						"    fastcgi_temp_path " + dir + "/fastcgi;\n    uwsgi_temp_path " + dir + "/uwsgi;\n    scgi_temp_path " + dir + "/scgi;\n" +
						block +
						"    server {\n        listen " + listen + ";\n        location / { proxy_pass http://" + prefork.ProxyConfigName + "; }\n    }\n}\n"
					os.WriteFile(conf, []byte(full), 0o644)
					global := "pid " + dir + "/nginx.pid; error_log stderr;"
					check = exec.Command(bin, "-t", "-p", dir, "-c", conf, "-g", global)
					defer func() {
						// With the block accepted, nginx really proxies to
						// every worker.
						if t.Failed() {
							return
						}
						ng := exec.Command(bin, "-p", dir, "-c", conf, "-g", global+" daemon off; master_process off;")
						ng.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
						if err := ng.Start(); err != nil {
							t.Fatal(err)
						}
						defer func() { ng.Process.Kill(); ng.Wait() }()
						seen := map[string]bool{}
						deadline := time.Now().Add(10 * time.Second)
						for len(seen) < 3 && time.Now().Before(deadline) {
							if code, w, err := fetch(listen, "/work"); err == nil && code == 200 {
								seen[w] = true
							} else {
								time.Sleep(20 * time.Millisecond)
							}
						}
						if len(seen) != 3 {
							t.Errorf("through nginx, workers %v answered, want 3", seen)
						}
					}()
				} else {
					full := "global\n    log stderr format raw local0\n    pidfile " + dir + "/haproxy.pid\n" +
						"defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n" +
						"frontend fe\n    bind " + listen + "\n    default_backend " + prefork.ProxyConfigName + "\n" + block
					os.WriteFile(conf, []byte(full), 0o644)
					check = exec.Command(bin, "-c", "-f", conf)
				}
				if out, err := check.CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s\nconfig:\n%s", check.Args, err, out, mustRead(t, conf))
				}
			})
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pythonInterpreter returns the real python3 executable, past wrappers
// such as pyenv's shims, which are slow to start on a loaded machine.
func pythonInterpreter(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3 is needed for the exec tests: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestServeExec(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts Python servers")
	}
	py := pythonInterpreter(t)
	for _, mode := range []string{"ports", "unix", "shared"} {
		t.Run(mode, func(t *testing.T) {
			sp := startServe(t, append(listenArgs(t, mode, 3),
				"--exec", py+" testdata/server.py --fd {fd} --workers {workers}", "--probe", "/healthz")...)
			code, rep := sp.stats(t)
			if code != 200 {
				t.Fatalf("/stats %d: %+v", code, rep)
			}
			for _, st := range rep.Status {
				if c, _, err := fetch(st.Endpoint, "/work?ms=1"); err != nil || c != 200 {
					t.Errorf("GET %s: %d %v", st.Endpoint, c, err)
				}
			}
			if err := sp.stop(t); err != nil {
				t.Errorf("%v\n%s", err, sp.log(t))
			}
		})
	}
}

// TestRunExecTarget runs the scenario in testdata/exec.yaml: the Python
// server of testdata under the proxy (ports and Unix sockets) and under a
// shared port, and checks the report attributes every response to a
// worker.
func TestRunExecTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a scenario of three runs")
	}
	scen := mustRead(t, "testdata/exec.yaml")
	dir := t.TempDir()
	path := filepath.Join(dir, "exec.yaml")
	// The interpreter itself, not a slow wrapper; the script stays
	// relative to where run starts (this directory).
	os.WriteFile(path, []byte(strings.Replace(scen, "exec: python3 ", "exec: "+pythonInterpreter(t)+" ", 1)), 0o644)
	out := filepath.Join(dir, "out")
	cmd := binCmd(t, "run", path, "-o", out, "--quiet")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 3 {
		t.Fatalf("complete=%v with %d runs, want 3:\n%s", res.Complete, len(res.Runs), b)
	}
	for _, run := range res.Runs {
		if run.Errors != 0 || run.Requests < 100 {
			t.Errorf("%s: %d requests, %d errors %v", run.ID, run.Requests, run.Errors, run.ErrorKinds)
		}
		var attributed uint64
		for _, w := range run.Workers {
			attributed += w.Responses
			// least_conn spreads; under the shared port the kernel
			// decides, so only the total is checked there.
			if w.Responses == 0 && run.Variant != "shared_port" {
				t.Errorf("%s: worker %d answered nothing: %+v", run.ID, w.Index, run.Workers)
			}
		}
		if attributed != run.Requests {
			t.Errorf("%s: %d of %d responses attributed to a worker", run.ID, attributed, run.Requests)
		}
	}
	if !strings.Contains(string(b), "proxy_unix") || !strings.Contains(string(b), "shared_port") {
		t.Errorf("report lacks the variants:\n%s", b)
	}
	waitNoProcs(t)
}
