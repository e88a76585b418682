package prefork_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

var update = flag.Bool("update", false, "rewrite golden files")

// getEndpoint GETs urlPath from a "host:port" or "unix:/path" endpoint.
func getEndpoint(t *testing.T, ep, urlPath string) (int, string) {
	t.Helper()
	if path, ok := strings.CutPrefix(ep, prefork.UnixPrefix); ok {
		code, w, err := testkit.Probe("unix", path, urlPath)
		if err != nil {
			t.Fatalf("GET %s on %s: %v", urlPath, path, err)
		}
		return code, w
	}
	return testkit.Worker(t, "http://"+ep+urlPath)
}

// shortDir is a temporary directory with a path short enough for Unix
// sockets (t.TempDir's can pass the kernel's 107 bytes).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lbb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestListenModes(t *testing.T) {
	const workers = 3
	tests := []struct {
		listen    prefork.ListenMode
		perWorker bool // every worker has an endpoint of its own
		onUnix    bool // a socket dir: Unix sockets
	}{
		{listen: prefork.ReusePort},
		{listen: prefork.Shared},
		{listen: prefork.Shared, onUnix: true},
		{listen: prefork.Ports, perWorker: true},
		{listen: prefork.Unix, perWorker: true, onUnix: true},
	}
	for _, tt := range tests {
		name := string(tt.listen)
		if tt.onUnix && tt.listen != prefork.Unix {
			name += " on a unix socket"
		}
		t.Run(name, func(t *testing.T) {
			cfg := prefork.Config{Workers: workers, Listen: tt.listen}
			if tt.listen == prefork.Ports {
				cfg.Port = testkit.ConsecutivePorts(t, workers)
			}
			if tt.onUnix {
				cfg.SocketDir = filepath.Join(shortDir(t), "socks")
			}
			s := start(t, cfg)
			eps := s.Endpoints()
			if len(eps) != workers {
				t.Fatalf("Endpoints() = %v, want %d", eps, workers)
			}
			if distinct := len(slices.Compact(slices.Clone(eps))); tt.perWorker != (distinct == workers) || (!tt.perWorker && distinct != 1) {
				t.Fatalf("Endpoints() = %v: per-worker endpoints %v", eps, tt.perWorker)
			}
			seen := map[string]int{}
			for i, ep := range eps {
				if tt.listen == prefork.Unix && ep != "unix:"+prefork.SocketPath(cfg.SocketDir, i) {
					t.Errorf("Endpoints()[%d] = %s", i, ep)
				}
				if tt.listen == prefork.Shared && tt.onUnix && ep != "unix:"+prefork.SharedSocketPath(cfg.SocketDir) {
					t.Errorf("Endpoints()[%d] = %s, want the one shared socket", i, ep)
				}
				for range 4 {
					code, w := getEndpoint(t, ep, "/work")
					if code != http.StatusOK {
						t.Fatalf("GET %s/work = %d", ep, code)
					}
					if tt.perWorker && w != strconv.Itoa(i) {
						t.Errorf("endpoint %s answered as worker %q, want %d", ep, w, i)
					}
					seen[w]++
				}
			}
			stats, errs := s.Stats(context.Background())
			err := errors.Join(errs...)
			if err != nil {
				t.Fatal(err)
			}
			var conns uint64
			for _, st := range stats {
				if st.Requests != uint64(seen[strconv.Itoa(st.Index)]) {
					t.Errorf("worker %d counted %d requests, clients saw %d", st.Index, st.Requests, seen[strconv.Itoa(st.Index)])
				}
				conns += st.Connections
			}
			if conns != 4*workers {
				t.Errorf("workers accepted %d connections, want %d", conns, 4*workers)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if tt.onUnix {
				if _, err := os.Stat(cfg.SocketDir); !errors.Is(err, os.ErrNotExist) {
					left, _ := filepath.Glob(filepath.Join(cfg.SocketDir, "*"))
					t.Errorf("socket dir made by Start left after Stop (%v), holding %v", err, left)
				}
			}
		})
	}
}

