package model

import (
	"context"
	"math/rand/v2"
	"net/http"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/workloads"
)

// The event loop. Time is int64 nanoseconds from the start of the run
// (the first intended send time is at or after 0). Requests and
// connections live in slices and are linked by index, so a run allocates
// only while its population grows, not per request.

// none marks the end of an intrusive list.
const none = -1

// Event kinds.
const (
	evArrival  = iota // a stream's next request is due; id is the stream
	evComplete        // a request's service ends; id is the request
)

type event struct {
	t    int64
	seq  uint64 // ties break in scheduling order, so runs are reproducible
	kind int32
	id   int32
}

// eventHeap is a binary min-heap of events by (t, seq).
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].seq < h[j].seq)
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// request is one request in the system.
type request struct {
	intended   int64 // intended send time (the Pacer's offset)
	wire       int64 // when it got a client connection and went on the wire
	dispatched int64 // when it reached its worker's queue (same as wire: the proxy hop is free)
	start      int64 // when its service began
	service    int64 // its service time at this worker, slowdown included
	stream     int32
	class      int32
	conn       int32
	worker     int32
	backend    *balance.Backend // layer 7: the backend the policy picked
	next       int32            // next in a worker's queue or a stream's wait list
}

// conn is one client connection.
type conn struct {
	stream  int32
	worker  int32            // reuseport, l4: the worker it is pinned to
	backend *balance.Backend // l4: the backend the policy picked for it
	used    int32            // requests sent on it
	next    int32            // next in its stream's idle list
}

// stream is one open-loop request stream with its own connections: the
// whole workload, or one named client.
type stream struct {
	pacer     *workloads.Pacer
	targeter  *workloads.Targeter
	n         uint64 // index of the next request
	cap       int    // connection cap
	open      int    // connections open
	opened    uint64 // connections ever opened
	keepAlive bool
	preopen   bool  // every connection is opened at time 0 (workloads.Clients.Preopen)
	perConn   int32 // close a connection after this many requests; 0: never

	idleHead, idleTail int32 // idle connections, FIFO (the client's idle channel)
	waitHead, waitTail int32 // requests waiting for a connection, FIFO
}

// worker is one simulated worker: Concurrency slots and a FIFO queue.
type worker struct {
	slots    int
	busy     int
	slow     float64 // service-time factor; 1 for a normal worker
	qHead    int32
	qTail    int32
	qLen     int64
	maxQueue int64
	requests uint64 // served, warm-up included
	conns    uint64 // connections accepted (client or upstream)
	busyNs   int64  // time spent serving, summed over slots
}

// pool is one balancer pool: a policy over backends, backend i being
// worker workers[i].
type pool struct {
	name      string
	prefix    string
	policy    string
	pol       balance.Policy
	observer  balance.Observer
	backends  []*balance.Backend
	workers   []int32
	requests  uint64
	decisions uint64
	upIdle    []int    // idle upstream connections per backend (keep-alive on)
	upConns   []uint64 // upstream connections opened per backend
}

// Dispatch modes.
const (
	modeReusePort = iota // the kernel picks a worker per client connection
	modeL4               // a policy picks a worker per client connection
	modeL7               // a policy picks a worker per request
)

// engine runs one simulated run.
type engine struct {
	now    int64
	seq    uint64
	events eventHeap

	mode          int
	streams       []stream
	workers       []worker
	pools         []*pool
	classPool     []int32         // layer 7: the pool each class's path routes to
	classReq      []*http.Request // layer 7: a request per class for policies that read it
	upKeepAlive   bool
	maxIdle       int
	upPreopen     int        // upstream connections opened per backend at the start (proxy.preopen)
	kernel        *rand.Rand // the kernel's reuseport choice and the client's select
	reqs          []request
	freeReq       int32
	conns         []conn
	freeConn      int32
	clientConns   uint64
	upstreamConns uint64

	rec *recorder
}

// schedule adds an event at time t.
func (e *engine) schedule(t int64, kind, id int32) {
	e.seq++
	e.events.push(event{t: t, seq: e.seq, kind: kind, id: id})
}

