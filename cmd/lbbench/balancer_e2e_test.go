package main

// End-to-end tests of the built-in balancer: real "lbbench serve" workers,
// real "lbbench proxy" processes in each mode, real keep-alive clients.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
)

// balWorkers starts n workers on consecutive ports and returns their
// upstream addresses and admin address.
func balWorkers(t *testing.T, n int) (ups []string, admin string) {
	t.Helper()
	base := testkit.ConsecutivePorts(t, n)
	admin = "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	start(t, "serve", "--workers", strconv.Itoa(n), "--listen", "ports", "--port", strconv.Itoa(base), "--admin", admin)
	waitHealthy(t, "http://"+admin+"/healthz")
	for i := range n {
		ups = append(ups, "127.0.0.1:"+strconv.Itoa(base+i))
	}
	return ups, admin
}

// balProxy starts "lbbench proxy" with args and returns its entry URL and
// admin address.
func balProxy(t *testing.T, args ...string) (entry, admin string) {
	t.Helper()
	listen := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	admin = "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	start(t, append([]string{"proxy", "--listen", listen, "--admin", admin}, args...)...)
	waitHealthy(t, "http://"+admin+"/healthz")
	return "http://" + listen, admin
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// keepAliveClient sends requests one at a time on a single keep-alive
// connection and counts the connections it opened.
type keepAliveClient struct {
	c     *http.Client
	tr    *http.Transport
	conns int
}

func newKeepAliveClient() *keepAliveClient {
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	return &keepAliveClient{c: &http.Client{Transport: tr}, tr: tr}
}

// get sends GET url and returns the X-Worker header.
func (k *keepAliveClient) get(t *testing.T, url string) string {
	t.Helper()
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			k.conns++
		}
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, url, nil)
	resp, err := k.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return resp.Header.Get("X-Worker")
}

