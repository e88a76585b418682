package balancer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/internal/proccpu"
)

// errNoBackend is the error of a request whose pool has no available
// backend.
var errNoBackend = errors.New("balancer: no backend available")

// Proxy is the built-in balancer over fixed pools of backends. In layer-7
// mode it is an http.Handler; Serve runs it in either mode, with its admin
// API. It is safe for concurrent use.
type Proxy struct {
	cfg      Config
	routes   []*route           // named pools, longest prefix first
	fallback *route             // the default pool; nil when a named pool has prefix "/"
	pools    []*route           // every pool, in Stats order: default first, then Config.Pools
	backends []*balance.Backend // every backend, in Stats order
	ups      []*upstream        // how to reach backends[i], and its layer-7 connection pool
	rp       *httputil.ReverseProxy

	decisions   atomic.Uint64
	clientConns atomic.Uint64
	upCounts    upCounts
	retries     atomic.Uint64
	noBackend   atomic.Uint64
}

// route is one pool at run time.
type route struct {
	name, prefix, policyName string
	policy                   balance.Policy
	observer                 balance.Observer // the policy, if it observes latency
	needsRequest             bool             // the policy reads the request (Serve's forwarder builds one)
	backends                 []*balance.Backend
	ups                      []*upstream // ups[i] reaches backends[i] (Backend.Index)
	requests                 atomic.Uint64
	decisions                atomic.Uint64
	noBackend                atomic.Uint64
}

// New builds a Proxy from cfg after applying its defaults and validating it.
// It opens no connection: upstreams are dialed on demand.
func New(cfg Config) (*Proxy, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg}
	add := func(name, prefix, policy string, args map[string]string, addrs []string) error {
		pol, err := balance.NewPolicy(policy, args)
		if err != nil {
			return err
		}
		rt := &route{name: name, prefix: prefix, policyName: policy, policy: pol, backends: balance.NewBackends(name, addrs)}
		rt.observer, _ = pol.(balance.Observer)
		_, rt.needsRequest = pol.(*balance.Hash)
		rt.ups = make([]*upstream, len(rt.backends))
		for i, b := range rt.backends {
			rt.ups[i] = newUpstream(b, cfg, &p.upCounts)
		}
		p.pools = append(p.pools, rt)
		p.backends = append(p.backends, rt.backends...)
		p.ups = append(p.ups, rt.ups...)
		if name == DefaultPool {
			p.fallback = rt
		} else {
			p.routes = append(p.routes, rt)
		}
		return nil
	}
	if len(cfg.Upstreams) > 0 {
		if err := add(DefaultPool, "/", cfg.Policy, cfg.PolicyArgs, cfg.Upstreams); err != nil {
			return nil, err
		}
	}
	for _, pl := range cfg.Pools {
		if err := add(pl.Name, pl.Prefix, pl.Policy, pl.PolicyArgs, pl.Upstreams); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(p.routes, func(a, b *route) int { return cmp.Compare(len(b.prefix), len(a.prefix)) })
	p.rp = &httputil.ReverseProxy{
		Rewrite:      rewrite,
		Transport:    l7Transport{p},
		ErrorHandler: p.proxyError,
		BufferPool:   bufferPool{},
	}
	return p, nil
}

// Preopen opens Config.Preopen connections to every backend and keeps
// them idle for the first requests; a backend that cannot be reached is
// an error naming it. It does nothing when Preopen is zero.
func (p *Proxy) Preopen(ctx context.Context) error {
	if p.cfg.Preopen == 0 {
		return nil
	}
	for _, u := range p.ups {
		if err := u.preopen(ctx, p.cfg.Preopen); err != nil {
			p.closeIdle()
			return err
		}
	}
	return nil
}

// pick makes one decision in rt's pool: it picks a backend with the pool's
// policy, counts the decision on the proxy and the pool (or, when no
// backend is available, counts that and returns nil), and acquires the
// backend in the same step (balance.PickAcquire), which its caller
// releases when the exchange is over. r is the
// request for policies that need one (nil in layer 4).
func (p *Proxy) pick(rt *route, r *http.Request) *balance.Backend {
	b := balance.PickAcquire(rt.policy, rt.backends, r)
	if b == nil {
		p.noBackend.Add(1)
		rt.noBackend.Add(1)
		return nil
	}
	p.decisions.Add(1)
	rt.decisions.Add(1)
	return b
}

