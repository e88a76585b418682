package main

// These tests build the real lbbench binary and run it as a user would, on
// loopback, with real child processes.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/kubetest"
	"github.com/lbbench/lbbench/internal/neighbours"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
)

var bin string // path of the built lbbench binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lbbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The tests' runs see each other only, not the lbbench runs of
	// another checkout's tests on this machine (which would make theirs
	// invalid); TestConcurrentRunsSeeEachOther uses its own directory.
	os.Setenv(neighbours.EnvDir, filepath.Join(dir, "runs"))
	// Static, as the docker driver's FROM scratch image needs it; linked
	// again only when its sources changed. -trimpath keeps the checkout's
	// path out of the build, so a fresh clone elsewhere (CI's) finds its
	// packages in the build cache instead of compiling them all again.
	var removeBin func()
	if bin, removeBin, err = testkit.BuildStatic(".", "-trimpath"); err != nil {
		fmt.Fprintln(os.Stderr, "build lbbench:", err)
		os.Exit(2)
	}
	code := m.Run()
	removeBin()
	// A test cluster the tests brought up goes with them.
	if err := kubetest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not healthy", url)
}

// lbbenchProcs lists the live lbbench processes the test started
// (testProcs), as lines for a message.
func lbbenchProcs(t *testing.T) []string {
	t.Helper()
	return testkit.Strings(testProcs(t))
}

