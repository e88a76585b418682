package prefork_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/prefork"
	"golang.org/x/sys/unix"
)

// TestMain doubles as the worker command: the supervisor under test runs
// this test binary, which takes the child role when it finds its config in
// the environment.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(prefork.EnvWorkerConfig); ok {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := prefork.WorkerMain(ctx)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// start starts a supervisor running this test binary as the worker command
// and stops it when the test ends.
func start(t *testing.T, cfg prefork.Config) *prefork.Supervisor {
	t.Helper()
	return startTimeout(t, cfg, 10*time.Second)
}

// startTimeout is start with a bound on the start other than 10 s.
func startTimeout(t *testing.T, cfg prefork.Config, timeout time.Duration) *prefork.Supervisor {
	t.Helper()
	if cfg.Exec == nil {
		cfg.Command = []string{testExe(t)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := prefork.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

// children returns the pids of this process's child processes, zombies
// included.
func children(t *testing.T) []int {
	t.Helper()
	return testkit.PIDs(testkit.Procs(func(p testkit.Proc) bool { return p.PPID == os.Getpid() }))
}

func TestConfig(t *testing.T) {
	d := prefork.Config{}.WithDefaults()
	if d.Workers != prefork.DefaultWorkers || d.Listen != prefork.ReusePort || d.Host != "127.0.0.1" ||
		len(d.Command) != 2 || d.Command[1] != "worker" || d.Stderr != os.Stderr || d.Worker.Concurrency != 1 {
		t.Errorf("Config{}.WithDefaults() = %+v", d)
	}
	if _, err := prefork.Start(context.Background(), prefork.Config{Workers: -1}); err == nil || err.Error() != "prefork: workers must be >= 1, got -1" {
		t.Errorf("Start with -1 workers = %v, want a workers error", err)
	}
	valid := prefork.Config{Command: []string{"/nonexistent/worker"}}.WithDefaults()
	tests := []struct {
		name    string
		edit    func(*prefork.Config)
		wantErr string
	}{
		{name: "defaults", edit: func(*prefork.Config) {}},
		{name: "ports mode", edit: func(c *prefork.Config) { c.Listen, c.Port = prefork.Ports, 8080 }},
		{name: "no workers", edit: func(c *prefork.Config) { c.Workers = -1 }, wantErr: "prefork: workers must be >= 1, got -1"},
		{name: "unknown listen mode", edit: func(c *prefork.Config) { c.Listen = "mesh" }, wantErr: `prefork: listen must be one of [reuseport shared ports unix], got "mesh"`},
		{name: "shared mode", edit: func(c *prefork.Config) { c.Listen, c.Worker.Accept = prefork.Shared, "epoll-exclusive" }},
		{name: "unix mode", edit: func(c *prefork.Config) { c.Listen, c.SocketDir = prefork.Unix, "/tmp/x" }},
		{name: "unix mode needs a dir", edit: func(c *prefork.Config) { c.Listen = prefork.Unix }, wantErr: "prefork: socket dir must be set in unix mode, where worker i listens on DIR/worker-i.sock"},
		{name: "socket dir on tcp", edit: func(c *prefork.Config) { c.Listen, c.Port, c.SocketDir = prefork.Ports, 8000, "/tmp/x" }, wantErr: "prefork: socket dir is for unix and shared modes; ports mode listens on TCP"},
		{name: "shared unix socket without fd", edit: func(c *prefork.Config) {
			c.Listen, c.SocketDir, c.Command, c.Exec = prefork.Shared, "/tmp/x", nil, &prefork.Exec{Command: "srv --port {port}", Probe: "/"}
		}, wantErr: "prefork: shared mode on a Unix socket (socket dir /tmp/x) hands a server the socket as {fd}; its command has no {fd}"},
		{name: "bad accept", edit: func(c *prefork.Config) { c.Worker.Accept = "fifo" }, wantErr: `prefork: worker: accept must be one of netpoll, blocking, epoll-exclusive, poll, got "fifo"`},
		{name: "exec", edit: func(c *prefork.Config) {
			c.Command, c.Exec = nil, &prefork.Exec{Command: "srv --port {port}", Probe: "/"}
		}},
		{name: "exec shared fd", edit: func(c *prefork.Config) {
			c.Listen, c.Exec = prefork.Shared, &prefork.Exec{Command: "srv --fd {fd} -w {workers}", Probe: "/"}
		}},
		{name: "exec unix", edit: func(c *prefork.Config) {
			c.Listen, c.SocketDir, c.Exec = prefork.Unix, "/tmp/x", &prefork.Exec{Command: "srv -b unix:{socket}", Probe: "/"}
		}},
		{name: "exec without endpoint", edit: func(c *prefork.Config) { c.Exec = &prefork.Exec{Command: "srv", Probe: "/"} },
			wantErr: "prefork: exec: the command must take {port} or {fd}, so that it listens where the supervisor expects"},
		{name: "exec socket on tcp", edit: func(c *prefork.Config) { c.Exec = &prefork.Exec{Command: "srv {socket}", Probe: "/"} },
			wantErr: "prefork: exec: {socket} is set only in unix mode, not reuseport"},
		{name: "exec port on unix", edit: func(c *prefork.Config) {
			c.Listen, c.SocketDir, c.Exec = prefork.Unix, "/tmp/x", &prefork.Exec{Command: "srv {port}", Probe: "/"}
		}, wantErr: "prefork: exec: {port} is not set in unix mode; use {socket} or {fd}"},
		{name: "exec unix without socket", edit: func(c *prefork.Config) {
			c.Listen, c.SocketDir, c.Exec = prefork.Unix, "/tmp/x", &prefork.Exec{Command: "srv", Probe: "/"}
		}, wantErr: "prefork: exec: in unix mode the command must take {socket} or {fd}, so that each instance listens on its own socket"},
		{name: "exec bad quote", edit: func(c *prefork.Config) { c.Exec = &prefork.Exec{Command: "srv '{port}", Probe: "/"} },
			wantErr: "prefork: exec: unterminated single quote at byte 4"},
		{name: "exec empty", edit: func(c *prefork.Config) { c.Exec = &prefork.Exec{Command: "  ", Probe: "/"} },
			wantErr: "prefork: exec: the command is empty"},
		{name: "exec bad probe", edit: func(c *prefork.Config) { c.Exec = &prefork.Exec{Command: "srv {port}", Probe: "healthz"} },
			wantErr: `prefork: exec: probe must be an HTTP path starting with /, got "healthz"`},
		{name: "exec with accept", edit: func(c *prefork.Config) {
			c.Exec, c.Worker.Accept = &prefork.Exec{Command: "srv {port}", Probe: "/"}, "blocking"
		}, wantErr: "prefork: an accept strategy needs the built-in worker; an exec target accepts its own way"},
		{name: "exec with an injected cost", edit: func(c *prefork.Config) {
			c.Exec, c.Worker.InjectCost = &prefork.Exec{Command: "srv {port}", Probe: "/"}, 40*time.Microsecond
		}, wantErr: "prefork: an injected cost needs the built-in worker; an exec target costs what it costs"},
		{name: "negative injected cost", edit: func(c *prefork.Config) { c.Worker.InjectCost = -time.Microsecond },
			wantErr: "prefork: worker: inject_cost must be between 0 (none) and 1s, got -1µs"},
		{name: "no host", edit: func(c *prefork.Config) { c.Host = "" }, wantErr: "prefork: host must not be empty"},
		{name: "bad port", edit: func(c *prefork.Config) { c.Port = 70000 }, wantErr: "prefork: port must be between 0 and 65535, got 70000"},
		{name: "ports mode needs a port", edit: func(c *prefork.Config) { c.Listen = prefork.Ports }, wantErr: "prefork: port must be set in ports mode, where worker i listens on port+i"},
		{name: "ports past 65535", edit: func(c *prefork.Config) { c.Listen, c.Port = prefork.Ports, 65534 }, wantErr: "prefork: port 65534 + 4 workers runs past port 65535"},
		{name: "no command", edit: func(c *prefork.Config) { c.Command = nil }, wantErr: "prefork: command must name the executable that runs the worker"},
		{name: "no stderr", edit: func(c *prefork.Config) { c.Stderr = nil }, wantErr: "prefork: stderr must not be nil"},
		{name: "bad worker", edit: func(c *prefork.Config) { c.Worker.Mode = "busy" }, wantErr: `prefork: worker: mode must be "sleep" or "spin", got "busy"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.edit(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestReusePortSpreadsConnections(t *testing.T) {
	const workers, conns = 4, 200
	s := start(t, prefork.Config{Workers: workers, Listen: prefork.ReusePort})
	eps := s.Endpoints()
	if len(eps) != workers || strings.HasSuffix(eps[0], ":0") {
		t.Fatalf("Endpoints() = %v", eps)
	}
	for _, ep := range eps[1:] {
		if ep != eps[0] {
			t.Fatalf("Endpoints() = %v, want one shared address", eps)
		}
	}
	seen := make(map[string]int)
	for range conns {
		code, w := testkit.Worker(t, "http://"+eps[0]+"/work")
		if code != http.StatusOK {
			t.Fatalf("GET /work = %d", code)
		}
		seen[w]++
	}
	stats, errs := s.Stats(context.Background())
	err := errors.Join(errs...)
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	pids := make(map[int]bool)
	for i, st := range stats {
		if n := seen[strconv.Itoa(i)]; n == 0 {
			t.Errorf("worker %d answered none of %d connections (X-Worker counts %v)", i, conns, seen)
		}
		if st.Index != i || st.Connections == 0 || st.Connections != uint64(seen[strconv.Itoa(i)]) {
			t.Errorf("worker %d stats %+v, want index %d and %d connections", i, st, i, seen[strconv.Itoa(i)])
		}
		total += st.Connections
		pids[st.PID] = true
	}
	if total != conns || len(pids) != workers || pids[os.Getpid()] {
		t.Errorf("%d connections in stats over pids %v, want %d over %d child pids", total, pids, conns, workers)
	}
}

func TestPortsMode(t *testing.T) {
	const workers = 3
	port := testkit.ConsecutivePorts(t, workers)
	s := start(t, prefork.Config{Workers: workers, Listen: prefork.Ports, Port: port})
	for i, ep := range s.Endpoints() {
		if want := fmt.Sprintf("127.0.0.1:%d", port+i); ep != want {
			t.Errorf("Endpoints()[%d] = %s, want %s", i, ep, want)
		}
		for range 3 {
			if code, w := testkit.Worker(t, "http://"+ep+"/work"); code != http.StatusOK || w != strconv.Itoa(i) {
				t.Errorf("GET %s/work = %d with X-Worker %q, want 200 from worker %d", ep, code, w, i)
			}
		}
	}
	if n := len(s.AdminAddrs()); n != workers {
		t.Errorf("%d admin addresses, want %d", n, workers)
	}
}

func TestPortInUse(t *testing.T) {
	tests := []struct {
		name     string
		listen   prefork.ListenMode
		occupied int // offset from the base port
	}{
		{name: "reuseport", listen: prefork.ReusePort, occupied: 0},
		{name: "ports", listen: prefork.Ports, occupied: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := testkit.ConsecutivePorts(t, 4)
			busy := fmt.Sprintf("127.0.0.1:%d", port+tt.occupied)
			ln, err := net.Listen("tcp", busy)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			_, err = prefork.Start(context.Background(), prefork.Config{
				Workers: 4, Listen: tt.listen, Port: port, Command: []string{testExe(t)},
			})
			want := "prefork: listen " + busy + ": address already in use (is another server running? pick another --port)"
			if err == nil || err.Error() != want || !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("Start = %v, want %q wrapping EADDRINUSE", err, want)
			}
			if pids := children(t); len(pids) != 0 {
				t.Errorf("child processes %v left behind", pids)
			}
			// The sockets made before the failure were closed.
			for i := range tt.occupied {
				l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+i))
				if err != nil {
					t.Fatalf("port %d still held: %v", port+i, err)
				}
				l.Close()
			}
		})
	}
}

func TestStartFailureTearsDown(t *testing.T) {
	exe := testExe(t)
	tests := []struct {
		name    string
		command []string
		timeout time.Duration
		wantErr string
		wantIs  error
	}{
		{
			// Worker 0 becomes healthy and must be killed when worker 1
			// fails.
			name: "a worker exits before it is healthy",
			command: []string{"/bin/sh", "-c",
				`case "$` + prefork.EnvWorkerConfig + `" in *'"index":1,'*) exit 3;; esac; exec "$0"`, exe},
			timeout: 10 * time.Second,
			wantErr: "prefork: worker 1 (pid %d) exited before it was healthy: exit status 3",
		},
		{
			name:    "a worker never answers",
			command: []string{"/bin/sh", "-c", "exec sleep 30"},
			timeout: 500 * time.Millisecond,
			wantErr: "prefork: worker 0 (pid %d) not healthy",
			wantIs:  context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			_, err := prefork.Start(ctx, prefork.Config{Workers: 3, Command: tt.command})
			if err == nil {
				t.Fatal("Start succeeded")
			}
			var pid int
			if prefix, _, _ := strings.Cut(tt.wantErr, "%d"); !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("Start = %v, want %q", err, tt.wantErr)
			}
			if _, serr := fmt.Sscanf(err.Error(), tt.wantErr, &pid); serr != nil {
				t.Errorf("Start error %q does not match %q: %v", err, tt.wantErr, serr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Start = %v, want it to wrap %v", err, tt.wantIs)
			}
			if pids := children(t); len(pids) != 0 {
				t.Errorf("child processes %v left behind", pids)
			}
		})
	}
}

func TestStopDrainsInFlight(t *testing.T) {
	s := start(t, prefork.Config{Workers: 2})
	type result struct {
		code int
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + s.Endpoints()[0] + "/work?ms=300")
		if err != nil {
			resc <- result{err: err}
			return
		}
		resp.Body.Close()
		resc <- result{code: resp.StatusCode}
	}()
	var pids []int
	testkit.WaitFor(t, "the request to be in service", func() bool {
		stats, errs := s.Stats(context.Background())
		err := errors.Join(errs...)
		if err != nil {
			t.Fatal(err)
		}
		pids = pids[:0]
		active := int64(0)
		for _, st := range stats {
			pids = append(pids, st.PID)
			active += st.Active
		}
		return active == 1
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if res := <-resc; res.err != nil || res.code != http.StatusOK {
		t.Errorf("in-flight request = %d, %v; want 200", res.code, res.err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for _, pid := range pids {
		if p, there := testkit.Lookup(pid); there {
			t.Errorf("worker %s still there after Stop (state %q), want it gone and reaped", p, p.State)
		}
	}
	if pids := children(t); len(pids) != 0 {
		t.Errorf("child processes %v left after Stop", pids)
	}
	if err := s.Healthy(ctx); err == nil {
		t.Error("Healthy after Stop = nil, want an error")
	}
}

func TestWorkerExitDetected(t *testing.T) {
	var stderr testkit.Buffer
	s := start(t, prefork.Config{Workers: 2, Stderr: &stderr})
	admin := httptest.NewServer(s.Handler())
	defer admin.Close()

	resp, err := http.Get(admin.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var report prefork.StatsReport
	err = json.NewDecoder(resp.Body).Decode(&report)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(report.Workers) != 2 {
		t.Fatalf("admin /stats = %d %+v, %v", resp.StatusCode, report, err)
	}
	// The host's steal, for every CPU the supervisor may run on (0
	// outside a virtual machine, but reported).
	if n := proccpu.NewStealClock().CPUs(); len(report.Steal) != n {
		t.Errorf("admin /stats steal %v: want an entry for each of the %d CPUs of the affinity", report.Steal, n)
	}
	if code, _ := testkit.Worker(t, admin.URL+"/healthz"); code != http.StatusOK {
		t.Fatalf("admin /healthz = %d before the crash, want 200", code)
	}

	pid := report.Workers[1].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("Exited not closed after a worker was killed")
	}
	want := fmt.Sprintf("prefork: worker 1 (pid %d) exited: signal: killed", pid)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	if err := s.Healthy(context.Background()); err == nil || err.Error() != want {
		t.Errorf("Healthy = %v, want %q", err, want)
	}
	stats, errs := s.Stats(context.Background())
	if errs[0] != nil || errs[1] == nil || errs[1].Error() != want || stats[0].PID == 0 || stats[1].Index != 1 {
		t.Errorf("Stats = %+v, %v; want worker 0's stats and worker 1's error %q", stats, errs, want)
	}
	for _, path := range []string{"/healthz", "/stats"} {
		if code, _ := testkit.Worker(t, admin.URL+path); code != http.StatusServiceUnavailable {
			t.Errorf("admin %s = %d after the crash, want 503", path, code)
		}
	}
}

// TestStoppedWorkerReportedUnresponsive: a worker that is alive but
// stopped (SIGSTOP) does not answer for its stats; /stats answers 503
// within StatsTimeout and a little, naming it unresponsive and stopped,
// with the other worker's stats; Stop still ends it (SIGCONT after
// SIGTERM).
func TestStoppedWorkerReportedUnresponsive(t *testing.T) {
	t.Parallel() // mostly waits for StatsTimeout
	s := start(t, prefork.Config{Workers: 2})
	admin := httptest.NewServer(s.Handler())
	defer admin.Close()
	st, errs := s.Stats(context.Background())
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	pid := st[1].PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	begin := time.Now()
	resp, err := http.Get(admin.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var rep prefork.StatsReport
	err = json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	took := time.Since(begin)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || len(rep.Status) != 2 {
		t.Fatalf("/stats = %d %+v, %v; want 503 with both workers' status", resp.StatusCode, rep, err)
	}
	if took > prefork.StatsTimeout+time.Second {
		t.Errorf("/stats took %s with a stopped worker, want at most %s and a little", took, prefork.StatsTimeout)
	}
	want := "stopped answering: no stats within 2s; it is stopped (SIGSTOP or a debugger)"
	if rep.Status[1].Unresponsive != want || rep.Status[0].Unresponsive != "" {
		t.Errorf("unresponsive = %q, %q; want worker 1 %q", rep.Status[0].Unresponsive, rep.Status[1].Unresponsive, want)
	}
	if rep.Workers[0].PID != st[0].PID || rep.Workers[0].Index != 0 {
		t.Errorf("worker 0's stats lost: %+v", rep.Workers[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop with a stopped worker: %v, want it drained after SIGCONT", err)
	}
}

// waitStopped waits until every thread of pid is stopped. A SIGSTOP is
// not instantaneous: the kernel wakes one thread to take it, and on a busy
// machine, until that thread runs, the others go on (in CI the stopped
// worker's netpoller answered /stats once).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("every thread of pid %d to stop after SIGSTOP", pid), func() bool {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		stopped := len(tasks) > 0
		for _, task := range tasks {
			// A thread's ID names it in /proc as a process's does.
			tid, err := strconv.Atoi(task.Name())
			if err != nil || proccpu.State(tid) != "stopped (SIGSTOP or a debugger)" {
				stopped = false
			}
		}
		return stopped
	})
}

// TestForeignReuseportMemberReported: a same-user socket that joins the
// workers' SO_REUSEPORT group after they started (the kernel lets it) is
// counted by Foreign and reported by /stats; the workers' own sockets are
// not.
func TestForeignReuseportMemberReported(t *testing.T) {
	s := start(t, prefork.Config{Workers: 2, Listen: prefork.ReusePort})
	if n, err := s.Foreign(); err != nil || n != 0 {
		t.Fatalf("Foreign = %d, %v before any stranger, want 0", n, err)
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		return serr
	}}
	stranger, err := lc.Listen(context.Background(), "tcp", s.Endpoints()[0])
	if err != nil {
		t.Fatalf("a same-user SO_REUSEPORT bind to the workers' port: %v", err)
	}
	defer stranger.Close()
	if n, err := s.Foreign(); err != nil || n != 1 {
		t.Errorf("Foreign = %d, %v with one stranger in the group, want 1", n, err)
	}
	admin := httptest.NewServer(s.Handler())
	defer admin.Close()
	resp, err := http.Get(admin.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var rep prefork.StatsReport
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(s.Endpoints()[0])
	if rep.Foreign != 1 || strconv.Itoa(rep.Port) != port {
		t.Errorf("/stats foreign_listeners %d on port %d, want 1 on %s", rep.Foreign, rep.Port, port)
	}
}