// injectCost spends Config.InjectCost of CPU time, if any: once per
// request (layer 7) or client connection (layer 4), where it is counted.
func (p *Proxy) injectCost() {
	if p.cfg.InjectCost > 0 {
		busywork.Spend(p.cfg.InjectCost)
	}
}

// route returns the pool serving path: the longest matching prefix, else
// the default pool.
func (p *Proxy) route(path string) *route {
	for _, rt := range p.routes {
		if strings.HasPrefix(path, rt.prefix) {
			return rt
		}
	}
	return p.fallback
}

// ServeHTTP forwards r to a backend of the pool its path routes to, chosen
// by the pool's policy (layer 7). It answers 502 when the policy finds no
// available backend or the upstream fails before sending response headers.
// Upstream response headers (X-Worker among them) are passed through.
// ServeHTTP works per request whatever Config.Mode says; Serve follows
// the mode.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.rp.ServeHTTP(w, r)
}

// rewrite prepares the upstream request: X-Forwarded-For/-Host/-Proto and a
// Forwarded element (RFC 7239) appended to the client's, if any. The URL's
// host is set per backend, by the transport.
func rewrite(pr *httputil.ProxyRequest) {
	pr.SetXForwarded()
	prior := pr.In.Header["Forwarded"]
	pr.Out.Header["Forwarded"] = append(prior[:len(prior):len(prior)], forwardedElement(pr.In))
}

// forwardedElement describes the hop from the client to this proxy:
// for=client;host="host";proto=http.
func forwardedElement(r *http.Request) string {
	var b strings.Builder
	b.Grow(64)
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		b.WriteString("for=")
		if strings.IndexByte(ip, ':') >= 0 {
			b.WriteString(`"[` + ip + `]"`)
		} else {
			b.WriteString(ip)
		}
		b.WriteByte(';')
	}
	if r.Host != "" && !strings.ContainsAny(r.Host, "\"\\") {
		b.WriteString(`host="` + r.Host + `";`)
	}
	if r.TLS != nil {
		b.WriteString("proto=https")
	} else {
		b.WriteString("proto=http")
	}
	return b.String()
}

var (
	_ http.Handler        = (*Proxy)(nil)
	_ http.RoundTripper   = l7Transport{}
	_ httputil.BufferPool = bufferPool{}
)

// l7Transport makes the decision: the ReverseProxy hands it each outgoing
// request, it picks a backend and sends the request on that backend's
// connection pool, trying other backends on refusal when retries are on.
type l7Transport struct{ p *Proxy }

func (t l7Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	rt := p.route(req.URL.Path)
	rt.requests.Add(1)
	p.injectCost()
	for try := 0; ; try++ {
		// The backend pick acquires is released when the response body is
		// closed, i.e. after the ReverseProxy copied it all to the client
		// (or gave up): least_conn must see the backend busy until it is
		// really done, not merely once the headers arrived.
		b := p.pick(rt, req)
		if b == nil {
			return nil, errNoBackend
		}
		var start int64
		if rt.observer != nil {
			start = nanotime()
		}
		resp, err := rt.ups[b.Index()].roundTrip(req, b)
		if err == nil {
			if rt.observer != nil {
				rt.observer.Observe(b, time.Duration(nanotime()-start))
			}
			// Issue 10 (exec targets, owned by targets/prefork): a foreign
			// server that sets no X-Worker is attributed to the backend
			// chosen here, by its index among the upstreams (the worker's
			// index when the upstreams list the workers in order).
			if _, ok := resp.Header["X-Worker"]; !ok {
				resp.Header["X-Worker"] = []string{fmt.Sprint(b.Index())}
			}
			return resp, nil
		}
		b.Release()
		if req.Context().Err() != nil {
			return nil, err // the client gave up: not the backend's fault
		}
		b.AddError()
		var de *dialError
		if !errors.As(err, &de) {
			return nil, fmt.Errorf("upstream %s: %w", b.Addr, err)
		}
		b.MarkDown(p.cfg.DownFor)
		if try >= p.cfg.Retries {
			return nil, fmt.Errorf("upstream %s: %w", b.Addr, err)
		}
		p.retries.Add(1)
	}
}

// proxyError answers a request that could not be forwarded with 502.
func (p *Proxy) proxyError(w http.ResponseWriter, _ *http.Request, err error) {
	msg := err.Error()
	if !errors.Is(err, errNoBackend) {
		msg = "balancer: " + msg
	}
	http.Error(w, msg, http.StatusBadGateway)
}