// run processes events until none is left. It checks ctx every so often.
func (e *engine) run(ctx context.Context) error {
	for i := range e.streams {
		if e.streams[i].preopen {
			e.preopen(int32(i))
		}
		e.scheduleArrival(int32(i))
	}
	for n := 0; len(e.events) > 0; n++ {
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ev := e.events.pop()
		e.now = ev.t
		switch ev.kind {
		case evArrival:
			e.arrive(ev.id)
		case evComplete:
			e.complete(ev.id)
		}
	}
	return nil
}

// preopen opens every connection of stream s's cap before its first
// request and leaves them idle in the order opened, as the generator's
// transport does with clients.preopen.
func (e *engine) preopen(s int32) {
	st := &e.streams[s]
	for st.open < st.cap {
		c := e.openConn(s)
		e.conns[c].next = none
		if st.idleTail == none {
			st.idleHead = c
		} else {
			e.conns[st.idleTail].next = c
		}
		st.idleTail = c
	}
}

// scheduleArrival schedules stream s's next request, if it has one.
func (e *engine) scheduleArrival(s int32) {
	st := &e.streams[s]
	if _, done := st.pacer.Pace(0, st.n); done {
		return
	}
	off, ok := st.pacer.Offset(st.n)
	if !ok {
		return
	}
	e.schedule(int64(off), evArrival, s)
}

// arrive creates stream s's next request, due now, and hands it to the
// client.
func (e *engine) arrive(s int32) {
	st := &e.streams[s]
	st.n++
	class, svc := st.targeter.Draw()
	r := e.newRequest()
	q := &e.reqs[r]
	q.intended, q.stream, q.class, q.service = e.now, s, int32(class), int64(svc)
	e.scheduleArrival(s)
	e.acquireConn(r)
}

// acquireConn gives request r a client connection, as the generator's
// transport does: the one idle the longest, or a new one below the cap
// when none is idle, else r waits for the first connection to come back.
func (e *engine) acquireConn(r int32) {
	st := &e.streams[e.reqs[r].stream]
	idle, canOpen := st.idleHead != none, st.open < st.cap
	switch {
	case idle:
		c := st.idleHead
		st.idleHead = e.conns[c].next
		if st.idleHead == none {
			st.idleTail = none
		}
		e.send(r, c)
	case canOpen:
		e.send(r, e.openConn(e.reqs[r].stream))
	default:
		e.reqs[r].next = none
		if st.waitTail == none {
			st.waitHead = r
		} else {
			e.reqs[st.waitTail].next = r
		}
		st.waitTail = r
	}
}

// openConn opens a connection for stream s and, for reuseport and l4,
// pins it to a worker.
func (e *engine) openConn(s int32) int32 {
	st := &e.streams[s]
	st.open++
	st.opened++
	c := e.newConn()
	cn := &e.conns[c]
	cn.stream, cn.used, cn.worker, cn.backend = s, 0, none, nil
	switch e.mode {
	case modeReusePort:
		// The kernel hashes the 4-tuple; a new connection's source port
		// makes that a uniform draw over the listening sockets.
		cn.worker = int32(e.kernel.IntN(len(e.workers)))
		e.workers[cn.worker].conns++
	case modeL4:
		p := e.pools[0]
		b := p.pol.Pick(p.backends, nil)
		b.Acquire() // layer 4 counts connections as active
		p.requests++
		p.decisions++
		cn.backend = b
		cn.worker = p.workers[b.Index()]
		e.workers[cn.worker].conns++
		p.upConns[b.Index()]++
		e.upstreamConns++
		e.clientConns++
	default:
		e.clientConns++
	}
	return c
}

