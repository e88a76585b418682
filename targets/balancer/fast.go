package balancer

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The layer-7 forwarder Serve runs: a purpose-built HTTP/1.1 server and
// client that forward a request head by copying its bytes, with pooled
// buffers and the proxy's own upstream connections, instead of building
// net/http's Request and Response values for each request (issue 15).
// ServeHTTP (the http.Handler, for use inside another server) keeps the
// net/http path.
//
// What it does to a request: the head is read whole (up to MaxHeaderBytes,
// else 431) and checked (400 for a malformed line, a bad or repeated
// Content-Length, Transfer-Encoding together with Content-Length, or an
// obsolete folded line; 501 for a transfer coding other than chunked; 505
// for a version other than HTTP/1.0 and 1.1). Hop-by-hop headers
// (Connection and the headers it names, Keep-Alive, Proxy-Connection, TE,
// Trailer, Transfer-Encoding, Upgrade, Proxy-Authenticate,
// Proxy-Authorization) and Expect are dropped; Host becomes the
// upstream's, X-Forwarded-For/-Host/-Proto and a Forwarded element are
// set as ServeHTTP sets them. "Expect: 100-continue" is answered by the
// proxy before it reads the body. Bodies are streamed in both directions
// through a fixed buffer, never held whole: Content-Length bodies as they
// are, chunked ones re-chunked (trailers are dropped). A response with
// neither length nor chunking ends the client connection after it.
//
// Its files: this one (the server: accepting, shutting down), fastconn.go
// (a connection's state machine and routing), request.go (parsing a
// request head), exchange.go (the upstream exchange), body.go (bodies
// both ways), response.go (parsing and relaying the response), token.go
// (HTTP token helpers), sysconn.go (raw system calls), sweep.go (the
// timeouts).

// fastBufSize is the size of each pooled read and write buffer. A head
// line longer than this is read in pieces (readHead).
const fastBufSize = 16 << 10

var (
	fastReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, fastBufSize) }}
	fastWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, fastBufSize) }}
)

// fastServer serves client connections with the forwarder. It has the
// shape of http.Server's Serve, Shutdown and Close.
type fastServer struct {
	p *Proxy

	listening
	conns map[*fastConn]struct{} // listening.mu

	stopSweep context.CancelFunc // ends the sweeper (sweep.go)
	tick      time.Duration      // how often the sweeper looks

	emptyReads atomic.Uint64 // client reads that found nothing, of ended connections: for tests
	killed     atomic.Bool   // Close was called: exchanges end now
}

func newFastServer(p *Proxy) *fastServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &fastServer{p: p, conns: map[*fastConn]struct{}{}, stopSweep: cancel}
	cfg := p.cfg
	s.tick = sweepTick(cfg.HeaderTimeout, cfg.IdleTimeout, cfg.Timeout, cfg.ReadTimeout, clientCheckEvery)
	go s.sweep(ctx, s.tick)
	return s
}

// Serve accepts connections on ln until Shutdown or Close, then returns
// http.ErrServerClosed. It closes ln.
func (s *fastServer) Serve(ln net.Listener) error {
	if !s.begin(ln) {
		return http.ErrServerClosed
	}
	return acceptLoop(ln, s.isClosing, func(nc net.Conn) {
		s.p.clientConns.Add(1)
		c := &fastConn{s: s, nc: nc}
		c.stepFn = c.step
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	})
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Shutdown stops accepting, closes idle connections at once and busy ones
// after their response, and waits for them until ctx is done (then it
// closes them and returns ctx's error).
func (s *fastServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.mu.Unlock()
	// The sweeper keeps enforcing timeouts while the busy connections
	// finish; it ends with them (or in Close).
	defer s.stopSweep()
	return drain(ctx, 10*time.Millisecond, func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if !c.busy.Load() {
				c.nc.Close()
			}
		}
		return len(s.conns)
	}, &s.wg, s.Close)
}

// Close closes the listener and every connection at once. A connection
// serving in a session (sysConn.session) keeps its socket until the
// session's step returns, and closing the socket waits for that, which an
// upstream that does not answer would hold up for good (the sweeper stops
// here): so Close also closes the upstream connection each one reads (an
// exchange that stores its upstream connection after this sees killed and
// closes it itself), and does not wait for the client sockets to close.
func (s *fastServer) Close() error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.killed.Store(true)
	for c := range s.conns {
		if uc := c.upc.Load(); uc != nil {
			uc.Close()
		}
		go c.nc.Close()
	}
	s.mu.Unlock()
	s.stopSweep()
	return nil
}

// setBusy marks c busy or idle; it returns false if c must end because
// the server is shutting down. It takes no lock: c stores busy, then loads
// closing; Shutdown stores closing, then loads every busy (sequentially
// consistent atomics), so at least one of them sees the other's store and
// an idle connection is never left open by Shutdown nor closed before its
// response.
func (s *fastServer) setBusy(c *fastConn, busy bool) bool {
	c.busy.Store(busy)
	return !s.closing.Load()
}
