package driver

import (
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/worker"
)

// workerCounters copies the workers' own counters into the results
// format's struct, field by field (see proxyCounters).
func workerCounters(ws []worker.Stats) []results.WorkerStats {
	out := make([]results.WorkerStats, len(ws))
	for i, w := range ws {
		out[i] = results.WorkerStats{Index: w.Index, Requests: w.Requests, Connections: w.Connections, MaxQueue: w.MaxQueue}
	}
	return out
}

// proxyCounters copies the built-in proxy's counters into the results
// format's own struct, field by field, so that a change on either side
// is a compile error here rather than a silent change of results.json.
func proxyCounters(st *balancer.Stats) *results.ProxyStats {
	if st == nil {
		return nil
	}
	out := &results.ProxyStats{
		Policy: st.Policy, Mode: st.Mode, Decisions: st.Decisions,
		ClientConns: st.ClientConns, UpstreamConns: st.UpstreamConns, Unsolicited: st.Unsolicited,
		Retries: st.Retries, NoBackend: st.NoBackend,
		Backends: make([]results.BackendStats, len(st.Backends)),
		Pools:    make([]results.PoolStats, len(st.Pools)),
	}
	for i, b := range st.Backends {
		out.Backends[i] = results.BackendStats{
			Addr: b.Addr, Pool: b.Pool, Requests: b.Requests, Errors: b.Errors,
			Active: b.Active, PeakActive: b.PeakActive, UpstreamConns: b.UpstreamConns,
			IdleConns: b.IdleConns, DownMarks: b.DownMarks, Down: b.Down,
		}
	}
	for i, p := range st.Pools {
		out.Pools[i] = results.PoolStats{
			Name: p.Name, Prefix: p.Prefix, Policy: p.Policy,
			Requests: p.Requests, Decisions: p.Decisions, NoBackend: p.NoBackend,
		}
	}
	return out
}

// engineCounters copies nginx's or HAProxy's counters into the results
// format's own struct, field by field (see proxyCounters).
func engineCounters(st *engines.Stats) *results.EngineStats {
	if st == nil {
		return nil
	}
	out := &results.EngineStats{Engine: st.Engine}
	if n := st.Nginx; n != nil {
		out.Nginx = &results.NginxStatus{
			Active: n.Active, Accepts: n.Accepts, Handled: n.Handled, Requests: n.Requests,
			Reading: n.Reading, Writing: n.Writing, Waiting: n.Waiting,
		}
	}
	if st.HAProxy != nil {
		out.HAProxy = make([]results.HAProxyRow, len(st.HAProxy))
	}
	for i, r := range st.HAProxy {
		out.HAProxy[i] = results.HAProxyRow{
			Proxy: r.Proxy, Name: r.Name, Status: r.Status,
			Sessions: r.Sessions, MaxSessions: r.MaxSessions, Selected: r.Selected,
			Requests: r.Requests, Connects: r.Connects, Reuses: r.Reuses,
			Responses2xx: r.Responses2xx, Responses5xx: r.Responses5xx,
			ConnErrors: r.ConnErrors, RespErrors: r.RespErrors,
		}
	}
	return out
}
