package balancer

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

const (
	// maxIdleConnsPerHost caps the idle keep-alive connections kept per
	// upstream; far above any concurrency a benchmark worker sees.
	maxIdleConnsPerHost = 1024
	// idleConnTimeout closes upstream connections idle this long.
	idleConnTimeout = 90 * time.Second
)

// Proxy is a layer-7 reverse proxy over a fixed pool of backends. It is an
// http.Handler, safe for concurrent use; Serve runs it with its admin API.
type Proxy struct {
	policyName    string
	policy        Policy
	pool          []*Backend
	transport     *http.Transport
	decisions     atomic.Uint64
	clientConns   atomic.Uint64
	upstreamConns atomic.Uint64
}

// New builds a Proxy from cfg after applying its defaults and validating it.
// It opens no connection: upstreams are dialed on demand.
func New(cfg Config) (*Proxy, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := NewPolicy(cfg.Policy, cfg.PolicyArgs)
	if err != nil {
		return nil, err
	}
	p := &Proxy{policyName: cfg.Policy, policy: policy}
	dialer := &net.Dialer{Timeout: cfg.Timeout}
	p.transport = &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				p.upstreamConns.Add(1)
			}
			return c, err
		},
		DisableKeepAlives:     !cfg.UpstreamKeepAlive,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		ResponseHeaderTimeout: cfg.Timeout,
		DisableCompression:    true, // pass bodies through as the upstream sent them
	}
	p.pool = make([]*Backend, len(cfg.Upstreams))
	for i, addr := range cfg.Upstreams {
		b := &Backend{Addr: addr, index: i}
		target := &url.URL{Scheme: "http", Host: addr}
		// One ReverseProxy per backend, so the per-request path needs no
		// lookup or context value to know where to send the request.
		b.forward = &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport: p.transport,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if r.Context().Err() == nil { // not the client giving up
					b.errors.Add(1)
				}
				http.Error(w, "balancer: upstream "+b.Addr+": "+err.Error(), http.StatusBadGateway)
			},
		}
		p.pool[i] = b
	}
	return p, nil
}

// ServeHTTP forwards r to the backend chosen by the policy. It answers 502
// when the policy finds no backend or the upstream fails before sending
// response headers. Upstream response headers (X-Worker among them) are
// passed through.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := p.policy.Pick(p.pool, r)
	if b == nil {
		http.Error(w, "balancer: no backend available", http.StatusBadGateway)
		return
	}
	p.decisions.Add(1)
	b.acquire()
	// Release only once forward has returned, i.e. after the whole response
	// body has been copied to the client (or the copy was aborted, which
	// panics through this defer): least_conn must see the backend as busy
	// until it is really done, not merely once the headers arrived.
	defer b.release()
	b.forward.ServeHTTP(w, r)
}

// Stats is a snapshot of a Proxy's counters. Counters are read one by one,
// so under load the snapshot is not from a single instant.
type Stats struct {
	Policy        string         `json:"policy"`
	Decisions     uint64         `json:"decisions"`      // requests given a backend
	ClientConns   uint64         `json:"client_conns"`   // client connections accepted by Serve
	UpstreamConns uint64         `json:"upstream_conns"` // upstream connections opened
	Backends      []BackendStats `json:"backends"`       // in Config.Upstreams order
}

// BackendStats is a snapshot of one Backend's counters; see the Backend
// methods of the same names.
type BackendStats struct {
	Addr       string `json:"addr"`
	Requests   uint64 `json:"requests"`
	Errors     uint64 `json:"errors"`
	Active     int64  `json:"active"`
	PeakActive int64  `json:"peak_active"`
}

// Stats returns a snapshot of the proxy's counters. It is safe for
// concurrent use.
func (p *Proxy) Stats() Stats {
	s := Stats{
		Policy:        p.policyName,
		Decisions:     p.decisions.Load(),
		ClientConns:   p.clientConns.Load(),
		UpstreamConns: p.upstreamConns.Load(),
		Backends:      make([]BackendStats, len(p.pool)),
	}
	for i, b := range p.pool {
		s.Backends[i] = BackendStats{
			Addr:       b.Addr,
			Requests:   b.Requests(),
			Errors:     b.Errors(),
			Active:     b.Active(),
			PeakActive: b.PeakActive(),
		}
	}
	return s
}
