package balancer

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultL4IdleTimeout is how long a layer-4 connection may stay silent
// (no byte either way) before the proxy closes it: a client that connects
// and sends nothing, or stops half-way, does not hold a connection (and
// an upstream one) for ever. Slow clients that do send are bounded by the
// workers' own header-read timeout, which ends the relay.
const DefaultL4IdleTimeout = 2 * time.Minute

// l4QuietPoll is how often a shutting-down layer-4 server looks for quiet
// connections to close.
const l4QuietPoll = 20 * time.Millisecond

// l4Server is the layer-4 balancer: for each accepted client connection it
// picks a backend once, connects to it and copies bytes both ways without
// parsing them, until both sides are done. It has the shape of
// http.Server's Serve, Shutdown and Close.
type l4Server struct {
	p      *Proxy
	rt     *route
	dial   context.Context // cancelled by Close, so no dial outlives it
	cancel context.CancelFunc

	listening
	conns  map[*l4Conn]struct{} // listening.mu
	closed bool                 // Close was called: relay no more; listening.mu
}

// Directions of the last bytes an l4Conn moved.
const (
	dirNone int32 = iota
	dirUp         // client to upstream: a request may be in flight
	dirDown       // upstream to client
)

// l4Conn is one client connection and its upstream connection.
type l4Conn struct {
	client   net.Conn
	upstream net.Conn      // nil while dialing; set under l4Server.mu
	moved    atomic.Uint64 // bytes copied, both directions
	last     atomic.Int32  // dirNone, dirUp or dirDown
	seen     uint64        // moved at the previous shutdown poll; guarded by l4Server.mu
	// idleSeen and idleSince: moved at the idle reaper's last look, and
	// since when it has not changed; guarded by l4Server.mu.
	idleSeen  uint64
	idleSince time.Time
}

func newL4Server(p *Proxy) *l4Server {
	ctx, cancel := context.WithCancel(context.Background())
	// Validate allows no named pool in layer-4 mode.
	s := &l4Server{p: p, rt: p.fallback, dial: ctx, cancel: cancel, conns: map[*l4Conn]struct{}{}}
	idle := p.cfg.L4IdleTimeout
	if idle <= 0 {
		idle = DefaultL4IdleTimeout
	}
	go s.reapIdle(ctx, idle)
	return s
}

// reapIdle closes, until ctx ends, every connection that moved no byte for
// idle; it looks four times per idle period (at most once a second), so a
// silent connection goes between idle and 1.25 idle after its last byte.
func (s *l4Server) reapIdle(ctx context.Context, idle time.Duration) {
	everyTick(ctx, min(idle/4, time.Second), func(now time.Time) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if moved := c.moved.Load(); moved != c.idleSeen || c.idleSince.IsZero() {
				c.idleSeen, c.idleSince = moved, now
			} else if now.Sub(c.idleSince) >= idle {
				if c.upstream != nil {
					c.close()
				} else {
					c.client.Close()
				}
			}
		}
	})
}

// Serve accepts connections on ln until Shutdown or Close, then returns
// http.ErrServerClosed. It closes ln.
func (s *l4Server) Serve(ln net.Listener) error {
	if !s.begin(ln) {
		return http.ErrServerClosed
	}
	return acceptLoop(ln, s.isClosing, func(c net.Conn) {
		s.p.clientConns.Add(1)
		// Tracked before its goroutine starts, so Shutdown never sees an
		// empty set while a connection is on its way in.
		lc := &l4Conn{client: c, seen: ^uint64(0)}
		if s.track(lc) {
			go func() {
				defer s.wg.Done()
				s.handle(lc)
			}()
		}
	})
}

// handle picks a backend for c's client, connects and relays.
func (s *l4Server) handle(c *l4Conn) {
	defer s.untrack(c)
	client := c.client
	p, rt := s.p, s.rt
	rt.requests.Add(1)
	p.injectCost()
	for try := 0; ; try++ {
		b := p.pick(rt, nil)
		if b == nil {
			client.Close()
			return
		}
		u := rt.ups[b.Index()]
		up, err := u.dialer.DialContext(s.dial, u.network, u.address)
		if err != nil {
			b.Release()
			if s.dial.Err() != nil {
				client.Close()
				return
			}
			b.AddError()
			b.MarkDown(p.cfg.DownFor)
			if try >= p.cfg.Retries {
				client.Close()
				return
			}
			p.retries.Add(1)
			continue
		}
		b.AddConn()
		p.upCounts.opened.Add(1)
		if s.attach(c, up) {
			c.relay()
		}
		b.Release()
		return
	}
}

// track registers c and adds it to the wait group, or closes it and
// returns false if the server was closed.
func (s *l4Server) track(c *l4Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.client.Close()
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

// attach gives c its upstream connection, or closes both and returns false
// if the server was closed meanwhile.
func (s *l4Server) attach(c *l4Conn, up net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.upstream = up
	if s.closed {
		c.close()
		return false
	}
	return true
}

func (s *l4Server) untrack(c *l4Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Shutdown stops accepting, then closes each connection once it is quiet:
// nothing moved for a poll interval and the last bytes went to the client
// (for request-response protocols: no request is waiting for its answer).
// It returns once every connection is closed, or with ctx's error after
// closing the rest when ctx ends first.
func (s *l4Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.mu.Unlock()
	err := drain(ctx, l4QuietPoll, func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if c.upstream == nil {
				continue // still connecting
			}
			moved := c.moved.Load()
			if moved == c.seen && c.last.Load() != dirUp {
				c.close()
			}
			c.seen = moved
		}
		return len(s.conns)
	}, &s.wg, s.Close)
	if err != nil {
		return err
	}
	s.cancel()
	return nil
}

// Close stops accepting, closes every connection at once and waits for
// their goroutines.
func (s *l4Server) Close() error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.closed = true
	for c := range s.conns {
		if c.upstream != nil {
			c.close()
		} else {
			c.client.Close()
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

func (c *l4Conn) close() {
	c.client.Close()
	c.upstream.Close()
}

// relay copies bytes both ways until both directions are done. When one
// side finishes sending, the other is told with a half-close, so a client
// that shuts down its writing side still gets the rest of the response. An
// error in either direction ends both.
func (c *l4Conn) relay() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.copy(c.upstream, c.client, dirUp); err != nil {
			c.close()
			return
		}
		closeWrite(c.upstream)
	}()
	if err := c.copy(c.client, c.upstream, dirDown); err != nil {
		c.close()
	} else {
		closeWrite(c.client)
	}
	<-done
	c.close()
}

// l4Buffers holds the relay's copy buffers.
var l4Buffers = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// copy moves bytes from src to dst until src ends (nil) or either fails.
// Bytes are counted and the direction recorded for Shutdown: dirUp as soon
// as client bytes arrive, dirDown once bytes reached the client.
func (c *l4Conn) copy(dst, src net.Conn, dir int32) error {
	bp := l4Buffers.Get().(*[]byte)
	defer l4Buffers.Put(bp)
	buf := *bp
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if dir == dirUp {
				c.last.Store(dirUp)
			}
			w, werr := dst.Write(buf[:n])
			c.moved.Add(uint64(w))
			if dir == dirDown {
				c.last.Store(dirDown)
			}
			if werr != nil {
				return werr
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// closeWrite half-closes c if it can (TCP and Unix sockets can).
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
