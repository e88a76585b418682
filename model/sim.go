package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// Driver is the results.Env driver name of simulated results.
const Driver = "sim"

// Topologies lists the topologies SimulateRun models, sorted. The nginx and
// HAProxy engines of the proxy and unix topologies are modelled by the
// built-in policy of the same name; unix is proxy (the hop costs nothing
// either way). The shared and shared-unix topologies are not modelled:
// which worker takes a connection from a shared socket depends on the accept strategy and the
// kernel in ways the model does not capture.
var Topologies = []string{scenario.L4, scenario.L7, scenario.L7Pools, scenario.Proxy, scenario.ReusePort, scenario.Unix}

// ErrUnsupported is returned (wrapped) for what the model does not
// simulate: a topology not in Topologies, or a foreign workers.target.
var ErrUnsupported = errors.New("model: not simulated")

// Stats are one simulated run's exact means over its measured requests,
// which the histograms of a RunResult round: for checks against queueing
// theory.
type Stats struct {
	// Requests counts measured requests.
	Requests uint64
	// MeanLatency runs from the intended send time to the response.
	MeanLatency time.Duration
	// MeanWait runs from the intended send time to the start of service:
	// the wait for a client connection plus the wait in the worker's queue
	// (the proxy hop is free).
	MeanWait time.Duration
	// MeanService is the mean service time, slowdowns included.
	MeanService time.Duration
	// Utilization is each worker's busy time over the simulated time and
	// its slots, warm-up included.
	Utilization []float64
}

// Simulable returns nil when SimulateRun can model every variant of s, or
// the first reason it cannot, wrapping ErrUnsupported.
func Simulable(s scenario.Scenario) error {
	if s.Workers.Target != nil {
		return fmt.Errorf("%w: workers.target runs a foreign server, whose service times the model cannot know", ErrUnsupported)
	}
	for i, v := range s.Variants {
		if !slices.Contains(Topologies, v.Topology) {
			return fmt.Errorf("%w: variants[%d] (%s) has topology %q (simulated: %s)", ErrUnsupported, i, v.Name, v.Topology, strings.Join(Topologies, ", "))
		}
		if s.WorkloadFor(v, 0).Deterministic() {
			return fmt.Errorf("%w: variants[%d] (%s): closed-loop and burst workloads are not simulated (lbbench model balls answers bursts exactly)", ErrUnsupported, i, v.Name)
		}
	}
	return nil
}

