package main

// End-to-end tests of the nginx and HAProxy engines: the real engines,
// configured by package engines and run by the local driver, in front of
// real "lbbench serve" workers on TCP ports and on Unix sockets.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/driver/local"
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/topologies"
)

const (
	engineWorkers = 4
	// slowFactor makes worker 0 this many times slower than the others.
	slowFactor = 4
)

// workerSet is one "lbbench serve" whose workers are the upstreams.
type workerSet struct {
	upstreams []string
	admin     string
}

// startWorkers runs engineWorkers workers with worker 0 slowed down, on
// consecutive TCP ports or on Unix sockets in a short directory.
func startWorkers(t *testing.T, unix bool) workerSet {
	t.Helper()
	ws := workerSet{admin: "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))}
	args := []string{"serve", "--workers", strconv.Itoa(engineWorkers), "--admin", ws.admin,
		"--slowdown", "0=" + strconv.Itoa(slowFactor)}
	if unix {
		// A Unix socket path holds at most 107 bytes: t.TempDir can be longer.
		dir, err := os.MkdirTemp("", "lbe")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		args = append(args, "--listen", "unix", "--socket-dir", dir)
		for i := range engineWorkers {
			ws.upstreams = append(ws.upstreams, "unix:"+filepath.Join(dir, fmt.Sprintf("worker-%d.sock", i)))
		}
	} else {
		base := testkit.ConsecutivePorts(t, engineWorkers)
		args = append(args, "--listen", "ports", "--port", strconv.Itoa(base))
		for i := range engineWorkers {
			ws.upstreams = append(ws.upstreams, "127.0.0.1:"+strconv.Itoa(base+i))
		}
	}
	start(t, args...)
	waitHealthy(t, "http://"+ws.admin+"/healthz")
	return ws
}

// counters returns each worker's request and connection counts.
func (ws workerSet) counters(t *testing.T) (reqs, conns [engineWorkers]uint64) {
	t.Helper()
	resp, err := http.Get("http://" + ws.admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep prefork.StatsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Workers {
		reqs[w.Index], conns[w.Index] = w.Requests, w.Connections
	}
	return reqs, conns
}

// engineProc is the plan process running engine in front of ups, as the
// proxy topology renders it.
func engineProc(t *testing.T, engine, policy string, keepAlive bool, ups []string) topologies.Process {
	t.Helper()
	ports := testkit.FreePorts(t, 2) // listen, admin
	p, err := topologies.EngineProcess(scenario.ProxySpec{Engine: engine, Policy: policy, UpstreamKeepAlive: &keepAlive}, ups,
		"127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1]), nil)
	if err != nil {
		t.Fatalf("%v (make setup installs the engines)", err)
	}
	return p
}

// listenOf returns the proxy's listen address: the first "listen" or
// "bind" in its configuration.
func listenOf(t *testing.T, p topologies.Process) string {
	t.Helper()
	for _, line := range strings.Split(p.Files[0].Content, "\n") {
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
		if len(f) == 2 && (f[0] == "listen" || f[0] == "bind") {
			return f[1]
		}
	}
	t.Fatal("no listen address")
	return ""
}

// engineProcs lists live nginx or HAProxy processes whose command line
// mentions dir or whose working directory is under it (nginx's workers
// rewrite their command line to "nginx: worker process").
func engineProcs(t *testing.T, dir string) []string {
	t.Helper()
	var exes []string
	for _, e := range engines.Names() {
		if b, err := engines.Find(context.Background(), e); err == nil {
			exes = append(exes, b.Path)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, d := range procs {
		exe, err := os.Readlink(filepath.Join(d, "exe"))
		if err != nil {
			continue
		}
		match := false
		for _, e := range exes {
			match = match || exe == e
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(d, "cwd"))
		if match && (strings.Contains(string(cmdline), dir) || strings.HasPrefix(cwd, dir)) {
			// State, parent and group too: whom a survivor was left to
			// says which part of the teardown missed it.
			var state string
			if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil {
				if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) >= 3 {
					state = fmt.Sprintf(" (state %s, ppid %s, pgid %s)", f[0], f[1], f[2])
				}
			}
			found = append(found, filepath.Base(d)+state+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// waitNoEngineProcs fails the test if an engine started under dir is still
// running after a few seconds.
func waitNoEngineProcs(t *testing.T, dir string) {
	t.Helper()
	// guard's own bound: up to 5 s for the engine to stop on SIGTERM,
	// then a second to kill the orphans; and slack for a loaded machine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := engineProcs(t, dir)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine processes left behind:\n%s", strings.Join(procs, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// load sends n requests from conc concurrent keep-alive clients and
// returns how many responses each worker's X-Worker header claimed.
func load(t *testing.T, url string, n, conc int) [engineWorkers]int {
	t.Helper()
	var (
		mu     sync.Mutex
		counts [engineWorkers]int
		wg     sync.WaitGroup
		errs   = make(chan error, conc)
	)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer client.CloseIdleConnections()
	for c := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += conc {
				resp, err := client.Get(url)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				w, err := strconv.Atoi(resp.Header.Get("X-Worker"))
				if resp.StatusCode != http.StatusOK || err != nil || w < 0 || w >= engineWorkers {
					errs <- fmt.Errorf("GET %s: %s, X-Worker %q", url, resp.Status, resp.Header.Get("X-Worker"))
					return
				}
				mu.Lock()
				counts[w]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return counts
}

func share(c [engineWorkers]int, i int) float64 {
	total := 0
	for _, x := range c {
		total += x
	}
	return float64(c[i]) / float64(total)
}

// TestEnginePolicies runs nginx and HAProxy with every policy they support,
// upstream keep-alive on and off, in front of workers on TCP ports and on
// Unix sockets, and checks that requests reach the workers in the pattern
// the policy implies.
func TestEnginePolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nginx and HAProxy 40 times (about 30 s)")
	}
	const (
		seqPerWorker = 10 // sequential requests per worker for round robin
		concN        = 160
		conc         = 8
		slowQuery    = "/work?ms=2" // worker 0 takes slowFactor times longer
	)
	for _, transport := range []string{"tcp", "unix"} {
		t.Run(transport, func(t *testing.T) {
			ws := startWorkers(t, transport == "unix")
			for _, engine := range engines.Names() {
				for _, keepAlive := range []bool{true, false} {
					t.Run(fmt.Sprintf("%s/keepalive=%v", engine, keepAlive), func(t *testing.T) {
						// round_robin runs first: its share of the slow worker under
						// concurrent load is what least_conn and p2c must beat.
						rrShare := -1.0
						for _, policy := range []string{"round_robin", "least_conn", "p2c", "random", "hash"} {
							t.Run(policy, func(t *testing.T) {
								logDir := t.TempDir()
								driver, err := local.New(bin, logDir)
								if err != nil {
									t.Fatal(err)
								}
								proc := engineProc(t, engine, policy, keepAlive, ws.upstreams)
								entry := "http://" + listenOf(t, proc)
								ctx := context.Background()
								dep, err := driver.UpPlan(ctx, topologies.Plan{ID: "e2e", Entry: entry, Processes: []topologies.Process{proc}})
								if err != nil {
									t.Fatal(err)
								}
								t.Cleanup(func() { dep.Down(context.Background()) })
								reqs0, conns0 := ws.counters(t)

								sent := 0
								switch policy {
								case "round_robin":
									c := load(t, entry+"/work?ms=0", seqPerWorker*engineWorkers, 1)
									sent += seqPerWorker * engineWorkers
									for i, n := range c {
										if n != seqPerWorker {
											t.Errorf("one at a time, worker %d got %d of %d requests, want %d each: %v", i, n, sent, seqPerWorker, c)
										}
									}
									c = load(t, entry+slowQuery, concN, conc)
									sent += concN
									rrShare = share(c, 0)
									t.Logf("concurrent, worker 0 %dx slower: %v (share %.2f)", slowFactor, c, rrShare)
									if rrShare < 0.20 || rrShare > 0.30 {
										t.Errorf("round robin gave the slow worker a share of %.2f, want about 0.25: %v", rrShare, c)
									}
								case "least_conn", "p2c":
									c := load(t, entry+slowQuery, concN, conc)
									sent += concN
									s := share(c, 0)
									t.Logf("concurrent, worker 0 %dx slower: %v (share %.2f, round robin %.2f)", slowFactor, c, s, rrShare)
									if rrShare < 0 {
										t.Fatal("round robin did not run first")
									}
									// Wide margin: the slow worker's queue is 4x longer.
									if s > 0.8*rrShare {
										t.Errorf("%s gave the slow worker a share of %.2f, round robin %.2f: want clearly fewer", policy, s, rrShare)
									}
									for i, n := range c {
										if n == 0 {
											t.Errorf("%s sent worker %d nothing: %v", policy, i, c)
										}
									}
								case "random":
									c := load(t, entry+"/work?ms=0", 80, 1)
									sent += 80
									for i, n := range c {
										// P(a worker gets none of 80) = (3/4)^80, about 1e-10.
										if n == 0 {
											t.Errorf("random sent worker %d none of 80 requests: %v", i, c)
										}
									}
								case "hash":
									const keys = 24
									first := map[int]int{}
									used := map[int]bool{}
									for round := range 2 {
										for k := range keys {
											c := load(t, fmt.Sprintf("%s/work?ms=0&key=%d", entry, k), 1, 1)
											sent++
											w := 0
											for i, n := range c {
												if n == 1 {
													w = i
												}
											}
											if round == 0 {
												first[k] = w
												used[w] = true
											} else if first[k] != w {
												t.Errorf("key %d went to worker %d, then to %d", k, first[k], w)
											}
										}
									}
									if len(used) < 2 {
										t.Errorf("%d keys all hashed to one worker: %v", keys, first)
									}
								}

								// The workers' own counters agree, and show keep-alive.
								reqs1, conns1 := ws.counters(t)
								var dreq, dconn uint64
								for i := range engineWorkers {
									dreq += reqs1[i] - reqs0[i]
									dconn += conns1[i] - conns0[i]
								}
								if dreq != uint64(sent) {
									t.Errorf("workers served %d requests, %d were sent", dreq, sent)
								}
								if keepAlive && dconn*2 > dreq {
									t.Errorf("keep-alive on: %d upstream connections for %d requests", dconn, dreq)
								}
								if !keepAlive && dconn != dreq {
									t.Errorf("keep-alive off: %d upstream connections for %d requests", dconn, dreq)
								}

								// The engine's own counters, through the driver.
								st, err := dep.Stats(ctx)
								if err != nil {
									t.Fatal(err)
								}
								checkEngineStats(t, engine, st.Engine, sent, keepAlive)

								if err := dep.Down(ctx); err != nil {
									t.Error(err)
								}
								waitNoEngineProcs(t, logDir)
							})
						}
					})
				}
			}
		})
	}
	waitNoProcs(t)
}

// checkEngineStats checks what the driver read from the engine against the
// requests the test sent through it.
func checkEngineStats(t *testing.T, engine string, st *results.EngineStats, sent int, keepAlive bool) {
	t.Helper()
	if st == nil || st.Engine != engine {
		t.Fatalf("engine stats %+v, want %s's", st, engine)
	}
	switch engine {
	case engines.Nginx:
		// Every proxied request plus the driver's health checks and this read.
		if st.Nginx == nil || st.Nginx.Requests < uint64(sent)+2 {
			t.Errorf("stub_status %+v after %d requests", st.Nginx, sent)
		}
	case engines.HAProxy:
		var sessions, connects uint64
		for _, r := range st.HAProxy {
			if r.Proxy == "workers" && r.Name != "BACKEND" {
				sessions += r.Sessions
				connects += r.Connects
			}
		}
		if sessions != uint64(sent) {
			t.Errorf("HAProxy's servers counted %d sessions, %d requests were sent", sessions, sent)
		}
		if !keepAlive && connects != uint64(sent) || keepAlive && connects*2 > uint64(sent) {
			t.Errorf("keep-alive %v: HAProxy made %d connections for %d requests", keepAlive, connects, sent)
		}
	}
}

// TestEngineRejectedConfig: a configuration the engine rejects stops the
// bring-up with an error that includes the engine's own message, and
// leaves nothing running.
func TestEngineRejectedConfig(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	// Valid to lbbench, but longer than a Unix socket address holds.
	long := "unix:/" + strings.Repeat("x", 120) + "/worker-0.sock"
	for engine, want := range map[string]string{engines.Nginx: "nginx: [emerg]", engines.HAProxy: "[ALERT]"} {
		t.Run(engine, func(t *testing.T) {
			logDir := t.TempDir()
			driver, err := local.New(bin, logDir)
			if err != nil {
				t.Fatal(err)
			}
			proc := engineProc(t, engine, "least_conn", true, []string{long})
			_, err = driver.UpPlan(context.Background(), topologies.Plan{ID: "bad", Processes: []topologies.Process{proc}})
			if err == nil {
				t.Fatal("Up succeeded with a configuration the engine should reject")
			}
			for _, w := range []string{want, "configuration check", "local: bad: proxy"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			t.Logf("%v", err)
			waitNoEngineProcs(t, logDir)
		})
	}
}

const enginesScenario = `name: engines-small
` + smallWorkers + `variants:
  - {name: ng, topology: proxy, proxy: {engine: nginx, policy: least_conn, upstream_keepalive: false}}
  - {name: hp, topology: proxy, proxy: {engine: haproxy, policy: least_conn, upstream_keepalive: true}}
repeat: 1
`

// TestRunEnginesScenario runs a scenario with nginx and HAProxy variants
// through "lbbench run" and checks the results: engine versions in the
// environment, engine counters per run, every response from a worker.
func TestRunEnginesScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario through nginx and HAProxy")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "engines.yaml")
	os.WriteFile(scen, []byte(enginesScenario), 0o644)
	out := filepath.Join(dir, "out")
	invocation{args: []string{"run", scen, "-o", out, "-q"}, limit: 2 * time.Minute}.mustRun(t)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range map[string]string{"nginx": "nginx/", "haproxy": "HAProxy version"} {
		if !strings.Contains(res.Env.Engines[e], want) {
			t.Errorf("environment has %s version %q", e, res.Env.Engines[e])
		}
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs", res.Complete, len(res.Runs))
	}
	for _, run := range res.Runs {
		if run.Errors != 0 || run.Requests < 180 {
			t.Errorf("%s: %d requests, %d errors %v", run.ID, run.Requests, run.Errors, run.ErrorKinds)
		}
		var attributed uint64
		for _, w := range run.Workers {
			attributed += w.Responses
			if w.Responses != w.Requests {
				t.Errorf("%s: worker %d: %d responses attributed, %d served", run.ID, w.Index, w.Responses, w.Requests)
			}
		}
		if attributed != run.Requests {
			t.Errorf("%s: %d of %d responses attributed to workers", run.ID, attributed, run.Requests)
		}
		if run.Proxy != nil {
			t.Errorf("%s: built-in proxy counters on an engine run", run.ID)
		}
		engine := map[string]string{"ng": engines.Nginx, "hp": engines.HAProxy}[run.Variant]
		checkEngineStats(t, engine, run.Engine, int(run.Requests), run.Variant == "hp")
	}
	waitNoProcs(t)
	waitNoEngineProcs(t, dir)
}

// TestEnginesScenarioIsValid loads the shipped engines scenario.
func TestEnginesScenarioIsValid(t *testing.T) {
	s, err := loadScenario("engines")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, v := range s.Variants {
		if v.Proxy.Policy != "least_conn" {
			t.Errorf("%s: policy %s", v.Name, v.Proxy.Policy)
		}
		seen[v.Proxy.Engine+"/"+strconv.FormatBool(v.Proxy.KeepAliveOn())]++
	}
	for _, e := range []string{"builtin", "nginx", "haproxy"} {
		for _, ka := range []string{"true", "false"} {
			if seen[e+"/"+ka] != 1 {
				t.Errorf("no single %s variant with keep-alive %s: %v", e, ka, seen)
			}
		}
	}
}

// TestKilledRunLeavesNoEngine kills "lbbench run" outright (SIGKILL, no
// cleanup) while nginx or HAProxy serves, and checks that the engine goes
// too: nginx's workers outlive a killed master, so the engine runs under
// "lbbench guard", which the kernel tells when lbbench dies.
func TestKilledRunLeavesNoEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs lbbench twice for a few seconds each")
	}
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	for _, engine := range engines.Names() {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			scen := filepath.Join(dir, "kill.yaml")
			yaml := strings.Replace(strings.Replace(enginesScenario, "duration: 1s", "duration: 60s", 1),
				"  - {name: hp, topology: proxy, proxy: {engine: haproxy, policy: least_conn, upstream_keepalive: true}}\n", "", 1)
			yaml = strings.Replace(yaml, "engine: nginx", "engine: "+engine, 1)
			os.WriteFile(scen, []byte(yaml), 0o644)
			out := filepath.Join(dir, "out")
			cmd := start(t, "run", scen, "-o", out, "-q")
			// Wait until the engine serves: its processes run in out.
			deadline := time.Now().Add(20 * time.Second)
			want := map[string]int{engines.Nginx: 3, engines.HAProxy: 1}[engine] // nginx: master and 2 workers (2 CPUs) or more
			for len(engineProcs(t, out)) < min(want, 2) {
				if time.Now().After(deadline) {
					t.Fatalf("%s never started under %s", engine, out)
				}
				time.Sleep(50 * time.Millisecond)
			}
			// The load flows: through the engine, the workers served some.
			waitRunServes(t, cmd.process.Pid, 20, 20*time.Second, nil)
			t.Logf("before SIGKILL: %v", engineProcs(t, out))
			cmd.signal(syscall.SIGKILL) // lbbench alone, not its group
			cmd.wait()
			waitNoEngineProcs(t, out)
			waitNoProcs(t)
		})
	}
}

// TestGuard: guard passes the command's output and exit status through,
// and refuses to run nothing.
func TestGuard(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"ok", []string{"guard", "--", "sh", "-c", "echo hello"}, 0, "hello"},
		{"status", []string{"guard", "--", "sh", "-c", "echo nope >&2; exit 3"}, 3, "nope"},
		{"flags pass through", []string{"guard", "--", "sh", "-c", "echo $0", "-t"}, 0, "-t"},
		{"no command", []string{"guard"}, 2, "no command given"},
		{"missing", []string{"guard", "--", "/nonexistent/engine"}, 2, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lb(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.out, tc.out) {
				t.Errorf("%v: exit %d, output %q; want %d and %q", tc.args, r.code, r.out, tc.code, tc.out)
			}
		})
	}
}

// TestGuardTakesOrphansDown: what the guarded command leaves running when
// it exits (as nginx's workers are left when their master is killed) goes
// with it: re-parented to guard, a subreaper, and killed before guard
// exits.
func TestGuardTakesOrphansDown(t *testing.T) {
	t.Parallel() // judges behaviour, not timing: runs beside the other parallel tests
	r := lbOK(t, "guard", "--", "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	out := r.stdout
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("guard printed %q", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return // gone (or a zombie of init's, not running)
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the command's background process %d outlived guard: %s", pid, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
