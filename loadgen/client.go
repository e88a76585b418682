package loadgen

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/internal/quietconn"
)

// clientTransport is the generator's HTTP/1.1 client: a fixed cap of
// connections to one entry point, with keep-alive on or off and an optional
// number of requests after which a connection is closed. net/http's
// Transport can cap connections but cannot close one after N requests, and
// hides how many connections it opened; this one does both. A request that
// finds every connection busy waits for one, and that wait is part of its
// latency (it is measured from the intended send time).
//
// It is safe for concurrent use.
type clientTransport struct {
	// traced: RoundTrip calls the request context's client trace.
	traced bool
	// counted: each response carries the count of its body's bytes
	// (bytesInHeader) once its body is closed.
	counted   bool
	addr      string // host:port
	keepAlive bool
	perConn   int // close a connection after this many requests; 0 = never
	// timeout, if not zero, bounds each request from RoundTrip until its
	// body is closed: the wait for a connection, the dial, the write, the
	// answer and its body. Set it here rather than as http.Client's
	// Timeout, whose per-request context, timer and cancellation
	// goroutine cost about a sixth of the generator's allocations; here
	// it is the connection's deadline, a timer the runtime's poller keeps.
	timeout time.Duration

	base   time.Time        // sent times are offsets from base
	slots  chan struct{}    // one token per connection that may exist
	idle   chan *clientConn // connections ready for a request
	dialer net.Dialer
	tls    *tls.Config // https: each connection is a TLS client of it; nil for http

	opened atomic.Uint64 // connections dialled

	mu      sync.Mutex               // guards conns and aborted
	conns   map[*clientConn]struct{} // every open connection, for abort
	aborted chan struct{}            // closed by abort
	once    sync.Once
}

// errAborted is a request's error once its transport was aborted.
var errAborted = errors.New("loadgen: request abandoned: the attack was cancelled")

type clientConn struct {
	net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	used int // requests sent on this connection
}

func newClientTransport(addr string, conns int, keepAlive bool, perConn int) *clientTransport {
	return &clientTransport{
		addr:      addr,
		base:      time.Now(),
		keepAlive: keepAlive,
		perConn:   perConn,
		slots:     make(chan struct{}, conns),
		idle:      make(chan *clientConn, conns),
		dialer:    net.Dialer{Timeout: 5 * time.Second},
		conns:     map[*clientConn]struct{}{},
		aborted:   make(chan struct{}),
	}
}

// preopen dials every connection the cap allows and leaves them idle, in
// the order dialled: requests then take the connection idle the longest
// (the idle channel is FIFO), so each is used in turn rather than the
// pool growing only as far as the load needs. A dial that fails fails
// the whole: a run whose connections could not all be opened is not the
// run asked for.
func (t *clientTransport) preopen(ctx context.Context) error {
	n := cap(t.slots)
	for i := range n {
		t.slots <- struct{}{}
		c, err := t.dial(ctx, time.Time{})
		if err != nil {
			<-t.slots
			return fmt.Errorf("loadgen: opening connection %d of %d to %s before the run (clients.preopen): %w", i+1, n, t.addr, err)
		}
		t.idle <- c
	}
	return nil
}

// abort closes every connection, which ends the requests on them, and
// makes every later request fail at once with errAborted. It is
// idempotent.
func (t *clientTransport) abort() {
	t.once.Do(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		close(t.aborted)
		for c := range t.conns {
			c.Conn.Close()
		}
	})
}