func TestServeReusePortSpreadsConnections(t *testing.T) {
	ps := testkit.FreePorts(t, 2)
	port, admin := ps[0], ps[1]
	cmd := start(t, "serve", "--workers", "4", "--listen", "reuseport",
		"--port", strconv.Itoa(port), "--admin", "127.0.0.1:"+strconv.Itoa(admin))
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", admin))

	seen := map[string]int{}
	for range 200 {
		seen[testkit.ServedBy(t, fmt.Sprintf("http://127.0.0.1:%d/work?ms=0", port))]++
	}
	for i := range 4 {
		if seen[strconv.Itoa(i)] == 0 {
			t.Errorf("worker %d got none of 200 fresh connections: %v", i, seen)
		}
	}
	var rep prefork.StatsReport
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats", admin))
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if len(rep.Workers) != 4 {
		t.Fatalf("stats of %d workers, want 4", len(rep.Workers))
	}
	var conns uint64
	for _, w := range rep.Workers {
		if w.Connections == 0 {
			t.Errorf("worker %d accepted no connection per /stats", w.Index)
		}
		if int(w.Requests) != seen[strconv.Itoa(w.Index)] {
			t.Errorf("worker %d: /stats says %d requests, responses attributed to it: %d", w.Index, w.Requests, seen[strconv.Itoa(w.Index)])
		}
		conns += w.Connections
	}
	if conns < 200 {
		t.Errorf("workers accepted %d connections in all, want >= 200", conns)
	}

	// SIGTERM drains and exits; no worker is left.
	cmd.signal(syscall.SIGTERM)
	select {
	case <-cmd.done:
		err := cmd.err
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM\n%s", err, cmd.out)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	waitNoProcs(t)
}

// waitNoProcs fails t unless, within 5 s, no lbbench process the test
// started (testProcs) is left: a test of its own, beside the others that
// run in parallel.
func waitNoProcs(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		procs := lbbenchProcs(t)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lbbench processes left behind:\n%s", strings.Join(procs, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// servedRequests returns the work requests the workers behind a serve
// admin address ("host:port") have completed.
func servedRequests(admin string) (uint64, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + admin + "/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var rep prefork.StatsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return 0, err
	}
	var n uint64
	for _, w := range rep.Workers {
		n += w.Requests
	}
	return n, nil
}

// serveAdmins returns the --admin addresses of the "lbbench serve"
// processes whose parent is pid (those a running "lbbench run" started).
func serveAdmins(pid int) []string {
	var admins []string
	for _, p := range testkit.Procs(func(p testkit.Proc) bool {
		return p.PPID == pid && p.Subcommand() == prefork.ServeSubcommand
	}) {
		if a := p.Arg("--" + prefork.FlagAdmin); a != "" {
			admins = append(admins, a)
		}
	}
	return admins
}

// waitRunServes waits until the workers of the "lbbench run" with the
// given pid have served n work requests (its load is flowing), and fails
// the test after timeout; log, if not nil, says what the run printed.
func waitRunServes(t *testing.T, pid int, n uint64, timeout time.Duration, log func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var served uint64
		for _, admin := range serveAdmins(pid) {
			if s, err := servedRequests(admin); err == nil {
				served += s
			}
		}
		if served >= n {
			return
		}
		if time.Now().After(deadline) {
			msg := ""
			if log != nil {
				msg = log()
			}
			t.Fatalf("the run's workers served %d requests in %v, want %d:\n%s", served, timeout, n, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestProxyLeastConnAvoidsBusyWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: targets/balancer's TestLeastConnAvoidsBusyBackend checks the policy in-process")
	}
	base := testkit.ConsecutivePorts(t, 4)
	ps := testkit.FreePorts(t, 3)
	wadmin, listen, padmin := ps[0], ps[1], ps[2]
	start(t, "serve", "--workers", "4", "--listen", "ports", "--port", strconv.Itoa(base),
		"--admin", "127.0.0.1:"+strconv.Itoa(wadmin))
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", wadmin))
	var ups []string
	for i := range 4 {
		ups = append(ups, "127.0.0.1:"+strconv.Itoa(base+i))
		// Each worker answers on its own port with its own index.
		if got := testkit.ServedBy(t, fmt.Sprintf("http://127.0.0.1:%d/work", base+i)); got != strconv.Itoa(i) {
			t.Fatalf("port %d answered as worker %s, want %d", base+i, got, i)
		}
	}
	start(t, "proxy", "--listen", "127.0.0.1:"+strconv.Itoa(listen), "--admin", "127.0.0.1:"+strconv.Itoa(padmin),
		"--upstreams", strings.Join(ups, ","), "--policy", "least_conn")
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", padmin))
	entry := fmt.Sprintf("http://127.0.0.1:%d", listen)

	// One long request occupies a worker; while it runs, short requests
	// must all go elsewhere.
	busy := make(chan string, 1)
	go func() {
		resp, err := http.Get(entry + "/work?ms=1500")
		if err != nil {
			busy <- "error: " + err.Error()
			return
		}
		resp.Body.Close()
		busy <- resp.Header.Get("X-Worker")
	}()
	var busyWorker string
	for range 100 {
		// Find the busy worker from the proxy's view: the one with an
		// active request.
		time.Sleep(20 * time.Millisecond)
		if w := activeBackend(t, padmin); w >= 0 {
			busyWorker = strconv.Itoa(w)
			break
		}
	}
	if busyWorker == "" {
		t.Fatal("the long request never showed as active")
	}
	for i := range 30 {
		if got := testkit.ServedBy(t, entry+"/work?ms=1"); got == busyWorker {
			t.Fatalf("short request %d went to worker %s, busy with the long request", i, got)
		}
	}
	if got := <-busy; got != busyWorker {
		t.Errorf("long request served by %s, proxy showed %s active", got, busyWorker)
	}
}

// activeBackend returns the index of the backend with an active request,
// or -1.
func activeBackend(t *testing.T, admin int) int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats", admin))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Backends []struct {
			Active int64 `json:"active"`
		} `json:"backends"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for i, b := range st.Backends {
		if b.Active > 0 {
			return i
		}
	}
	return -1
}

func TestPortInUse(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, args := range [][]string{
		{"serve", "--workers", "2", "--listen", "ports", "--port", port},
		{"serve", "--workers", "2", "--listen", "reuseport", "--port", port},
		{"proxy", "--listen", "127.0.0.1:" + port, "--upstreams", "127.0.0.1:1"},
	} {
		t.Run(args[0]+"-"+args[4], func(t *testing.T) {
			r := invocation{args: args, limit: 20 * time.Second}.run(t)
			if r.code == 0 {
				t.Fatalf("started on a port in use:\n%s", r.out)
			}
			if !strings.Contains(r.out, "address already in use") {
				t.Errorf("message does not say the address is in use:\n%s", r.out)
			}
			waitNoProcs(t)
		})
	}
}

// smallWorkers is the workers and workload of the small end-to-end
// scenarios: 3 workers, 1 s at 200/s, no warm-up.
const smallWorkers = `workers: {count: 3}
workload:
  arrival: {kind: constant, rate: 200}
  duration: 1s
  warmup: -1s
  classes:
    - {name: short, weight: 3, service: {dist: exp, mean: 1ms}}
    - {name: long, weight: 1, service: {value: 5ms}}
  clients: {connections: 8}
`

const smallScenario = `name: small
` + smallWorkers + `variants:
  - {name: rp, topology: reuseport}
  - {name: lc, topology: proxy, proxy: {policy: least_conn, upstream_keepalive: false}}
repeat: 1
`

func TestRunWritesResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario on real processes")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "small.yaml")
	os.WriteFile(scen, []byte(smallScenario), 0o644)
	out := filepath.Join(dir, "out")
	r := lbOK(t, "run", scen, "-o", out)
	for _, want := range []string{"variant", "rp", "lc", "p99", "results: " + filepath.Join(out, "results.json")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "[2/2]") {
		t.Errorf("no progress lines:\n%s", r.stderr)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs, want 2", res.Complete, len(res.Runs))
	}
	if res.Env.Kernel == "" || res.Env.CPUs == 0 || res.Env.GoVersion == "" {
		t.Errorf("environment not recorded: %+v", res.Env)
	}
	for _, run := range res.Runs {
		// Decoding the histograms gives back the percentiles written.
		got := run.Latency.Summarize()
		if got != run.Summary {
			t.Errorf("%s: decoded histogram gives %+v, file says %+v", run.ID, got, run.Summary)
		}
		if run.Requests < 180 || run.Requests > 220 {
			t.Errorf("%s: %d requests in 1s at 200/s", run.ID, run.Requests)
		}
		if run.Errors != 0 {
			t.Errorf("%s: %d errors: %v", run.ID, run.Errors, run.ErrorKinds)
		}
		if len(run.Classes) != 2 || run.Classes[0].Requests+run.Classes[1].Requests != run.Requests {
			t.Errorf("%s: class counts do not add up: %+v", run.ID, run.Classes)
		}
		// Every response is attributed to the worker that served it: with
		// no warm-up, the client's count per worker equals the worker's.
		var attributed uint64
		for _, w := range run.Workers {
			attributed += w.Responses
			if w.Responses != w.Requests {
				t.Errorf("%s: worker %d: client attributed %d responses, worker served %d", run.ID, w.Index, w.Responses, w.Requests)
			}
		}
		if attributed != run.Requests {
			t.Errorf("%s: %d responses attributed to workers of %d", run.ID, attributed, run.Requests)
		}
		if run.Variant == "lc" {
			if run.Proxy == nil || run.Proxy.Decisions < run.Requests {
				t.Errorf("%s: proxy counters missing or short: %+v", run.ID, run.Proxy)
			} else if run.Proxy.UpstreamConns < run.Requests {
				t.Errorf("%s: upstream keep-alive off, but %d upstream connections for %d requests", run.ID, run.Proxy.UpstreamConns, run.Requests)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary.txt")); err != nil {
		t.Error(err)
	}
	waitNoProcs(t)
}

func TestRunBadScenario(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	dir := t.TempDir()
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown topology": {strings.Replace(smallScenario, "topology: reuseport", "topology: mesh", 1), "bad.yaml:12: variants[0].topology: unknown topology \"mesh\""},
		"negative rate":    {strings.Replace(smallScenario, "rate: 200", "rate: -5", 1), "bad.yaml:4: workload.arrival.rate: must be > 0"},
		"missing workers":  {strings.Replace(smallScenario, "workers: {count: 3}\n", "", 1), "workers.count: at least 1 worker is required"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.yaml")
			os.WriteFile(path, []byte(tc.yaml), 0o644)
			r := lb(t, "run", path, "-o", filepath.Join(dir, "out"))
			if r.code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", r.code, r.out)
			}
			if !strings.Contains(r.out, tc.want) {
				t.Errorf("message lacks %q:\n%s", tc.want, r.out)
			}
		})
	}
}

func TestRunInterruptLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "long.yaml")
	os.WriteFile(scen, []byte(strings.Replace(smallScenario, "duration: 1s", "duration: 60s", 1)), 0o644)
	out := filepath.Join(dir, "out")
	cmd := invocation{args: []string{"run", scen, "-o", out}}.cmdOf(t)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "[1/2]") {
			break
		}
	}
	// The workers are up and the load flows: they have served some of it.
	waitRunServes(t, cmd.Process.Pid, 20, 30*time.Second, log.String)
	if n := len(lbbenchProcs(t)); n < 3 {
		t.Fatalf("expected run, serve and workers alive, found %d processes", n)
	}
	cmd.Process.Signal(os.Interrupt)
	go io.Copy(&log, stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not stop after Ctrl-C:\n%s", log.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d after Ctrl-C, want 130\n%s", code, log.String())
	}
	waitNoProcs(t)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("no results saved after Ctrl-C: %v", err)
	}
	if res.Complete || len(res.Runs) != 0 || !strings.Contains(res.Error, "context canceled") {
		t.Errorf("results after Ctrl-C: complete=%v runs=%d error=%q", res.Complete, len(res.Runs), res.Error)
	}
}