// bufferPool recycles the ReverseProxy's copy buffers.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// closeIdle closes every idle upstream connection.
func (p *Proxy) closeIdle() {
	for _, u := range p.ups {
		u.closeIdle()
	}
}

// Stats is a snapshot of a Proxy's counters. Counters are read one by one,
// so under load the snapshot is not from a single instant. In layer-4 mode
// a "request" is a client connection.
type Stats struct {
	// Policy is the default pool's policy or, when a named pool has prefix
	// "/" and there is no default pool, each pool's as
	// "read=least_conn,write=round_robin".
	Policy string `json:"policy"`
	// Mode is "l7" or "l4".
	Mode string `json:"mode"`
	// Decisions counts backends chosen: one per request (l7) or per client
	// connection (l4), plus one per retry.
	Decisions uint64 `json:"decisions"`
	// ClientConns counts client connections accepted by Serve.
	ClientConns uint64 `json:"client_conns"`
	// UpstreamConns counts upstream connections opened.
	UpstreamConns uint64 `json:"upstream_conns"`
	// Unsolicited counts upstream connections closed instead of reused
	// because the upstream sent bytes no request asked for (past a
	// response's end, or while idle): l7 only.
	Unsolicited uint64 `json:"unsolicited,omitempty"`
	// Retries counts backends tried after one refused the connection.
	Retries uint64 `json:"retries"`
	// NoBackend counts requests (l7, answered 502) or connections (l4,
	// closed) for which no backend was available.
	NoBackend uint64 `json:"no_backend"`
	// CPU is the user plus system CPU time this process has used (the
	// proxy runs alone in "lbbench proxy").
	CPU time.Duration `json:"cpu_ns,omitempty"`
	// Backends are every pool's backends: the default pool's in
	// Config.Upstreams order first, then each of Config.Pools in order.
	Backends []BackendStats `json:"backends"`
	// Pools are the pools in the same order.
	Pools []PoolStats `json:"pools"`
}

// BackendStats is a snapshot of one Backend's counters; see the Backend
// methods of the same names.
type BackendStats struct {
	Addr          string `json:"addr"`
	Pool          string `json:"pool"`
	Requests      uint64 `json:"requests"`
	Errors        uint64 `json:"errors"`
	Active        int64  `json:"active"`
	PeakActive    int64  `json:"peak_active"`
	UpstreamConns uint64 `json:"upstream_conns"`
	// IdleConns is the number of idle upstream connections kept now (l7).
	IdleConns int `json:"idle_conns"`
	// DownMarks counts the times passive health marked the backend down;
	// Down says whether it is down now.
	DownMarks uint64 `json:"down_marks"`
	Down      bool   `json:"down"`
}

// PoolStats is a snapshot of one pool's counters.
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

// Stats returns a snapshot of the proxy's counters. It is safe for
// concurrent use.
func (p *Proxy) Stats() Stats {
	s := Stats{
		Mode:          string(p.cfg.Mode),
		Decisions:     p.decisions.Load(),
		ClientConns:   p.clientConns.Load(),
		UpstreamConns: p.upCounts.opened.Load(),
		Unsolicited:   p.upCounts.unsolicited.Load(),
		Retries:       p.retries.Load(),
		NoBackend:     p.noBackend.Load(),
		Backends:      make([]BackendStats, len(p.backends)),
		Pools:         make([]PoolStats, len(p.pools)),
	}
	s.CPU, _ = proccpu.Self()
	if p.fallback != nil {
		s.Policy = p.fallback.policyName
	} else {
		parts := make([]string, len(p.pools))
		for i, rt := range p.pools {
			parts[i] = rt.name + "=" + rt.policyName
		}
		s.Policy = strings.Join(parts, ",")
	}
	for i, b := range p.backends {
		s.Backends[i] = BackendStats{
			Addr:          b.Addr,
			Pool:          b.Pool(),
			Requests:      b.Requests(),
			Errors:        b.Errors(),
			Active:        b.Active(),
			PeakActive:    b.PeakActive(),
			UpstreamConns: b.UpstreamConns(),
			DownMarks:     b.DownMarks(),
			Down:          !b.Available(),
		}
		s.Backends[i].IdleConns = p.ups[i].idleConns()
	}
	for i, rt := range p.pools {
		s.Pools[i] = PoolStats{
			Name:      rt.name,
			Prefix:    rt.prefix,
			Policy:    rt.policyName,
			Requests:  rt.requests.Load(),
			Decisions: rt.decisions.Load(),
			NoBackend: rt.noBackend.Load(),
		}
	}
	return s
}