// RoundTrip implements http.RoundTripper.
func (t *clientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var deadline time.Time
	if t.timeout > 0 {
		deadline = time.Now().Add(t.timeout)
	}
	// Prefer an idle connection; dial only when none is idle and a slot is
	// free; otherwise wait for whichever comes first.
	var c *clientConn
	select {
	case <-t.aborted:
		return nil, errAborted
	default:
	}
	select {
	case c = <-t.idle:
	default:
		var expired <-chan time.Time
		if t.timeout > 0 {
			tm := time.NewTimer(time.Until(deadline))
			defer tm.Stop()
			expired = tm.C
		}
		select {
		case c = <-t.idle: // its slot is already held
		case t.slots <- struct{}{}:
			var err error
			if c, err = t.dial(ctx, deadline); err != nil {
				<-t.slots
				return nil, err
			}
		case <-expired:
			return nil, fmt.Errorf("loadgen: request timeout (%s) waiting for a connection: all %d in use", t.timeout, cap(t.slots))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.aborted:
			return nil, errAborted
		}
	}
	if t.timeout > 0 {
		if err := c.Conn.SetDeadline(deadline); err != nil {
			t.discard(c)
			return nil, fmt.Errorf("loadgen: request on connection %s: %w", c.LocalAddr(), err)
		}
	}

	c.used++
	last := !t.keepAlive || (t.perConn > 0 && c.used >= t.perConn)
	out := req
	if last && !req.Close {
		// Tell the server this is the connection's last request. A shallow
		// copy: the caller's request must not change.
		r2 := *req
		r2.Close = true
		out = &r2
	}
	// A cancelled request closes its connection, which unblocks the write
	// or read below. A request whose context cannot end (vegeta's) needs no
	// such hook: its timeout is the connection's deadline.
	stop := neverStopped
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { c.Conn.Close() })
	}
	sent := time.Since(t.base)
	err := out.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	// A client trace (bursts use one; only their transports look) hears
	// when the request was written whole and when the answer's first byte
	// came.
	var trace *httptrace.ClientTrace
	if t.traced {
		trace = httptrace.ContextClientTrace(ctx)
	}
	if err == nil && trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	if err == nil && trace != nil && trace.GotFirstResponseByte != nil {
		if _, err = c.br.Peek(1); err == nil {
			trace.GotFirstResponseByte()
		}
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(c.br, out)
	}
	if err != nil {
		stop()
		t.discard(c)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-t.aborted:
			return nil, errAborted
		default:
		}
		return nil, fmt.Errorf("loadgen: request on connection %s: %w", c.LocalAddr(), err)
	}
	// The recorder measures uncorrected latency from here, when the
	// request went on the wire, not from when it was handed to the client
	// (which may have waited for a free connection).
	resp.Header[sentHeader] = []string{strconv.FormatInt(int64(sent), 10)}
	body := &clientBody{rc: resp.Body, t: t, c: c, stop: stop, reuse: !last && !resp.Close}
	if t.counted {
		body.header = resp.Header
	}
	resp.Body = body
	return resp, nil
}

// neverStopped is the stop function of a request whose context cannot
// end: there is no hook to stop, and the connection was not closed by one.
func neverStopped() bool { return true }

// bytesInHeader carries, on a response whose transport counts, how many
// bytes of body were read before it was closed: vegeta's BytesIn, which
// vegeta itself counts from the body it keeps (none, unless asked). Like
// sentHeader, it never reaches the network.
const bytesInHeader = "X-Lbbench-Bytes-In"

// sentHeader carries, on a response, when its request was written: an
// offset from the transport's base time in nanoseconds. It never reaches the
// network.
const sentHeader = "X-Lbbench-Sent"

// sentAt returns when the request of a response with headers h was written.
func (t *clientTransport) sentAt(h map[string][]string) (time.Time, bool) {
	v := h[sentHeader]
	if len(v) == 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return t.base.Add(time.Duration(ns)), true
}

// dial opens a connection, giving up at deadline if it is not zero.
func (t *clientTransport) dial(ctx context.Context, deadline time.Time) (*clientConn, error) {
	d := t.dialer
	d.Deadline = deadline
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	conn = quietconn.Wrap(conn)
	if t.tls != nil {
		tc := tls.Client(conn, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("loadgen: TLS handshake with %s: %w", t.addr, err)
		}
		conn = tc
	}
	t.opened.Add(1)
	c := &clientConn{Conn: conn, br: bufio.NewReaderSize(conn, 4096), bw: bufio.NewWriterSize(conn, 4096)}
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.aborted:
		conn.Close()
		return nil, errAborted
	default:
	}
	t.conns[c] = struct{}{}
	return c, nil
}

// discard closes c and frees its slot.
func (t *clientTransport) discard(c *clientConn) {
	c.Conn.Close()
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	<-t.slots
}

// release returns c to the idle set.
func (t *clientTransport) release(c *clientConn) { t.idle <- c }

// CloseIdleConnections closes every idle connection.
func (t *clientTransport) CloseIdleConnections() {
	for {
		select {
		case c := <-t.idle:
			t.discard(c)
		default:
			return
		}
	}
}

// clientBody hands the connection back when the body is done: to the idle
// set if the whole body was read and the connection may be reused, closed
// otherwise.
type clientBody struct {
	rc    io.ReadCloser
	t     *clientTransport
	c     *clientConn
	stop  func() bool
	reuse bool
	once  sync.Once
	// header, if not nil, gets bytesInHeader with n when the body closes.
	header http.Header
	n      int64
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *clientBody) Close() error {
	b.once.Do(func() {
		if b.header != nil {
			b.header[bytesInHeader] = []string{strconv.FormatInt(b.n, 10)}
		}
		err := b.rc.Close() // drains what is left of the body
		if b.stop() && b.reuse && err == nil {
			b.t.release(b.c)
			return
		}
		b.t.discard(b.c)
	})
	return nil
}
