package model

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// defaultScenario is the built-in default scenario, shortened to d.
func defaultScenario(t *testing.T, d time.Duration) scenario.Scenario {
	t.Helper()
	data, err := scenarios.Get(scenarios.Default)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("default", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	s.Workload.Duration = d
	return s
}

func run(t *testing.T, s scenario.Scenario, v scenario.Variant) (*results.Run, Stats) {
	t.Helper()
	r, st, err := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1))
	if err != nil {
		t.Fatal(err)
	}
	return r, st
}

func variant(t *testing.T, s scenario.Scenario, name string) scenario.Variant {
	t.Helper()
	for _, v := range s.Variants {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no variant %s", name)
	return scenario.Variant{}
}

// TestDefaultScenarioOrdering: at 70% load with keep-alive connections
// pinned by SO_REUSEPORT, some workers queue while others idle; least_conn
// sees load, so its tail is far lower. Upstream keep-alive does not change
// the built-in proxy's choices, so the two least_conn variants simulate
// alike.
func TestDefaultScenarioOrdering(t *testing.T) {
	s := defaultScenario(t, 20*time.Second)
	rp, _ := run(t, s, variant(t, s, "reuseport"))
	ka, _ := run(t, s, variant(t, s, "least_conn_keepalive"))
	nka, _ := run(t, s, variant(t, s, "least_conn_no_keepalive"))
	t.Logf("p99: reuseport %v, least_conn %v", rp.Summary.P99, ka.Summary.P99)
	if rp.Summary.P99 < ka.Summary.P99*3/2 {
		t.Errorf("reuseport p99 %v is not well above least_conn's %v", rp.Summary.P99, ka.Summary.P99)
	}
	if ka.Summary != nka.Summary {
		t.Errorf("upstream keep-alive changed the simulated latency: %+v vs %+v", ka.Summary, nka.Summary)
	}
	if ka.Proxy.UpstreamConns >= nka.Proxy.UpstreamConns || nka.Proxy.UpstreamConns != nka.Requests+nka.WarmupRequests {
		t.Errorf("upstream connections: keep-alive %d, without %d for %d requests", ka.Proxy.UpstreamConns, nka.Proxy.UpstreamConns, nka.Requests+nka.WarmupRequests)
	}
	// Every variant sees the same requests.
	if rp.Requests != ka.Requests || rp.Requests == 0 {
		t.Errorf("requests: reuseport %d, least_conn %d", rp.Requests, ka.Requests)
	}
	for i := range rp.Classes {
		if rp.Classes[i].Requests != ka.Classes[i].Requests {
			t.Errorf("class %s: %d vs %d requests", rp.Classes[i].Name, rp.Classes[i].Requests, ka.Classes[i].Requests)
		}
	}
}

// TestReusePortPinsConnections: with keep-alive every request of a
// connection goes to the worker the kernel hashed it to; without it, every
// request is a new connection and a new draw.
func TestReusePortPinsConnections(t *testing.T) {
	s := defaultScenario(t, 2*time.Second)
	s.Workload.Clients.Connections = 1
	r, _ := run(t, s, reusePort)
	busy := 0
	for _, w := range r.Workers {
		if w.Responses > 0 {
			busy++
		}
		if w.Connections > 1 {
			t.Errorf("worker %d accepted %d connections from a client with one", w.Index, w.Connections)
		}
	}
	if busy != 1 || r.Generator.Opened != 1 {
		t.Errorf("one keep-alive connection reached %d workers (opened %d)", busy, r.Generator.Opened)
	}

	off := false
	s.Workload.Clients.KeepAlive = &off
	r, _ = run(t, s, reusePort)
	var conns uint64
	for _, w := range r.Workers {
		if w.Responses == 0 {
			t.Errorf("worker %d got nothing with a new connection per request", w.Index)
		}
		conns += w.Connections
	}
	if total := r.Requests + r.WarmupRequests; conns != total || r.Generator.Opened != total {
		t.Errorf("%d requests without keep-alive opened %d connections (workers accepted %d)", total, r.Generator.Opened, conns)
	}
}

// TestConnectionCapQueues: with one client connection only one request is
// in flight at a time, so four workers behind least_conn serve like one
// M/M/1 queue at the full rate.
func TestConnectionCapQueues(t *testing.T) {
	const rate, mu = 700.0, 1000.0
	lc := proxyVariant("least_conn")
	s := queueScenario(t, 4, 1, rate, time.Millisecond, 300000, lc)
	s.Workload.Clients.Connections = 1
	_, st := run(t, s, lc)
	wait := rate / mu / (mu - rate) * float64(time.Second)
	want := time.Duration(wait)
	within(t, "one connection: M/M/1 mean wait", st.MeanWait, want, 0.05)
}

// TestRequestsPerConn closes a connection after every 5 requests.
func TestRequestsPerConn(t *testing.T) {
	s := defaultScenario(t, time.Second)
	s.Workload.Clients.RequestsPerConn = 5
	r, _ := run(t, s, reusePort)
	total := r.Requests + r.WarmupRequests
	if min, max := total/5, total/5+uint64(s.Workload.Clients.Connections); r.Generator.Opened < min || r.Generator.Opened > max {
		t.Errorf("%d requests, 5 per connection, opened %d connections (want %d to %d)", total, r.Generator.Opened, min, max)
	}
}

// TestL4BalancesConnections: layer 4 least_conn counts connections, so 64
// keep-alive connections, all opened at the start (preopen: on demand the
// default load needs fewer), land 8 on each of 8 workers.
func TestL4BalancesConnections(t *testing.T) {
	s := defaultScenario(t, 2*time.Second)
	s.Workload.Clients.Preopen = true
	v := scenario.Variant{Name: "l4", Topology: scenario.L4}.WithDefaults()
	r, _ := run(t, s, v)
	for _, w := range r.Workers {
		if w.Connections != 8 {
			t.Errorf("worker %d: %d connections, want 8", w.Index, w.Connections)
		}
	}
	if r.Proxy == nil || r.Proxy.Mode != "l4" || r.Proxy.Decisions != 64 {
		t.Errorf("proxy stats %+v, want l4 with 64 decisions", r.Proxy)
	}
}

// TestPoolsRoute sends /event requests to their own pool.
func TestPoolsRoute(t *testing.T) {
	s := defaultScenario(t, time.Second)
	s.Workload.Classes[1].Path = "/event"
	v := scenario.Variant{Name: "pools", Topology: scenario.L7Pools, Proxy: scenario.ProxySpec{Pools: []scenario.Pool{
		{Name: "write", Prefix: "/event", Workers: []int{0, 1}},
		{Name: "read", Prefix: "/", Policy: "round_robin", Workers: []int{2, 3, 4, 5, 6, 7}},
	}}}.WithDefaults()
	s.Variants = []scenario.Variant{v}
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	r, _ := run(t, s, v)
	if got, want := r.ByWorker[0]+r.ByWorker[1], r.Classes[1].Requests; got != want {
		t.Errorf("workers 0 and 1 served %d, want the %d /event requests", got, want)
	}
	if len(r.Proxy.Pools) != 2 || r.Proxy.Pools[0].Policy != "least_conn" || r.Proxy.Pools[1].Policy != "round_robin" {
		t.Errorf("pools %+v", r.Proxy.Pools)
	}
}

// TestEveryPolicyRuns simulates each registered policy of the balancer.
func TestEveryPolicyRuns(t *testing.T) {
	s := defaultScenario(t, time.Second)
	for _, p := range []string{"round_robin", "random", "p2c", "least_conn", "ewma_least_conn", "peak_ewma", "hash"} {
		t.Run(p, func(t *testing.T) {
			v := scenario.Variant{Name: p, Topology: scenario.L7, Proxy: scenario.ProxySpec{Policy: p}}.WithDefaults()
			r, _ := run(t, s, v)
			if !r.Valid || r.Proxy.Decisions != r.Requests+r.WarmupRequests {
				t.Errorf("valid %v, %d decisions for %d requests", r.Valid, r.Proxy.Decisions, r.Requests+r.WarmupRequests)
			}
			if p == "hash" && r.Skew() != 0 && !isInf(r.Skew()) {
				t.Errorf("hash by path spread one path over workers: skew %v", r.Skew())
			}
		})
	}
}

func isInf(x float64) bool { return x > 1e300 }

// TestSlowWorker: round robin gives a worker 3 times slower the same
// share, so it is busier; least_conn sends it less.
func TestSlowWorker(t *testing.T) {
	s := defaultScenario(t, 5*time.Second)
	s.Workers.Slow = []scenario.Slow{{Index: 0, Factor: 3}}
	_, rr := run(t, s, proxyVariant("round_robin"))
	lcRun, _ := run(t, s, proxyVariant("least_conn"))
	if rr.Utilization[0] < 2*rr.Utilization[1] {
		t.Errorf("utilization of the slow worker %.2f, of another %.2f", rr.Utilization[0], rr.Utilization[1])
	}
	if lcRun.ByWorker[0] >= lcRun.ByWorker[1] {
		t.Errorf("least_conn sent the slow worker %d, another %d", lcRun.ByWorker[0], lcRun.ByWorker[1])
	}
}

// TestNamedClientsAndSteps fills per-client and per-step results.
func TestNamedClientsAndSteps(t *testing.T) {
	s := defaultScenario(t, 0)
	s.Workload.Arrival = workloads.Arrival{Kind: workloads.Steps, Steps: []workloads.Step{{RatePerSec: 300, Duration: time.Second}, {RatePerSec: 900, Duration: time.Second}}}
	s.Workload.Clients = workloads.Clients{Named: []workloads.NamedClient{{Name: "big", Share: 3, Connections: 8}, {Name: "small", Share: 1}}}
	s.Workload = s.Workload.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	r, _ := run(t, s, reusePort)
	if len(r.Clients) != 2 || len(r.Steps) != 2 {
		t.Fatalf("%d clients, %d steps", len(r.Clients), len(r.Steps))
	}
	if r.Clients[0].Requests < 2*r.Clients[1].Requests {
		t.Errorf("share 3 client sent %d, share 1 client %d", r.Clients[0].Requests, r.Clients[1].Requests)
	}
	if r.Steps[1].Requests < 2*r.Steps[0].Requests {
		t.Errorf("steps of 300/s and 900/s got %d and %d requests", r.Steps[0].Requests, r.Steps[1].Requests)
	}
	if r.Generator.Connections != 9 {
		t.Errorf("connections %d, want 8+1", r.Generator.Connections)
	}
}

// TestSameArrivalsAsTheGenerator: a simulated run offers exactly the
// requests the generator's Pacer and Targeter produce for the spec.
func TestSameArrivalsAsTheGenerator(t *testing.T) {
	s := defaultScenario(t, time.Second)
	r, _ := run(t, s, reusePort)
	spec := s.Workload
	p := workloads.NewPacer(spec)
	p.SetWait(func(time.Time) {})
	tg, err := workloads.NewTargeter(spec, "http://x")
	if err != nil {
		t.Fatal(err)
	}
	var warm, measured uint64
	classes := make([]uint64, len(spec.Classes))
	for n := uint64(0); ; n++ {
		if _, done := p.Pace(0, n); done {
			break
		}
		off, _ := p.Offset(n)
		c, _ := tg.Draw()
		if off < spec.WarmupTime() {
			warm++
			continue
		}
		measured++
		classes[c]++
	}
	if r.WarmupRequests != warm || r.Requests != measured {
		t.Errorf("simulated %d+%d requests, the pacer schedules %d+%d", r.WarmupRequests, r.Requests, warm, measured)
	}
	for i, c := range r.Classes {
		if c.Requests != classes[i] {
			t.Errorf("class %s: %d, targeter draws %d", c.Name, c.Requests, classes[i])
		}
	}
}

// TestDeterministic: the same seed gives the same run; another repetition
// a different one.
func TestDeterministic(t *testing.T) {
	s := defaultScenario(t, time.Second)
	v := variant(t, s, "reuseport")
	a, _, err := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1))
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1))
	c, _, _ := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 2))
	if !reflect.DeepEqual(a.ByWorker, b.ByWorker) || a.Summary != b.Summary {
		t.Errorf("two runs of one seed differ: %+v vs %+v", a.Summary, b.Summary)
	}
	if reflect.DeepEqual(a.ByWorker, c.ByWorker) {
		t.Errorf("repetitions 1 and 2 gave the same per-worker counts %v", a.ByWorker)
	}
}

