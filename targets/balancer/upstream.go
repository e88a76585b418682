package balancer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/balance"
)

// idleConnTimeout closes upstream connections idle this long: when the pool
// next reaches them, on top (take) or at the bottom (put).
const idleConnTimeout = 90 * time.Second

// aLongTimeAgo is a deadline in the past: setting it makes blocked reads
// and writes on a connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// dialError is an upstream connection that could not be opened: nothing
// was sent, so the request may go to another backend, and the backend is
// marked down.
type dialError struct{ err error }

func (e *dialError) Error() string { return "connect: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// upstream is one backend's layer-7 client: a pool of HTTP/1.1 connections
// it opens, reuses and closes itself, so that keep-alive, the requests per
// connection and the idle connections kept are exactly as configured and
// counted. It runs no goroutine per connection: a request is written and
// its response read on the caller's goroutine. It is safe for concurrent
// use.
type upstream struct {
	network, address string
	host             string // Host header sent upstream
	dialer           net.Dialer
	headerTimeout    time.Duration
	keepAlive        bool
	closeAfter       int              // 0: no limit
	readTimeout      time.Duration    // bounds each wait for more of a response body
	idle             *idlePool        // idle connections; nil when keep-alive is off
	backend          *balance.Backend // counts the connections opened to it
	counts           *upCounts        // the proxy's counters
}

// upCounts are the proxy's counters of its upstream connections, shared
// by every upstream.
type upCounts struct {
	opened atomic.Uint64 // connections opened
	// unsolicited counts connections closed instead of reused because the
	// upstream sent bytes no request had asked for: past the end of a
	// response, or while the connection was idle. Reusing one would hand
	// those bytes to the next client as its response.
	unsolicited atomic.Uint64
}

// upConn is one upstream connection with its buffers.
type upConn struct {
	net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	sc     *sysConn // br's and bw's socket; nil if it has none
	used   int      // requests sent on it
	idleAt int64    // nanotime when it was put back
	// cut is set when the request's context ends (roundTrip), before the
	// deadline that stops the connection: a body read that sets its own
	// deadline afterwards sees it and stops too.
	cut atomic.Bool
}

func newUpstream(b *balance.Backend, cfg Config, counts *upCounts) *upstream {
	addr := b.Addr
	network, address, _ := ParseUpstream(addr) // validated
	u := &upstream{
		network:       network,
		address:       address,
		host:          address,
		dialer:        net.Dialer{Timeout: cfg.Timeout},
		headerTimeout: cfg.Timeout,
		readTimeout:   cfg.ReadTimeout,
		keepAlive:     cfg.UpstreamKeepAlive,
		closeAfter:    cfg.CloseAfter,
		backend:       b,
		counts:        counts,
	}
	if network == "unix" {
		u.host = "localhost"
	}
	if u.keepAlive {
		u.idle = &idlePool{max: cfg.MaxIdle, fifo: cfg.Preopen > 0}
	}
	return u
}

// preopen opens n connections and puts them in the idle pool, in the
// order opened.
func (u *upstream) preopen(ctx context.Context, n int) error {
	for i := range n {
		c, err := u.dial(ctx)
		if err != nil {
			return fmt.Errorf("balancer: preopen: connection %d of %d to %s: %w", i+1, n, u.backend.Addr, err)
		}
		if !u.idle.put(c) {
			c.Close()
			return fmt.Errorf("balancer: preopen: the idle pool of %s is full after %d connections", u.backend.Addr, i)
		}
	}
	return nil
}

// get returns an idle connection (reused) or a new one. A dial failure is
// a *dialError. An idle connection on which the upstream sent anything
// while it was idle is closed, not reused (see upConn.quiet).
func (u *upstream) get(ctx context.Context) (c *upConn, reused bool, err error) {
	if u.idle != nil {
		for {
			c := u.idle.take()
			if c == nil {
				break
			}
			switch c.quiet() {
			case idleQuiet:
				return c, true, nil
			case idleSent:
				u.counts.unsolicited.Add(1)
			}
			c.Close() // idleSent, or idleClosed: the upstream ended it
		}
	}
	c, err = u.dial(ctx)
	return c, false, err
}

// dial opens a new connection to the upstream and counts it. A failure
// is a *dialError.
func (u *upstream) dial(ctx context.Context) (*upConn, error) {
	nc, err := u.dialer.DialContext(ctx, u.network, u.address)
	if err != nil {
		return nil, &dialError{err}
	}
	u.backend.AddConn()
	u.counts.opened.Add(1)
	rw := newSysConn(nc)
	sc, _ := rw.(*sysConn)
	return &upConn{Conn: nc, br: bufio.NewReaderSize(rw, 4<<10), bw: bufio.NewWriterSize(rw, 4<<10), sc: sc}, nil
}

// put keeps c for reuse if there is room, or closes it. A connection with
// bytes read past the response that was just relayed is closed and
// counted: those bytes are no answer to anything the proxy asked, and the
// next request on the connection would take them for its response (an
// upstream that writes two responses to one request would hand the second
// to another client). nginx and HAProxy close such a connection too.
func (u *upstream) put(c *upConn) {
	if c.br.Buffered() > 0 {
		u.counts.unsolicited.Add(1)
		c.Close()
		return
	}
	if u.idle == nil || !u.idle.put(c) {
		c.Close()
	}
}

// What an idle connection's socket holds when it is taken for reuse.
const (
	idleQuiet  = iota // nothing: reusable
	idleSent          // bytes no request asked for
	idleClosed        // the end of the stream, or an error: the upstream closed it
)

// quiet looks, without waiting, whether the upstream sent anything on c
// while it was idle. Only a quiet connection is reused: bytes there would
// be read as the next request's response. It costs one non-blocking
// system call per reused connection; nginx and HAProxy learn the same from
// their event loop, which watches idle connections. It also finds an idle
// connection the upstream closed before a request is sent on it, instead
// of after.
func (c *upConn) quiet() int {
	if c.br.Buffered() > 0 {
		return idleSent
	}
	if c.sc != nil {
		return c.sc.peekIdle()
	}
	// No raw socket (not TCP or Unix): a read that must not wait.
	c.SetReadDeadline(aLongTimeAgo)
	_, err := c.br.Peek(1)
	c.SetReadDeadline(time.Time{})
	var ne net.Error
	switch {
	case err == nil:
		return idleSent
	case errors.As(err, &ne) && ne.Timeout():
		return idleQuiet
	}
	return idleClosed
}

// closeIdle closes the idle connections.
func (u *upstream) closeIdle() {
	if u.idle != nil {
		u.idle.closeAll()
	}
}

// idleConns returns the number of idle connections kept.
func (u *upstream) idleConns() int {
	if u.idle == nil {
		return 0
	}
	return u.idle.len()
}

// idlePool holds one backend's idle connections, most recently used on
// top, as nginx's keepalive cache and HAProxy's idle lists do: the next
// request takes the connection whose buffers, socket and worker-side
// goroutine were used last and are likely still in cache, and under light
// load the connections at the bottom age out (idleConnTimeout) instead of
// every pooled connection being kept warm in turn. It is safe for
// concurrent use.
//
// With fifo (Config.Preopen) it hands out the connection idle the longest
// instead: every pooled connection is used in turn.
type idlePool struct {
	mu    sync.Mutex
	max   int
	fifo  bool
	conns []*upConn // oldest first
}

// take returns the most recently put connection (the least recently put
// with fifo), or nil. Connections idle longer than idleConnTimeout are
// closed on the way.
func (p *idlePool) take() *upConn {
	now := nanotime()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.conns) > 0 {
		i := len(p.conns) - 1
		if p.fifo {
			i = 0
		}
		c := p.conns[i]
		p.conns = slices.Delete(p.conns, i, i+1)
		if now-c.idleAt <= int64(idleConnTimeout) {
			return c
		}
		c.Close()
	}
	return nil
}

