package balance

import (
	"math"
	"sync/atomic"
	"time"
)

// epoch is the origin of nanotime. time.Since uses the monotonic clock, so
// nanotime never goes backwards when the wall clock is set.
var epoch = time.Now()

// nanotime returns monotonic nanoseconds since the package was loaded; it
// is always > 0 after the first nanosecond and does not allocate.
func nanotime() int64 { return int64(time.Since(epoch)) + 1 }

// The built-in proxy's pool and connection defaults. They live here, with
// the policies, so that the simulator (package model) models the same
// proxy without importing it; package balancer re-exports them.
const (
	// DefaultPool is the name of the pool of the proxy's plain upstream
	// list, which serves every request no named pool takes.
	DefaultPool = "default"
	// DefaultMaxIdle is the number of idle upstream connections the proxy
	// keeps per backend when told none: far above any concurrency a
	// benchmark worker sees.
	DefaultMaxIdle = 1024
)

// Backend is one upstream of one pool, as policies see it. Its counters are
// updated atomically by whoever drives the policies (the built-in proxy,
// the simulator) and may be read concurrently at any time. The
// same address listed in two pools (or twice in one) gives two Backends,
// each with its own counters.
type Backend struct {
	// Addr is the upstream's address as configured: host:port, or
	// unix:/path for a Unix socket. It is read-only once the Proxy is
	// built.
	Addr string

	index int
	pool  string
	hash  uint64 // identity for rendezvous hashing; see NewBackends

	active    atomic.Int64
	peak      atomic.Int64
	requests  atomic.Uint64
	errors    atomic.Uint64
	conns     atomic.Uint64 // upstream connections opened
	downUntil atomic.Int64  // nanotime until which the backend is down; 0: up
	downMarks atomic.Uint64

	// Policy state that describes the backend itself, kept here so that a
	// policy needs no per-backend map: ewma_least_conn's smoothed load and
	// peak_ewma's smoothed latency (float64 bits), its time stamp and its
	// log-domain rank.
	score atomic.Uint64
	stamp atomic.Int64
	rank  atomic.Uint64
}

// NewBackends returns the backends of one pool named pool: backend i has
// address addrs[i] and index i, and all counters at zero. A repeated address
// gets a distinct hashing identity per repetition, so duplicates share keys
// instead of one of them never winning. The caller reports the start and
// end of each request (or layer-4 connection) with Acquire and Release.
func NewBackends(pool string, addrs []string) []*Backend {
	bs := make([]*Backend, len(addrs))
	seen := map[string]int{}
	for i, a := range addrs {
		h := hashString(a)
		if n := seen[a]; n > 0 {
			h = mix64(h + uint64(n)*0x9e3779b97f4a7c15)
		}
		seen[a]++
		bs[i] = &Backend{Addr: a, index: i, pool: pool, hash: h}
	}
	return bs
}

// Index returns the backend's position in its pool: in Config.Upstreams for
// the default pool, in Pool.Upstreams for a named one. It is also its
// position in the slice passed to Policy.Pick.
func (b *Backend) Index() int { return b.index }

// Pool returns the name of the backend's pool (DefaultPool for
// Config.Upstreams).
func (b *Backend) Pool() string { return b.pool }

// Active returns the number of requests (layer 7) or connections (layer 4)
// currently forwarded to the backend and not finished: a layer-7 request
// counts until its response body has been fully copied to the client.
func (b *Backend) Active() int64 { return b.active.Load() }

// PeakActive returns the highest value Active has reached.
func (b *Backend) PeakActive() int64 { return b.peak.Load() }

// Requests returns the number of requests (layer 7) or connections (layer
// 4) sent to the backend, including failed ones.
func (b *Backend) Requests() uint64 { return b.requests.Load() }

// Errors returns the number of requests (or connections) the backend failed
// before sending response headers (refused or reset connection, header
// timeout). Requests abandoned by their client are not counted.
func (b *Backend) Errors() uint64 { return b.errors.Load() }

// UpstreamConns returns the number of connections the proxy opened to the
// backend.
func (b *Backend) UpstreamConns() uint64 { return b.conns.Load() }

// DownMarks returns how many times passive health marked the backend down.
func (b *Backend) DownMarks() uint64 { return b.downMarks.Load() }

// Available reports whether policies may choose the backend: false for a
// while after it refused a connection (see Config.DownFor). It does not
// allocate and is safe for concurrent use; policies call it for every
// candidate.
func (b *Backend) Available() bool {
	until := b.downUntil.Load()
	if until == 0 {
		return true
	}
	if nanotime() < until {
		return false
	}
	// Expired: clear it so later calls take the fast path. A concurrent
	// markDown wins, since the swap only succeeds on the old value.
	b.downUntil.CompareAndSwap(until, 0)
	return true
}

// MarkDown makes the backend unavailable for d (passive health: it refused
// a connection) and counts the mark. It is safe for concurrent use.
func (b *Backend) MarkDown(d time.Duration) {
	b.downUntil.Store(nanotime() + int64(d))
	b.downMarks.Add(1)
}

// Acquire records the start of a request (or layer-4 connection) on b: it
// adds one to Active and Requests, as the proxy does once a policy picked
// b. It is safe for concurrent use and does not allocate.
func (b *Backend) Acquire() {
	b.requests.Add(1)
	b.notePeak(b.active.Add(1))
}

// acquireAt acquires b only if its active count is still seen, and says
// whether it did.
func (b *Backend) acquireAt(seen int64) bool {
	if !b.active.CompareAndSwap(seen, seen+1) {
		return false
	}
	b.requests.Add(1)
	b.notePeak(seen + 1)
	return true
}

// notePeak raises the peak active count to n if n is higher.
func (b *Backend) notePeak(n int64) {
	for {
		peak := b.peak.Load()
		if n <= peak || b.peak.CompareAndSwap(peak, n) {
			return
		}
	}
}

// Release records the end of a request (or connection) on b: it takes one
// from Active. Call it once per Acquire. It is safe for concurrent use.
func (b *Backend) Release() { b.active.Add(-1) }

// AddError counts a request (or connection) to b that failed.
func (b *Backend) AddError() { b.errors.Add(1) }

// AddConn counts an upstream connection opened to b.
func (b *Backend) AddConn() { b.conns.Add(1) }

func loadFloat(v *atomic.Uint64) float64     { return math.Float64frombits(v.Load()) }
func storeFloat(v *atomic.Uint64, f float64) { v.Store(math.Float64bits(f)) }

// hashString is 64-bit FNV-1a followed by a mixing step; it does not
// allocate, and is the same in every process, so placements are stable.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix64(h)
}

// mix64 is the splitmix64 finalizer: a bijection that spreads every input
// bit over the output.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
