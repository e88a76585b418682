package balancer

// This file lets code other than the Proxy drive policies: the simulator in
// package model builds Backends, picks with the registered policies and
// keeps the active counts itself, on simulated time.

// NewBackends returns the backends of one pool named pool, for driving
// policies without a Proxy: backend i has address addrs[i] and index i, and
// all counters at zero. A repeated address gets its own hashing identity,
// as in a Proxy. The caller reports the start and end of each request (or
// layer-4 connection) with Acquire and Release.
func NewBackends(pool string, addrs []string) []*Backend {
	return newBackends(pool, addrs)
}

// Acquire records the start of a request (or layer-4 connection) on b: it
// adds one to Active and Requests, as the Proxy does once a policy picked
// b. It is safe for concurrent use and does not allocate.
func (b *Backend) Acquire() { b.acquire() }

// Release records the end of a request (or connection) on b: it takes one
// from Active. Call it once per Acquire. It is safe for concurrent use.
func (b *Backend) Release() { b.release() }

// clocked is implemented by policies that read the time (peak_ewma).
type clocked interface {
	setClock(now func() int64)
}

func (pe *PeakEWMA) setClock(now func() int64) { pe.now = now }

// SetClock makes p read the time from now instead of the monotonic clock,
// and reports whether p reads the time at all (only peak_ewma does; other
// policies are left as they are). now returns nanoseconds, must be > 0 and
// must never go backwards. The simulator uses it to run a policy on
// simulated time. Call it before p is used.
func SetClock(p Policy, now func() int64) bool {
	c, ok := p.(clocked)
	if ok {
		c.setClock(now)
	}
	return ok
}