// SimulateRun simulates one run of variant v, with workers w, offered
// spec (defaulted and validated: the run's workload,
// scenario.Scenario.WorkloadFor, whose seed gives the round its requests),
// and returns the run in the measured schema (its ID and Rep are left for
// the caller) and its exact means. With round 1's workload it sees
// exactly the arrivals, classes and service times a measured run asks
// for. The run is valid unless it has no measured request. The loop over
// a scenario's rounds is harness.Run's, with the simulator as its driver
// (package job).
func SimulateRun(ctx context.Context, w scenario.Workers, v scenario.Variant, spec workloads.Spec) (*results.Run, Stats, error) {
	if !slices.Contains(Topologies, v.Topology) {
		return nil, Stats{}, fmt.Errorf("%w: variant %s has topology %q (simulated: %s)", ErrUnsupported, v.Name, v.Topology, strings.Join(Topologies, ", "))
	}
	if w.Target != nil {
		return nil, Stats{}, fmt.Errorf("%w: workers.target runs a foreign server, whose service times the model cannot know", ErrUnsupported)
	}
	if spec.Deterministic() {
		return nil, Stats{}, fmt.Errorf("%w: variant %s: closed-loop and burst workloads are not simulated (lbbench model balls answers bursts exactly)", ErrUnsupported, v.Name)
	}
	e, err := newEngine(w, v, spec)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("model: variant %s: %w", v.Name, err)
	}
	started := time.Now()
	if err := e.run(ctx); err != nil {
		return nil, Stats{}, err
	}
	m, err := e.rec.finish()
	if err != nil {
		return nil, Stats{}, fmt.Errorf("model: variant %s: %w", v.Name, err)
	}
	m.Generator = results.Generator{Streams: len(e.streams), KeepAlive: spec.Clients.KeepAliveOn(), RequestsPerConn: spec.Clients.RequestsPerConn, Preopen: spec.Clients.Preopen}
	for _, st := range e.streams {
		m.Generator.Connections += st.cap
		m.Generator.Opened += st.opened
	}
	run := &results.Run{
		Variant:     v.Name,
		Seed:        spec.Seed,
		Started:     started,
		Entry:       Driver + "://" + v.Topology,
		Measurement: *m,
		Summary:     m.Latency.Summarize(),
		Valid:       m.Requests > 0,
	}
	if !run.Valid {
		run.Invalid = []string{"no measured requests"}
	}
	for i, w := range e.workers {
		run.Workers = append(run.Workers, results.Worker{
			Index: i, Responses: m.ByWorker[i], Requests: w.requests, Connections: w.conns, MaxQueue: w.maxQueue,
		})
	}
	if e.mode != modeReusePort {
		run.Proxy = e.proxyStats()
	}
	st := Stats{Requests: e.rec.count}
	if n := float64(e.rec.count); n > 0 {
		st.MeanLatency = time.Duration(e.rec.sumLatency / n)
		st.MeanWait = time.Duration(e.rec.sumWait / n)
		st.MeanService = time.Duration(e.rec.sumService / n)
	}
	for _, w := range e.workers {
		st.Utilization = append(st.Utilization, float64(w.busyNs)/float64(max(e.now, 1))/float64(w.slots))
	}
	return run, st, nil
}