// TestBalancerL4VersusL7: six keep-alive clients with very uneven request
// counts (4 to 128, shares 1 to 32) go one after another through the
// proxy in front of four workers. Layer 4 round robin places each client's
// connection once, so the counters show 6 decisions and the per-worker
// counts inherit the clients' skew; layer 7 round robin decides per
// request, so there are 252 decisions and exactly 63 requests per worker.
func TestBalancerL4VersusL7(t *testing.T) {
	requests := []int{4, 8, 16, 32, 64, 128} // shares 1, 2, 4, 8, 16, 32; 252 = 63 cycles of 4
	total := 0
	for _, n := range requests {
		total += n
	}
	tests := []struct {
		name string
		args []string
		// want per-worker responses, decisions and upstream connections
		// (-1: checked separately)
		perWorker     [4]int
		decisions     int
		upstreamConns int
	}{
		// Connections arrive in client order and round robin places client
		// i on worker i mod 4: worker 0 gets clients 4+64, worker 1 8+128.
		{"l4", []string{"--mode", "l4"}, [4]int{68, 136, 16, 32}, 6, 6},
		{"l7", []string{"--mode", "l7"}, [4]int{63, 63, 63, 63}, total, -1},
		{"l7 upstream keep-alive off", []string{"--mode", "l7", "--upstream-keepalive=false"}, [4]int{63, 63, 63, 63}, total, total},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups, wadmin := balWorkers(t, 4)
			entry, padmin := balProxy(t, append([]string{"--policy", "round_robin", "--upstreams", strings.Join(ups, ",")}, tt.args...)...)

			served := make([]map[string]int, len(requests)) // per client: worker -> responses
			var perWorker [4]int
			clients := make([]*keepAliveClient, len(requests))
			for i, n := range requests {
				clients[i] = newKeepAliveClient()
				defer clients[i].tr.CloseIdleConnections()
				served[i] = map[string]int{}
				for range n {
					w := clients[i].get(t, entry+"/work?ms=0")
					served[i][w]++
					wi, err := strconv.Atoi(w)
					if err != nil {
						t.Fatalf("X-Worker %q", w)
					}
					perWorker[wi]++
				}
				if clients[i].conns != 1 {
					t.Fatalf("client %d opened %d connections, want 1", i, clients[i].conns)
				}
			}
			var st balancer.Stats
			getJSON(t, "http://"+padmin+"/stats", &st)
			var ws prefork.StatsReport
			getJSON(t, "http://"+wadmin+"/stats", &ws)

			var skew []string
			for i, b := range st.Backends {
				skew = append(skew, fmt.Sprintf("%s: %d by proxy, %d by worker", b.Addr, b.Requests, ws.Workers[i].Requests))
			}
			t.Logf("%s: %d requests from %d client connections: %d decisions, %d upstream connections; per worker %v\n  %s",
				tt.name, total, st.ClientConns, st.Decisions, st.UpstreamConns, perWorker, strings.Join(skew, "\n  "))

			if perWorker != tt.perWorker {
				t.Errorf("responses per worker %v, want %v", perWorker, tt.perWorker)
			}
			if st.ClientConns != uint64(len(requests)) || st.Decisions != uint64(tt.decisions) {
				t.Errorf("client_conns %d, decisions %d; want %d, %d", st.ClientConns, st.Decisions, len(requests), tt.decisions)
			}
			if tt.upstreamConns >= 0 && st.UpstreamConns != uint64(tt.upstreamConns) {
				t.Errorf("upstream_conns %d, want %d", st.UpstreamConns, tt.upstreamConns)
			}
			if tt.upstreamConns < 0 && (st.UpstreamConns < 4 || st.UpstreamConns > 16) {
				// One pooled connection per worker, give or take a request
				// that starts before the previous one's connection is back.
				t.Errorf("upstream_conns %d with keep-alive, want about 4", st.UpstreamConns)
			}
			var workerConns uint64
			for i, w := range ws.Workers {
				workerConns += w.Connections
				if int(w.Requests) != perWorker[i] {
					t.Errorf("worker %d counted %d requests, clients saw %d", i, w.Requests, perWorker[i])
				}
			}
			if workerConns != st.UpstreamConns {
				t.Errorf("workers accepted %d connections, proxy opened %d", workerConns, st.UpstreamConns)
			}
			for i, s := range served {
				if tt.name == "l4" && len(s) != 1 {
					t.Errorf("l4: client %d reached workers %v, want one", i, s)
				}
				if tt.name != "l4" && len(s) != 4 {
					// Sequential clients and exact round robin: every client
					// with a multiple of 4 requests reaches all 4 workers.
					t.Errorf("l7: client %d reached workers %v, want all 4", i, s)
				}
			}
			if tt.name == "l4" {
				var conns []uint64
				for _, b := range st.Backends {
					conns = append(conns, b.Requests)
				}
				if !slices.Equal(conns, []uint64{2, 2, 1, 1}) {
					t.Errorf("l4: connections per backend %v, want [2 2 1 1]", conns)
				}
			}
		})
	}
}