func TestReusePortOnUnixSocket(t *testing.T) {
	dir := shortDir(t)
	_, err := prefork.Start(context.Background(), prefork.Config{
		Workers: 2, Listen: prefork.ReusePort, SocketDir: dir, Command: []string{testExe(t)},
	})
	if err == nil {
		t.Fatal("Start with SO_REUSEPORT on a Unix socket succeeded")
	}
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("error %v does not wrap the kernel's EOPNOTSUPP", err)
	}
	for _, want := range []string{"the kernel refuses SO_REUSEPORT on Unix sockets", "--listen unix", "--listen shared"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	if pids := children(t); len(pids) != 0 {
		t.Errorf("child processes %v started", pids)
	}
}

func TestSharedAcceptStrategies(t *testing.T) {
	t.Parallel()
	const workers, conns = 3, 60
	for _, accept := range worker.AcceptStrategies() {
		for _, tc := range []struct {
			maxConns int
			onUnix   bool // the shared socket is a Unix socket
		}{{0, false}, {1, false}, {0, true}} {
			name := fmt.Sprintf("%s/max_conns=%d", accept, tc.maxConns)
			if tc.onUnix {
				name = accept + "/unix"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each its own workers and socket
				maxConns := tc.maxConns
				cfg := prefork.Config{Workers: workers, Listen: prefork.Shared,
					Worker: worker.Config{Accept: accept, MaxConns: maxConns}}
				if tc.onUnix {
					cfg.SocketDir = shortDir(t)
				}
				s := start(t, cfg)
				ep := s.Endpoints()[0]
				// Concurrent clients, so that more than one worker is
				// needed at times.
				var wg sync.WaitGroup
				var mu sync.Mutex
				seen := map[string]int{}
				for range 6 {
					wg.Go(func() {
						for range conns / 6 {
							code, w := getEndpoint(t, ep, "/work?ms=2")
							mu.Lock()
							seen[fmt.Sprint(code, " ", w)]++
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				stats, errs := s.Stats(context.Background())
				err := errors.Join(errs...)
				if err != nil {
					t.Fatal(err)
				}
				var total uint64
				per := make([]uint64, workers)
				for _, st := range stats {
					per[st.Index] = st.Connections
					total += st.Connections
					if got := uint64(seen[fmt.Sprint(200, " ", st.Index)]); got != st.Connections {
						t.Errorf("worker %d accepted %d connections, answered %d", st.Index, st.Connections, got)
					}
				}
				if total != conns {
					t.Errorf("workers accepted %d connections in all, want %d (responses %v)", total, conns, seen)
				}
				t.Logf("connections per worker: %v", per)
			})
		}
	}
}

func TestStopDrainsInFlightEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: drains requests in every mode")
	}
	for _, tc := range []struct {
		listen prefork.ListenMode
		accept string
	}{
		{prefork.Shared, worker.AcceptNetpoll},
		{prefork.Shared, worker.AcceptBlocking},
		{prefork.Shared, worker.AcceptEpollExclusive},
		{prefork.Unix, ""},
	} {
		t.Run(string(tc.listen)+"/"+tc.accept, func(t *testing.T) {
			cfg := prefork.Config{Workers: 2, Listen: tc.listen, Worker: worker.Config{Accept: tc.accept, Concurrency: 4}}
			if tc.listen == prefork.Unix {
				cfg.SocketDir = shortDir(t)
			}
			s := start(t, cfg)
			const n = 6
			errc := make(chan error, n)
			for i := range n {
				go func() {
					code, _ := getEndpoint(t, s.Endpoints()[i%2], "/work?ms=400")
					if code != http.StatusOK {
						errc <- fmt.Errorf("status %d", code)
						return
					}
					errc <- nil
				}()
			}
			testkit.WaitFor(t, "the requests to be in service", func() bool {
				st, _ := s.Stats(context.Background())
				var active int64
				for _, w := range st {
					active += w.Active + w.Queued
				}
				return active == n
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			for range n {
				if err := <-errc; err != nil {
					t.Errorf("in-flight request: %v", err)
				}
			}
		})
	}
}

func TestRestartKilledWorker(t *testing.T) {
	var stderr testkit.Buffer
	s := start(t, prefork.Config{Workers: 2, Listen: prefork.Shared, Restart: true, Stderr: &stderr, HealthInterval: 50 * time.Millisecond})
	old := s.Status()[1]
	if old.State != prefork.StateRunning || old.Restarts != 0 || !old.Healthy {
		t.Fatalf("status before the kill %+v", old)
	}
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "worker 1 to be restarted", func() bool {
		st := s.Status()[1]
		return st.Restarts == 1 && st.State == prefork.StateRunning
	})
	st := s.Status()[1]
	if st.PID == old.PID || st.LastExit != "signal: killed" {
		t.Errorf("status after the restart %+v, want a new pid and last exit \"signal: killed\"", st)
	}
	want := fmt.Sprintf("prefork: worker 1 (pid %d) exited: signal: killed; restarting in", old.PID)
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), fmt.Sprintf("prefork: worker 1 restarted (pid %d)", st.PID)) {
		t.Errorf("log %q does not report the crash and the restart", stderr.String())
	}
	select {
	case <-s.Exited():
		t.Error("Exited closed although the worker was restarted")
	default:
	}
	if err := s.Healthy(context.Background()); err != nil {
		t.Errorf("Healthy after the restart: %v", err)
	}
	// The restarted worker serves on the shared socket, which the
	// supervisor kept.
	seen := map[string]bool{}
	for range 40 {
		_, w := testkit.Worker(t, "http://"+s.Endpoints()[0]+"/work")
		seen[w] = true
	}
	if !seen["1"] {
		t.Errorf("the restarted worker answered none of 40 connections: %v", seen)
	}
}