// newEngine builds the model of variant v with workers w under spec.
func newEngine(w scenario.Workers, v scenario.Variant, spec workloads.Spec) (*engine, error) {
	ss := spec.Streams() // the generator's streams, as harness splits them
	e := &engine{
		freeReq:     none,
		freeConn:    none,
		kernel:      rand.New(rand.NewPCG(spec.Seed, 0x2545f4914f6cdd1d)),
		upKeepAlive: v.Proxy.KeepAliveOn(),
		maxIdle:     v.Proxy.MaxIdle,
		upPreopen:   v.Proxy.Preopen,
		rec:         newRecorder(spec, ss, w.Count),
	}
	if e.maxIdle == 0 {
		e.maxIdle = balance.DefaultMaxIdle
	}
	for _, s := range ss {
		tg, err := workloads.NewTargeter(s.Spec, "http://"+Driver)
		if err != nil {
			return nil, err
		}
		p := workloads.NewPacer(s.Spec)
		p.SetWait(func(time.Time) {}) // simulated time: never sleep
		c := s.Spec.Clients
		e.streams = append(e.streams, stream{
			pacer: p, targeter: tg, cap: c.Connections, keepAlive: c.KeepAliveOn(), preopen: c.Preopen,
			perConn: int32(c.RequestsPerConn), idleHead: none, idleTail: none, waitHead: none, waitTail: none,
		})
	}
	e.workers = make([]worker, w.Count)
	for i := range e.workers {
		e.workers[i] = worker{slots: w.Concurrency, slow: 1, qHead: none, qTail: none}
	}
	for _, sl := range w.Slow {
		e.workers[sl.Index].slow = sl.Factor
	}
	switch v.Topology {
	case scenario.ReusePort:
		e.mode = modeReusePort
		return e, nil
	case scenario.L4:
		e.mode = modeL4
	default:
		e.mode = modeL7
	}
	all := make([]int, w.Count)
	for i := range all {
		all[i] = i
	}
	if len(v.Proxy.Pools) == 0 {
		if err := e.addPool(balance.DefaultPool, "/", v.Proxy.Policy, v.Proxy.PolicyArgs, all); err != nil {
			return nil, err
		}
	}
	for _, pl := range v.Proxy.Pools {
		for _, wi := range pl.Workers {
			if wi >= w.Count {
				return nil, fmt.Errorf("pool %s: worker %d does not exist (workers.count is %d)", pl.Name, wi, w.Count)
			}
		}
		if err := e.addPool(pl.Name, pl.Prefix, pl.Policy, pl.PolicyArgs, pl.Workers); err != nil {
			return nil, err
		}
	}
	// Route each class by its path, longest prefix first, as the proxy
	// does; a path no pool matches goes to the default pool, or fails.
	for _, c := range spec.Classes {
		path, _, _ := strings.Cut(c.Path, "?")
		best := -1
		for i, p := range e.pools {
			if strings.HasPrefix(path, p.prefix) && (best < 0 || len(p.prefix) > len(e.pools[best].prefix)) {
				best = i
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("class %s: path %s matches no pool", c.Name, c.Path)
		}
		e.classPool = append(e.classPool, int32(best))
		req, err := classRequest(c)
		if err != nil {
			return nil, err
		}
		e.classReq = append(e.classReq, req)
	}
	return e, nil
}

// addPool adds a balancer pool over the given workers, with a new
// instance of the registered policy running on simulated time.
func (e *engine) addPool(name, prefix, policy string, args map[string]string, workers []int) error {
	pol, err := balance.NewPolicy(policy, args)
	if err != nil {
		return err
	}
	// A policy that reads the clock (peak_ewma) reads the simulated one;
	// nanotime is > 0, so is this.
	balance.SetClock(pol, func() int64 { return e.now + 1 })
	addrs := make([]string, len(workers))
	ws := make([]int32, len(workers))
	for i, wi := range workers {
		addrs[i] = "worker-" + strconv.Itoa(wi)
		ws[i] = int32(wi)
	}
	p := &pool{
		name: name, prefix: prefix, policy: policy, pol: pol,
		backends: balance.NewBackends(name, addrs), workers: ws,
		upIdle: make([]int, len(workers)), upConns: make([]uint64, len(workers)),
	}
	p.observer, _ = pol.(balance.Observer)
	// proxy.preopen: each backend's connections are open, idle, at the
	// start. A backend here is one worker, so which of its connections a
	// request takes does not matter; only the counts do.
	for i, wi := range workers {
		p.upIdle[i] = e.upPreopen
		p.upConns[i] = uint64(e.upPreopen)
		e.upstreamConns += uint64(e.upPreopen)
		e.workers[wi].conns += uint64(e.upPreopen)
	}
	e.pools = append(e.pools, p)
	return nil
}

// classRequest is the request a policy sees for class c: its method, path
// and query and headers (the per-request service-time parameters are left
// out, so a hash on them does not match a real run).
func classRequest(c workloads.Class) (*http.Request, error) {
	u, err := url.Parse("http://" + Driver + c.Path)
	if err != nil {
		return nil, fmt.Errorf("class %s: path %q: %w", c.Name, c.Path, err)
	}
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	return &http.Request{Method: c.Method, URL: u, Header: h, Host: u.Host}, nil
}

// proxyStats returns the simulated proxy's counters in the built-in
// proxy's schema.
func (e *engine) proxyStats() *results.ProxyStats {
	st := &results.ProxyStats{Mode: "l7", ClientConns: e.clientConns, UpstreamConns: e.upstreamConns}
	if e.mode == modeL4 {
		st.Mode = "l4"
	}
	for _, p := range e.pools {
		if p.name == balance.DefaultPool {
			st.Policy = p.policy
		}
		st.Decisions += p.decisions
		st.Pools = append(st.Pools, results.PoolStats{Name: p.name, Prefix: p.prefix, Policy: p.policy, Requests: p.requests, Decisions: p.decisions})
		for i, b := range p.backends {
			st.Backends = append(st.Backends, results.BackendStats{
				Addr: b.Addr, Pool: p.name, Requests: b.Requests(), Active: b.Active(),
				PeakActive: b.PeakActive(), UpstreamConns: p.upConns[i], IdleConns: p.upIdle[i],
			})
		}
	}
	return st
}