// TestBalancerPoolsIsolate: with /event routed to a write pool of worker 3
// and everything else to a read pool of workers 0 to 2, no request crosses
// into the wrong pool, whichever path and however concurrent.
func TestBalancerPoolsIsolate(t *testing.T) {
	ups, wadmin := balWorkers(t, 4)
	entry, padmin := balProxy(t,
		"--pool", "read:/:least_conn:"+strings.Join(ups[:3], ","),
		"--pool", "write:/event:round_robin:"+ups[3])
	paths := []string{"/work?ms=1", "/event?ms=1", "/event/42?ms=0", "/", "/ev?ms=0", "/work/event?ms=0", "/events?ms=0"}
	isWrite := func(p string) bool { return strings.HasPrefix(p, "/event") }

	var mu sync.Mutex
	var wrong []string
	sent := map[bool]int{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c := newKeepAliveClient()
			defer c.tr.CloseIdleConnections()
			for i := range 40 {
				p := paths[(g+i)%len(paths)]
				w := c.get(t, entry+p)
				mu.Lock()
				sent[isWrite(p)]++
				if (w == "3") != isWrite(p) {
					wrong = append(wrong, p+" served by worker "+w)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(wrong) > 0 {
		t.Fatalf("%d requests crossed pools, for example %v", len(wrong), wrong[:min(5, len(wrong))])
	}

	var st balancer.Stats
	getJSON(t, "http://"+padmin+"/stats", &st)
	pools := map[string]balancer.PoolStats{}
	for _, p := range st.Pools {
		pools[p.Name] = p
	}
	if pools["read"].Requests != uint64(sent[false]) || pools["write"].Requests != uint64(sent[true]) || len(st.Pools) != 2 {
		t.Errorf("pool counters %+v, sent %d reads and %d writes", st.Pools, sent[false], sent[true])
	}
	var ws prefork.StatsReport
	getJSON(t, "http://"+wadmin+"/stats", &ws)
	for i, b := range st.Backends {
		wantPool := "read"
		if i == 3 {
			wantPool = "write"
		}
		if b.Pool != wantPool || b.Addr != ups[i] || b.Requests != ws.Workers[i].Requests {
			t.Errorf("backend %d: %+v; worker counted %d requests", i, b, ws.Workers[i].Requests)
		}
	}
	if ws.Workers[3].Requests != uint64(sent[true]) {
		t.Errorf("write worker served %d, want the %d writes", ws.Workers[3].Requests, sent[true])
	}
	t.Logf("read pool %+v; write pool %+v", pools["read"], pools["write"])
}

// TestBalancerUnixUpstreams: both modes reach workers on Unix sockets.
func TestBalancerUnixUpstreams(t *testing.T) {
	dir, err := os.MkdirTemp("", "lbu") // short: a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	admin := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	start(t, "serve", "--workers", "2", "--listen", "unix", "--socket-dir", dir, "--admin", admin)
	waitHealthy(t, "http://"+admin+"/healthz")
	ups := []string{"unix:" + filepath.Join(dir, "worker-0.sock"), "unix:" + filepath.Join(dir, "worker-1.sock")}
	for _, mode := range []string{"l7", "l4"} {
		t.Run(mode, func(t *testing.T) {
			entry, _ := balProxy(t, "--mode", mode, "--policy", "round_robin", "--upstreams", strings.Join(ups, ","))
			seen := map[string]int{}
			for range 4 {
				seen[testkit.ServedBy(t, entry+"/work?ms=0")]++ // a new connection each
			}
			if seen["0"] != 2 || seen["1"] != 2 {
				t.Errorf("workers %v, want 0 and 1 twice each", seen)
			}
		})
	}
}

// TestBalancerRetriesSkipDeadWorker: a dead upstream is tried once, marked
// down and skipped; with --retries 1 no client sees an error.
func TestBalancerRetriesSkipDeadWorker(t *testing.T) {
	ups, _ := balWorkers(t, 2)
	dead := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	entry, padmin := balProxy(t, "--policy", "round_robin", "--retries", "1", "--down-for", "1m",
		"--upstreams", strings.Join([]string{dead, ups[0], ups[1]}, ","))
	for range 12 {
		testkit.ServedBy(t, entry+"/work?ms=0")
	}
	var st balancer.Stats
	getJSON(t, "http://"+padmin+"/stats", &st)
	if st.Retries != 1 || st.Backends[0].Errors != 1 || !st.Backends[0].Down || st.Backends[1].Requests+st.Backends[2].Requests != 12 {
		t.Errorf("stats %+v", st)
	}
}

// TestBalancerTopologiesRun runs a scenario with the l4, l7 and l7-pools
// topologies through "lbbench run" and checks the counters land in the
// results.
func TestBalancerTopologiesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three variants")
	}
	const scenario = `name: balancer
workers: {count: 4}
workload:
  arrival: {kind: constant, rate: 100}
  duration: 1s
  warmup: -1s
  classes:
    - {name: read, path: /work, weight: 4, service: {value: 1ms}}
    - {name: event, path: /event, weight: 1, service: {value: 1ms}}
  clients: {connections: 4}
variants:
  - {name: l4, topology: l4, proxy: {policy: round_robin}}
  - {name: l7, topology: l7, proxy: {policy: p2c, policy_args: {seed: "3"}, close_after: 10}}
  - name: pools
    topology: l7-pools
    proxy:
      pools:
        - {name: read, prefix: /, workers: [0, 1, 2]}
        - {name: write, prefix: /event, policy: round_robin, workers: [3]}
repeat: 1
`
	dir := t.TempDir()
	path := filepath.Join(dir, "balancer.yaml")
	os.WriteFile(path, []byte(scenario), 0o644)
	lbOK(t, "run", path, "-o", filepath.Join(dir, "out"), "--quiet")
	res, err := results.ReadFile(filepath.Join(dir, "out", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	for _, run := range res.Runs {
		p := run.Proxy
		if p == nil || run.Errors != 0 {
			t.Errorf("%s: proxy %+v, %d errors", run.Variant, p, run.Errors)
			continue
		}
		t.Logf("%s: %d requests, %d decisions, %d client conns, %d upstream conns", run.Variant, run.Requests, p.Decisions, p.ClientConns, p.UpstreamConns)
		switch run.Variant {
		case "l4":
			if p.Mode != "l4" || p.Decisions != p.ClientConns || p.UpstreamConns != p.ClientConns || p.Decisions >= run.Requests {
				t.Errorf("l4 counters %+v for %d requests", p, run.Requests)
			}
		case "l7":
			// Closing after 10 requests: at least one connection per 10.
			if p.Mode != "l7" || p.Decisions != run.Requests || p.UpstreamConns < run.Requests/10 {
				t.Errorf("l7 counters %+v for %d requests", p, run.Requests)
			}
		case "pools":
			var write uint64
			for _, b := range p.Backends {
				if b.Pool == "write" {
					write += b.Requests
				}
			}
			if len(p.Pools) != 2 || write == 0 || run.Workers[3].Requests != write {
				t.Errorf("pools counters %+v; worker 3 served %d", p, run.Workers[3].Requests)
			}
		}
	}
	waitNoProcs(t)
}

// TestInjectCostE2E: "lbbench serve --inject-cost" and "lbbench proxy
// --inject-cost" spend at least that much CPU per request, as their own
// /stats count it (two ticks of slack, for where it is read from /proc's
// 10 ms ticks).
func TestInjectCostE2E(t *testing.T) {
	const cost, n = 3 * time.Millisecond, 60
	base := testkit.ConsecutivePorts(t, 2)
	wadmin := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	start(t, "serve", "--workers", "2", "--listen", "ports", "--port", strconv.Itoa(base), "--admin", wadmin, "--inject-cost", cost.String())
	waitHealthy(t, "http://"+wadmin+"/healthz")
	ups := "127.0.0.1:" + strconv.Itoa(base) + ",127.0.0.1:" + strconv.Itoa(base+1)
	entry, padmin := balProxy(t, "--upstreams", ups, "--policy", "round_robin", "--inject-cost", cost.String())

	cpu := func() (proxy, workers time.Duration) {
		var ps balancer.Stats
		getJSON(t, "http://"+padmin+"/stats", &ps)
		var ws prefork.StatsReport
		getJSON(t, "http://"+wadmin+"/stats", &ws)
		for _, w := range ws.Workers {
			workers += w.CPU
		}
		return ps.CPU, workers
	}
	proxy0, workers0 := cpu()
	k := newKeepAliveClient()
	for range n {
		k.get(t, entry+"/work")
	}
	proxy1, workers1 := cpu()
	t.Logf("%d requests, %s injected: proxy %s, workers %s of CPU", n, cost, proxy1-proxy0, workers1-workers0)
	const slack = 20 * time.Millisecond
	if got := proxy1 - proxy0; got < n*cost-slack {
		t.Errorf("proxy: %d requests used %s of CPU, want at least %s (%s each)", n, got, n*cost, cost)
	}
	if got := workers1 - workers0; got < n*cost-slack {
		t.Errorf("workers: %d requests used %s of CPU, want at least %s (%s each)", n, got, n*cost, cost)
	}
}
