package balancer

import (
	"net/http/httputil"
	"sync/atomic"
)

// Backend is one upstream of a Proxy. Its counters are updated atomically by
// the proxy and may be read concurrently at any time.
type Backend struct {
	// Addr is the upstream's host:port. It is read-only once the Proxy is
	// built.
	Addr string

	index    int
	active   atomic.Int64
	peak     atomic.Int64
	requests atomic.Uint64
	errors   atomic.Uint64
	forward  *httputil.ReverseProxy
}

// Index returns the backend's position in Config.Upstreams (and in the pool
// passed to Policy.Pick).
func (b *Backend) Index() int { return b.index }

// Active returns the number of requests currently forwarded to the backend
// whose response has not been fully copied to the client yet.
func (b *Backend) Active() int64 { return b.active.Load() }

// PeakActive returns the highest value Active has reached.
func (b *Backend) PeakActive() int64 { return b.peak.Load() }

// Requests returns the number of requests sent to the backend, including
// failed ones.
func (b *Backend) Requests() uint64 { return b.requests.Load() }

// Errors returns the number of requests the backend failed before sending
// response headers (refused or reset connection, header timeout). Requests
// abandoned by their client are not counted.
func (b *Backend) Errors() uint64 { return b.errors.Load() }

// acquire records the start of a request on b.
func (b *Backend) acquire() {
	b.requests.Add(1)
	n := b.active.Add(1)
	for {
		peak := b.peak.Load()
		if n <= peak || b.peak.CompareAndSwap(peak, n) {
			return
		}
	}
}

// release records the end of a request on b.
func (b *Backend) release() { b.active.Add(-1) }