// send puts request r on connection c and dispatches it to a worker.
func (e *engine) send(r, c int32) {
	q := &e.reqs[r]
	cn := &e.conns[c]
	cn.used++
	q.conn, q.wire, q.dispatched = c, e.now, e.now
	w := cn.worker
	if e.mode == modeL7 {
		p := e.pools[e.classPool[q.class]]
		p.requests++
		b := p.pol.Pick(p.backends, e.classReq[q.class])
		b.Acquire()
		p.decisions++
		i := b.Index()
		if e.upKeepAlive && p.upIdle[i] > 0 {
			p.upIdle[i]--
		} else {
			p.upConns[i]++
			e.upstreamConns++
			e.workers[p.workers[i]].conns++
		}
		q.backend = b
		w = p.workers[i]
	}
	q.worker = w
	wk := &e.workers[w]
	q.service = int64(float64(q.service) * wk.slow)
	if wk.busy < wk.slots {
		e.startService(r)
		return
	}
	q.next = none
	if wk.qTail == none {
		wk.qHead = r
	} else {
		e.reqs[wk.qTail].next = r
	}
	wk.qTail = r
	wk.qLen++
	wk.maxQueue = max(wk.maxQueue, wk.qLen)
}

// startService starts serving request r on its worker now.
func (e *engine) startService(r int32) {
	q := &e.reqs[r]
	wk := &e.workers[q.worker]
	wk.busy++
	wk.busyNs += q.service
	q.start = e.now
	e.schedule(e.now+q.service, evComplete, r)
}

// complete ends request r's service: the worker takes its next queued
// request, the proxy releases the backend, the client records the
// response and frees or closes the connection.
func (e *engine) complete(r int32) {
	q := &e.reqs[r]
	wk := &e.workers[q.worker]
	wk.busy--
	wk.requests++
	if wk.qHead != none {
		next := wk.qHead
		wk.qHead = e.reqs[next].next
		if wk.qHead == none {
			wk.qTail = none
		}
		wk.qLen--
		e.startService(next)
	}
	if b := q.backend; b != nil {
		p := e.pools[e.classPool[q.class]]
		b.Release()
		if p.observer != nil {
			p.observer.Observe(b, durationNs(e.now-q.dispatched))
		}
		if e.upKeepAlive && p.upIdle[b.Index()] < e.maxIdle {
			p.upIdle[b.Index()]++
		}
	}
	e.rec.record(e, q)

	c := q.conn
	st := &e.streams[q.stream]
	cn := &e.conns[c]
	e.freeRequest(r)
	if !st.keepAlive || (st.perConn > 0 && cn.used >= st.perConn) {
		st.open--
		if cn.backend != nil {
			cn.backend.Release()
		}
		e.freeConnection(c)
		if w := e.popWaiter(st); w != none {
			e.send(w, e.openConn(e.reqs[w].stream))
		}
		return
	}
	if w := e.popWaiter(st); w != none {
		e.send(w, c)
		return
	}
	cn.next = none
	if st.idleTail == none {
		st.idleHead = c
	} else {
		e.conns[st.idleTail].next = c
	}
	st.idleTail = c
}

// popWaiter takes the first request waiting for one of st's connections.
func (e *engine) popWaiter(st *stream) int32 {
	w := st.waitHead
	if w != none {
		st.waitHead = e.reqs[w].next
		if st.waitHead == none {
			st.waitTail = none
		}
	}
	return w
}

func (e *engine) newRequest() int32 {
	if r := e.freeReq; r != none {
		e.freeReq = e.reqs[r].next
		e.reqs[r] = request{}
		return r
	}
	e.reqs = append(e.reqs, request{})
	return int32(len(e.reqs) - 1)
}

func (e *engine) freeRequest(r int32) {
	e.reqs[r].backend = nil
	e.reqs[r].next = e.freeReq
	e.freeReq = r
}

func (e *engine) newConn() int32 {
	if c := e.freeConn; c != none {
		e.freeConn = e.conns[c].next
		return c
	}
	e.conns = append(e.conns, conn{})
	return int32(len(e.conns) - 1)
}

func (e *engine) freeConnection(c int32) {
	e.conns[c].backend = nil
	e.conns[c].next = e.freeConn
	e.freeConn = c
}