func TestKilledWorkerInStats(t *testing.T) {
	s := start(t, prefork.Config{Workers: 2})
	h := s.Handler()
	pid := s.Status()[0].PID
	syscall.Kill(pid, syscall.SIGKILL)
	<-s.Exited()
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, httpReq(t, "/stats"))
	var rep prefork.StatsReport
	if err := json.Unmarshal(rec.body.Bytes(), &rep); err != nil {
		t.Fatalf("decode %q: %v", rec.body.String(), err)
	}
	want := fmt.Sprintf("prefork: worker 0 (pid %d) exited: signal: killed", pid)
	if rec.code != http.StatusServiceUnavailable || len(rep.Status) != 2 || rep.Status[0].State != prefork.StateExited ||
		rep.Status[0].LastExit != "signal: killed" || rep.Status[0].Healthy || len(rep.Errors) != 1 || rep.Errors[0] != want {
		t.Errorf("/stats = %d %+v, want 503 reporting worker 0 exited", rec.code, rep)
	}
	if rep.Status[1].State != prefork.StateRunning || rep.Workers[1].PID == 0 {
		t.Errorf("worker 1 in /stats: %+v %+v", rep.Status[1], rep.Workers[1])
	}
}

type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(p)
}
func (r *recorder) WriteHeader(code int) { r.code = code }

func httpReq(t *testing.T, path string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pythonServer returns the interpreter (resolved past wrappers such as
// pyenv's shims, which are slow to start) and the script of the foreign
// server of the exec tests.
func pythonServer(t *testing.T) (python, script string) {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3 is needed for the exec tests: %v", err)
	}
	script, err = filepath.Abs("../../cmd/lbbench/testdata/server.py")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), script
}