func TestUnsupportedTopology(t *testing.T) {
	s := defaultScenario(t, time.Second)
	v := scenario.Variant{Name: "x", Topology: "shared"}
	if _, _, err := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
	s.Variants = append(s.Variants, v)
	if err := Simulable(s); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "variants[3] (x)") {
		t.Errorf("got %v, want ErrUnsupported naming variants[3] (x)", err)
	}
	s.Variants = s.Variants[:3]
	s.Workers.Target = &scenario.Target{Exec: "my-server --port {port}"}
	if err := Simulable(s); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "workers.target") {
		t.Errorf("got %v, want ErrUnsupported naming workers.target", err)
	}
	if _, _, err := SimulateRun(context.Background(), s.Workers, s.Variants[0], s.WorkloadFor(s.Variants[0], 1)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "workers.target") {
		t.Errorf("SimulateRun: got %v, want ErrUnsupported naming workers.target", err)
	}
}

func TestSimulateCancelled(t *testing.T) {
	s := defaultScenario(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := s.Variants[0]
	if run, _, err := SimulateRun(ctx, s.Workers, v, s.WorkloadFor(v, 1)); !errors.Is(err, context.Canceled) || run != nil {
		t.Errorf("got %v and a run %v, want context.Canceled and none", err, run != nil)
	}
}
