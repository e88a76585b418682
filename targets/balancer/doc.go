// Package balancer is lbbench's built-in load balancer: it spreads client
// traffic over fixed pools of upstream workers and counts every decision,
// so a benchmark can report not only which arrangement is faster but why.
//
// In layer-7 mode (L7) a Proxy parses each HTTP request, routes it by path
// prefix to a pool (Config.Pools; the default pool is Config.Upstreams),
// lets the pool's Policy pick a backend and forwards the request with a
// Forwarded header added, on upstream connections it pools itself: keep-alive
// on or off, a connection closed after N requests, at most M idle per
// backend. In layer-4 mode (L4) it picks a backend once per client TCP
// connection and then copies bytes both ways without parsing them.
// Upstreams are host:port or unix:/path. Layer 7 speaks HTTP/1.1 to
// upstreams and does not carry protocol upgrades (WebSocket); layer 4
// carries anything.
//
// The policies (package balance) are chosen by their snake_case names
// (round_robin, random, p2c, least_conn, ewma_least_conn, peak_ewma,
// hash). Every policy skips backends that passive health marked down after
// they refused a connection; a request gets 502 only when its pool has none
// left, or when its own upstream refused and retries (Config.Retries) are
// off.
//
// Serve forwards layer 7 with its own HTTP/1.1 forwarder (fast.go): request
// heads are parsed in place and forwarded by copying their bytes, bodies are
// streamed through pooled buffers, and a small GET costs no allocation
// (BenchmarkProxyForward). Its sockets are read and written with raw
// system calls (sysconn.go), and it makes no read that can only find
// nothing: it sends a request upstream from inside the wait for the answer,
// and waits for a client's next request inside one read of the client's
// socket, so that a keep-alive request costs a read and a write on each
// side, one non-blocking peek at the pooled upstream connection before it
// is reused (five system calls in all, as nginx's five), and a share of
// the runtime's epoll waits. The peek is the price of never handing one
// upstream's bytes to another client: an upstream connection is reused
// only when nothing was read past the end of its last response and it
// received nothing while idle; otherwise it is closed and counted
// (Stats.Unsolicited). ServeHTTP, the http.Handler form, and Serve with
// Config.NetHTTP use net/http and httputil.ReverseProxy instead.
//
// Timeouts: Config.Timeout bounds the upstream's connect and its response
// head, Config.ReadTimeout each wait for more of a response body, and
// HeaderTimeout and IdleTimeout the client's side. A request head may be
// MaxHeaderBytes long in all, in lines of any length within it.
//
// Config.InjectCost makes the proxy spend that much CPU time in busy work
// (package internal/busywork) per request it forwards, or per client
// connection in layer 4: a known extra cost, for checking that a gate
// judging the proxy's CPU per request fails it ("lbbench run --baseline
// REF --inject-cost proxy=D").
//
// Serve runs a Proxy on a listener, with an optional admin API (/healthz
// and /stats) on a second one, and drains in-flight work when its context
// is done. The per-request decision (route, pick, count) uses atomics only
// and policies do not allocate. Stats reports decisions, client-side and
// upstream connections, unsolicited closes, retries, and per backend
// (labelled with its pool)
// requests, errors, active and peak active requests and connections.
package balancer