// put adds c on top and reports whether it was kept (false: the pool is
// full; the caller closes c). It closes connections at the bottom that
// have been idle longer than idleConnTimeout.
func (p *idlePool) put(c *upConn) bool {
	c.idleAt = nanotime()
	p.mu.Lock()
	defer p.mu.Unlock()
	stale := 0
	for stale < len(p.conns) && c.idleAt-p.conns[stale].idleAt > int64(idleConnTimeout) {
		p.conns[stale].Close()
		stale++
	}
	p.conns = slices.Delete(p.conns, 0, stale)
	if len(p.conns) >= p.max {
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

// closeAll closes and forgets every idle connection.
func (p *idlePool) closeAll() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (p *idlePool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// roundTrip sends req on a connection to the upstream and reads the
// response headers. The returned body gives the connection back (or closes
// it) when closed, then calls b.release. On error b is not released. The
// request is modified: its URL host and Close flag are set.
//
// A reused connection may have been closed by the upstream while idle; if
// it turns out so before any response byte, and the request has no body,
// the request is sent once more on a new connection.
func (u *upstream) roundTrip(req *http.Request, b *balance.Backend) (*http.Response, error) {
	ctx := req.Context()
	req.URL.Scheme, req.URL.Host, req.Host = "http", u.host, ""
	for {
		c, reused, err := u.get(ctx)
		if err != nil {
			return nil, err
		}
		c.used++
		// The last request on a connection says so, so the upstream closes
		// its side too rather than waiting for an idle timeout.
		req.Close = !u.keepAlive || (u.closeAfter > 0 && c.used >= u.closeAfter)
		c.cut.Store(false)
		stop := context.AfterFunc(ctx, func() {
			c.cut.Store(true)
			c.SetDeadline(aLongTimeAgo)
		})
		resp, err := u.exchange(c, req)
		if err == nil && ctx.Err() != nil {
			// Cancelled while exchange cleared the header deadline, which
			// may have undone the one the AfterFunc set: set it again.
			c.SetDeadline(aLongTimeAgo)
		}
		if err == nil {
			body := &upBody{rc: resp.Body, c: c, u: u, b: b, stop: stop, reuse: !req.Close && !resp.Close}
			body.eof = resp.Body == http.NoBody
			resp.Body = body
			return resp, nil
		}
		stop()
		c.Close()
		if errors.Is(err, errStale) && reused && (req.Body == nil || req.Body == http.NoBody) && ctx.Err() == nil {
			continue
		}
		if errors.Is(err, errStale) {
			err = io.ErrUnexpectedEOF
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
}

// errStale is an upstream connection that ended before any byte of the
// response.
var errStale = errors.New("balancer: upstream closed the connection before responding")

// exchange writes req on c and reads the response headers, skipping
// informational (1xx) responses other than 101.
func (u *upstream) exchange(c *upConn, req *http.Request) (*http.Response, error) {
	if err := req.Write(c.bw); err != nil {
		return nil, staleIf(err)
	}
	if err := c.bw.Flush(); err != nil {
		return nil, staleIf(err)
	}
	if u.headerTimeout > 0 {
		c.SetReadDeadline(time.Now().Add(u.headerTimeout))
	}
	if _, err := c.br.Peek(1); err != nil {
		return nil, staleIf(err)
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			if u.headerTimeout > 0 {
				c.SetReadDeadline(time.Time{})
			}
			return resp, nil
		}
	}
}

// staleIf marks the errors of a connection the peer already closed.
func staleIf(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return errors.Join(errStale, err)
	}
	return err
}

// upBody is a response body from an upstream connection. Closing it returns
// the connection to the pool when the body was read to the end and the
// connection may carry more requests, closes it otherwise, and then
// releases the backend. It is used by one goroutine at a time.
type upBody struct {
	rc     io.ReadCloser
	c      *upConn
	u      *upstream
	b      *balance.Backend
	stop   func() bool
	reuse  bool
	eof    bool
	closed bool
}

// Read reads the body, waiting at most the upstream's readTimeout for more
// of it.
func (ub *upBody) Read(p []byte) (int, error) {
	if t := ub.u.readTimeout; t > 0 && !ub.eof {
		ub.c.SetReadDeadline(time.Now().Add(t))
		if ub.c.cut.Load() {
			ub.c.SetDeadline(aLongTimeAgo) // the request ended meanwhile
		}
	}
	n, err := ub.rc.Read(p)
	if err == io.EOF {
		ub.eof = true
	}
	return n, err
}

func (ub *upBody) Close() error {
	if ub.closed {
		return nil
	}
	ub.closed = true
	reusable := ub.eof && ub.reuse
	if !reusable {
		// Closing the connection first also keeps rc.Close from draining
		// an unread body (the client went away) to its end.
		ub.c.Close()
	}
	err := ub.rc.Close()
	// stop is false when the request's context already ended and poisoned
	// the connection's deadline.
	if ub.stop() && reusable {
		if ub.u.readTimeout > 0 {
			ub.c.SetReadDeadline(time.Time{}) // Read's, for the body
		}
		ub.u.put(ub.c)
	} else if reusable {
		ub.c.Close()
	}
	ub.b.Release()
	return err
}

// epoch is the origin of nanotime. time.Since uses the monotonic clock, so
// nanotime never goes backwards when the wall clock is set.
var epoch = time.Now()

// nanotime returns monotonic nanoseconds since the package was loaded; it
// does not allocate.
func nanotime() int64 { return int64(time.Since(epoch)) + 1 }