func TestExec(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts Python servers")
	}
	python, script := pythonServer(t)
	py := python + " " + script
	const workers = 3
	tests := []struct {
		name    string
		listen  prefork.ListenMode
		command string
		// wantWorker: responses carry X-Worker (the server forks
		// workers), or none (one server per endpoint, told nothing).
		wantWorker bool
	}{
		{name: "ports", listen: prefork.Ports, command: py + " --port {port}"},
		{name: "unix", listen: prefork.Unix, command: py + " --unix {socket}"},
		{name: "ports with fd", listen: prefork.Ports, command: py + " --fd {fd} --workers {workers}"},
		{name: "reuseport", listen: prefork.ReusePort, command: py + " --port {port} --reuseport --x-worker {index}", wantWorker: true},
		{name: "shared binds", listen: prefork.Shared, command: py + " --port {port} --workers {workers}", wantWorker: true},
		{name: "shared with fd", listen: prefork.Shared, command: py + " --fd {fd} --workers {workers}", wantWorker: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr testkit.Buffer
			cfg := prefork.Config{Workers: workers, Listen: tt.listen, Stderr: &stderr,
				Exec: &prefork.Exec{Command: tt.command, Probe: "/healthz"}}
			switch tt.listen {
			case prefork.Ports:
				cfg.Port = testkit.ConsecutivePorts(t, workers)
			case prefork.Unix:
				cfg.SocketDir = shortDir(t)
			}
			s := startTimeout(t, cfg, 30*time.Second)
			if err := s.Healthy(context.Background()); err != nil {
				t.Fatalf("Healthy: %v\n%s", err, stderr.String())
			}
			seen := map[string]int{}
			for i, ep := range s.Endpoints() {
				for range 10 {
					code, w := getEndpoint(t, ep, "/work?ms=1")
					if code != http.StatusOK {
						t.Fatalf("GET %s = %d", ep, code)
					}
					seen[w]++
				}
				if !tt.wantWorker && (seen[""] != 10*(i+1)) {
					t.Errorf("X-Worker set by a server told nothing: %v", seen)
				}
			}
			if tt.wantWorker && seen[""] != 0 {
				t.Errorf("responses without X-Worker: %v", seen)
			}
			status := s.Status()
			wantProcs := workers
			if tt.listen == prefork.Shared {
				wantProcs = 1
			}
			if len(status) != wantProcs {
				t.Errorf("%d processes in Status, want %d: %+v", len(status), wantProcs, status)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Stop(ctx); err != nil {
				t.Errorf("Stop: %v\n%s", err, stderr.String())
			}
			for _, st := range status {
				if err := syscall.Kill(st.PID, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("instance %d (pid %d) still there after Stop", st.Index, st.PID)
				}
			}
		})
	}
}

func TestExecNeverReady(t *testing.T) {
	_, err := prefork.Start(context.Background(), prefork.Config{Workers: 1, Listen: prefork.Ports, Port: testkit.ConsecutivePorts(t, 1),
		Exec: &prefork.Exec{Command: "sh -c 'exit 7' {port}"}})
	if err == nil || !strings.Contains(err.Error(), "exited before it was healthy: exit status 7") {
		t.Errorf("Start = %v, want the exit reported", err)
	}
}

func TestWriteProxyConfig(t *testing.T) {
	eps := map[string][]string{
		"ports":  {"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"},
		"unix":   {"unix:/run/lbb/worker-0.sock", "unix:/run/lbb/worker-1.sock"},
		"shared": {"127.0.0.1:8080", "127.0.0.1:8080"},
	}
	for _, format := range prefork.ProxyConfigFormats() {
		for _, name := range []string{"ports", "unix", "shared"} {
			t.Run(format+"/"+name, func(t *testing.T) {
				var b bytes.Buffer
				if err := prefork.WriteProxyConfig(&b, format, eps[name], "/healthz"); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", format+"-"+name+".golden")
				if *update {
					os.MkdirAll("testdata", 0o755)
					os.WriteFile(golden, b.Bytes(), 0o644)
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if b.String() != string(want) {
					t.Errorf("got\n%s\nwant\n%s", b.String(), want)
				}
			})
		}
	}
	if err := prefork.WriteProxyConfig(io.Discard, "envoy", eps["ports"], "/"); err == nil {
		t.Error("unknown format accepted")
	}
}
