package balancer

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The forwarder's timeouts without a timer per request.
//
// A read deadline costs a lock and a timer-heap update when set and again
// when cleared, and a request needs three of them (the wait for the client's
// next request, the response wait, clearing each): in the profile at
// saturation about 5% of the proxy's time. Instead a connection's goroutine
// says what it waits for and until when (two atomic stores, wait and
// endWait), and one sweeper per server looks at every connection each tick
// and cuts a wait that has run out of time by setting a read deadline in
// the past on the connection being read. The read then fails with a
// timeout, as it would have with its own deadline, only up to one tick
// later. Waits that end in time (nearly all) touch no deadline at all.

// What a client connection's goroutine is doing (fastConn.phase).
const (
	phaseBusy   int32 = iota // forwarding: nothing to time out
	phaseIdle                // waiting for the first byte of a request
	phaseHead                // reading the rest of a request head
	phaseUp                  // waiting for the upstream's first response byte
	phaseCut                 // the sweeper set a past read deadline (fastConn.cut)
	phaseLinger              // idle in a session after a read that returned bytes: cut after a tick, to read again (fastConn.idleWait)
)

// longAgo is the read deadline that cuts a wait.
var longAgo = time.Unix(1, 0)

// waitState is the part of a fastConn the sweeper reads.
type waitState struct {
	phase atomic.Int32
	until atomic.Int64           // nanotime after which the wait is cut
	upc   atomic.Pointer[upConn] // the upstream read in phaseUp
	mu    sync.Mutex             // orders a cut with clearing it
	cut   net.Conn               // the connection given a past deadline; mu
}

// wait marks the start of a wait in phase, to be cut after nanotime until.
// until is stored first: a sweeper that sees the phase sees its deadline.
func (w *waitState) wait(phase int32, until int64) {
	w.until.Store(until)
	w.phase.Store(phase)
}

// endWait marks the end of the wait in phase and says whether the sweeper
// cut it, in which case the past deadline it set is cleared here.
func (w *waitState) endWait(phase int32) (cut bool) {
	if w.phase.CompareAndSwap(phase, phaseBusy) {
		return false
	}
	w.mu.Lock()
	if w.cut != nil {
		w.cut.SetReadDeadline(time.Time{})
		w.cut = nil
	}
	w.phase.Store(phaseBusy)
	w.mu.Unlock()
	return true
}

// cutIfLate cuts c's wait if it has run past its deadline at now: it sets
// a past read deadline on the client connection, or on the upstream one in
// phaseUp. A wait that ended and began again meanwhile (a new deadline) is
// left alone.
func (c *fastConn) cutIfLate(now int64) {
	ph := c.phase.Load()
	if ph == phaseBusy || ph == phaseCut || now < c.until.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.phase.CompareAndSwap(ph, phaseCut) {
		return // the wait ended meanwhile
	}
	if now < c.until.Load() {
		// A new wait of the same phase began after the loads above; the
		// goroutine stored its deadline before its phase, so this load
		// sees it. Undo: if the goroutine ends this wait meanwhile, it
		// finds phaseCut, waits for mu and clears nothing.
		c.phase.Store(ph)
		return
	}
	target := c.nc
	if ph == phaseUp {
		if uc := c.upc.Load(); uc != nil {
			target = uc.Conn
		}
	}
	target.SetReadDeadline(longAgo)
	c.cut = target
}

// sweepTick is how often the sweeper looks: a quarter of the shortest
// timeout it enforces, between 2 ms and 50 ms, so that a wait ends at most
// a quarter of its length (and at most 50 ms) late.
func sweepTick(timeouts ...time.Duration) time.Duration {
	tick := 50 * time.Millisecond
	for _, t := range timeouts {
		if t > 0 {
			tick = min(tick, t/4)
		}
	}
	return max(tick, 2*time.Millisecond)
}

// sweep cuts late waits every tick until ctx ends.
func (s *fastServer) sweep(ctx context.Context, tick time.Duration) {
	everyTick(ctx, tick, func(time.Time) {
		now := nanotime()
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			c.cutIfLate(now)
		}
	})
}
