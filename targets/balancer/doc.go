// Package balancer is lbbench's built-in layer-7 reverse proxy: it forwards
// each HTTP request to one of a fixed pool of upstream workers, chosen per
// request by a Policy, and counts what it did so a benchmark can report it.
//
// Policies are registered by stable snake_case names (round_robin,
// least_conn) and built with NewPolicy; Register adds more. A Proxy is an
// http.Handler; Serve runs it on a listener, with an optional admin API
// (/healthz and /stats) on a second one, and drains in-flight requests when
// its context is done.
//
// The per-request path (pick, count, forward) uses atomics only; policies do
// not allocate. Counters are exposed per backend (requests, errors, active
// and peak active requests) and per proxy (decisions, client-side and
// upstream-side connections) through Stats.
package balancer
