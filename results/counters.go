package results

import "time"

// The counter structs below are the results format's own record of what the
// targets counted. Drivers fill them from the processes' answers (the
// built-in proxy's /stats, nginx's stub_status, HAProxy's "show stat"), so a
// field renamed inside a target changes a conversion that no longer
// compiles, never results.json silently.

// WorkerStats holds one worker's own counters, as its supervisor reports
// them at the end of a run. Drivers fill it; Run joins it with the
// generator's per-worker response counts into Run.Workers, which is what
// results.json holds.
type WorkerStats struct {
	// Index is the worker's index, from 0.
	Index int
	// Requests counts the work requests it completed, Connections the
	// connections it accepted; MaxQueue is the longest its queue of
	// requests waiting for a slot ever was.
	Requests, Connections uint64
	MaxQueue              int64
}

// Roles of ProcessCPU.
const (
	RoleWorkers   = "workers"
	RoleProxy     = "proxy"
	RoleGenerator = "generator"
)

// ProcessCPU is the CPU time one process (with its descendants) used
// during a run's load, warm-up included: user plus system time, from /proc
// on the host or in the process's container (its supervisor reads it
// there), or from the container's cgroup.
type ProcessCPU struct {
	// Role is RoleWorkers, RoleProxy or RoleGenerator.
	Role string `json:"role"`
	// Name says which: "worker 3", "lbbench proxy", "nginx".
	Name string `json:"name"`
	// Worker is a worker's index, -1 for other roles.
	Worker int `json:"worker"`
	// Time is the CPU time used.
	Time time.Duration `json:"time_ns"`
}

// ProxyStats holds the built-in proxy's counters for a run's bring-up:
// warm-up and the driver's health checks included.
type ProxyStats struct {
	// Policy is the default pool's policy or, with named pools only, each
	// pool's as "read=least_conn,write=round_robin".
	Policy string `json:"policy"`
	// Mode is "l7" or "l4".
	Mode string `json:"mode"`
	// Decisions counts backends chosen: one per request (l7) or per client
	// connection (l4), plus one per retry.
	Decisions uint64 `json:"decisions"`
	// ClientConns counts client connections the proxy accepted.
	ClientConns uint64 `json:"client_conns"`
	// UpstreamConns counts upstream connections opened.
	UpstreamConns uint64 `json:"upstream_conns"`
	// Unsolicited counts upstream connections closed instead of reused
	// because the upstream sent bytes no request asked for (past a
	// response's end, or while idle); absent when none.
	Unsolicited uint64 `json:"unsolicited,omitempty"`
	// Retries counts backends tried after one refused the connection.
	Retries uint64 `json:"retries"`
	// NoBackend counts requests (l7, answered 502) or connections (l4,
	// closed) for which no backend was available.
	NoBackend uint64 `json:"no_backend"`
	// Backends are every pool's backends: the default pool's first, then
	// each named pool's in order.
	Backends []BackendStats `json:"backends"`
	// Pools are the pools in the same order.
	Pools []PoolStats `json:"pools"`
}

// BackendStats is one proxy backend's counters.
type BackendStats struct {
	// Addr is the worker's address; Pool the pool it served in.
	Addr string `json:"addr"`
	Pool string `json:"pool"`
	// Requests and Errors count requests (l7) or connections (l4) sent to
	// the backend and those that failed.
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// Active is the number in flight when the counters were read;
	// PeakActive the most at once.
	Active     int64 `json:"active"`
	PeakActive int64 `json:"peak_active"`
	// UpstreamConns counts connections opened to the backend.
	UpstreamConns uint64 `json:"upstream_conns"`
	// IdleConns is the number of idle upstream connections kept (l7).
	IdleConns int `json:"idle_conns"`
	// DownMarks counts the times passive health marked the backend down;
	// Down says whether it was down when the counters were read.
	DownMarks uint64 `json:"down_marks"`
	Down      bool   `json:"down"`
}

// PoolStats is one proxy pool's counters.
type PoolStats struct {
	Name   string `json:"name"`
	Prefix string `json:"prefix"`
	Policy string `json:"policy"`
	// Requests counts requests routed to the pool (l7) or connections
	// accepted (l4); Decisions the backends chosen for them; NoBackend
	// those that found none available.
	Requests  uint64 `json:"requests"`
	Decisions uint64 `json:"decisions"`
	NoBackend uint64 `json:"no_backend"`
}

// EngineStats holds nginx's or HAProxy's own counters at the end of a run.
// They cover the engine's whole life, warm-up and health checks included.
type EngineStats struct {
	// Engine is "nginx" or "haproxy".
	Engine string `json:"engine"`
	// Nginx is nginx's stub_status page.
	Nginx *NginxStatus `json:"nginx,omitempty"`
	// HAProxy holds the rows of HAProxy's "show stat".
	HAProxy []HAProxyRow `json:"haproxy,omitempty"`
}

// NginxStatus is nginx's stub_status page.
type NginxStatus struct {
	// Active is the number of open client connections, idle ones included.
	Active int64 `json:"active"`
	// Accepts and Handled count accepted and handled client connections;
	// they differ only when nginx ran out of connections.
	Accepts uint64 `json:"accepts"`
	Handled uint64 `json:"handled"`
	// Requests counts client requests.
	Requests uint64 `json:"requests"`
	// Reading, Writing and Waiting split Active: reading a request,
	// writing a response (or waiting for the upstream), idle.
	Reading int64 `json:"reading"`
	Writing int64 `json:"writing"`
	Waiting int64 `json:"waiting"`
}

// HAProxyRow is one row of HAProxy's "show stat": a frontend, a backend or
// a server. Counters the row's kind does not have are zero.
type HAProxyRow struct {
	// Proxy is the frontend's or backend's name (pxname).
	Proxy string `json:"proxy"`
	// Name is "FRONTEND", "BACKEND" or a server's name (svname).
	Name string `json:"name"`
	// Status is "OPEN", "UP", "no check", ... (status).
	Status string `json:"status,omitempty"`
	// Sessions counts sessions, which for a server means requests sent to
	// it (stot); MaxSessions is the most at once (smax).
	Sessions    uint64 `json:"sessions"`
	MaxSessions uint64 `json:"max_sessions"`
	// Selected counts the times the balancer chose this server (lbtot).
	Selected uint64 `json:"selected,omitempty"`
	// Requests counts HTTP requests (req_tot).
	Requests uint64 `json:"requests,omitempty"`
	// Connects counts upstream connection attempts and Reuses requests sent
	// on an idle connection instead (connect, reuse).
	Connects uint64 `json:"connects,omitempty"`
	Reuses   uint64 `json:"reuses,omitempty"`
	// Responses2xx and Responses5xx count responses by class (hrsp_2xx,
	// hrsp_5xx).
	Responses2xx uint64 `json:"responses_2xx,omitempty"`
	Responses5xx uint64 `json:"responses_5xx,omitempty"`
	// ConnErrors and RespErrors count failed upstream connections and
	// responses (econ, eresp).
	ConnErrors uint64 `json:"conn_errors,omitempty"`
	RespErrors uint64 `json:"resp_errors,omitempty"`
}
