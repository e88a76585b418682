package worker

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// idleBlockingWake is the receive timeout of a blocking socket under
// AcceptIdle: how long a busy worker may still sit in accept4.
const idleBlockingWake = 10 * time.Millisecond

// errBusy is returned by a gated rawListener.Accept when the worker has no
// free slot: it did not call accept4, the connection stays queued in the
// kernel.
var errBusy = errors.New("worker: busy, not accepting")

// idleGate counts a worker's load for AcceptIdle: connections accepted
// whose first request has not finished yet, plus connections carrying a
// request. The worker is free while the load is below its concurrency.
type idleGate struct {
	limit int
	mu    sync.Mutex
	load  int
	state map[net.Conn]http.ConnState
	freed chan struct{} // signalled (capacity 1) when the load drops
}

func newIdleGate(limit int) *idleGate {
	return &idleGate{limit: limit, state: make(map[net.Conn]http.ConnState), freed: make(chan struct{}, 1)}
}

// isFree reports whether the worker has a free slot now.
func (g *idleGate) isFree() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.load < g.limit
}

// reserve counts a connection just accepted: it holds a slot until its
// first request finishes (or it closes).
func (g *idleGate) reserve() {
	g.mu.Lock()
	g.load++
	g.mu.Unlock()
}

// connState is the http.Server ConnState hook that follows the load.
func (g *idleGate) connState(c net.Conn, s http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	prev, seen := g.state[c]
	if !seen {
		prev = http.StateNew
	}
	holding := prev == http.StateNew || prev == http.StateActive
	switch s {
	case http.StateNew:
		g.state[c] = s
		return
	case http.StateActive:
		if !holding {
			g.load++
		}
		g.state[c] = s
		return
	case http.StateIdle:
		g.state[c] = s
	case http.StateClosed, http.StateHijacked:
		delete(g.state, c)
	}
	if holding {
		g.load--
		select {
		case g.freed <- struct{}{}:
		default:
		}
	}
}

// wait returns once the worker has a free slot, or false once done is
// closed.
func (g *idleGate) wait(done <-chan struct{}) bool {
	for !g.isFree() {
		select {
		case <-g.freed:
		case <-done:
			return false
		}
	}
	return true
}

// idleListener accepts only while its worker has a free slot (AcceptIdle).
// It never calls accept4 on the socket while the worker is busy, whatever
// the inner listener: a rawListener checks the gate right before each
// accept4 and epoll_wait. Go's netpoller cannot be used (it accepts as
// soon as the socket is readable, and a net.Listener's RawConn cannot wait
// for readability), so a netpoll TCP or Unix listener is replaced by a
// rawListener on a duplicate of its socket waiting in epoll_wait without
// EPOLLEXCLUSIVE: every waiting worker is woken for each connection and
// the first accept4 wins, as with the netpoller. Another listener is only
// called while the worker is free.
type idleListener struct {
	net.Listener
	gate *idleGate
	raw  *rawListener // set when accepting on a raw socket
	done chan struct{}
	once sync.Once
}

func newIdleListener(ln net.Listener, g *idleGate) (*idleListener, error) {
	l := &idleListener{Listener: ln, gate: g, done: make(chan struct{})}
	switch inner := ln.(type) {
	case *rawListener:
		l.raw = inner
	case interface{ File() (*os.File, error) }:
		f, err := inner.File()
		if err != nil {
			return nil, fmt.Errorf("worker: accept_when idle: %w", err)
		}
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("worker: accept_when idle: %w", os.NewSyscallError("dup", err))
		}
		raw, err := newRawListener(fd, waitHerd)
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("worker: accept_when idle: %w", err)
		}
		l.raw = raw
	}
	if l.raw != nil {
		l.raw.gate = g.isFree
		if l.raw.blocking() {
			// A blocking accept4 in progress when a request on an open
			// connection makes the worker busy cannot be recalled (a
			// signal did not interrupt it on Linux 6.18): a short
			// receive timeout (honoured by TCP accepts too on that
			// kernel) makes it return and look at the gate again, so
			// it holds the socket at most idleBlockingWake after the
			// worker turned busy.
			tv := unix.NsecToTimeval(idleBlockingWake.Nanoseconds())
			if err := unix.SetsockoptTimeval(l.raw.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				return nil, fmt.Errorf("worker: accept_when idle: %w", os.NewSyscallError("setsockopt SO_RCVTIMEO", err))
			}
		}
	}
	return l, nil
}

// Accept waits for a free slot, then for a connection.
func (l *idleListener) Accept() (net.Conn, error) {
	for {
		if !l.gate.wait(l.done) {
			return nil, net.ErrClosed
		}
		c, err := l.acceptIfFree()
		if errors.Is(err, errBusy) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

func (l *idleListener) acceptIfFree() (net.Conn, error) {
	switch {
	case l.raw != nil:
		c, err := l.raw.Accept()
		if err == nil {
			l.gate.reserve()
		}
		return c, err
	default:
		c, err := l.Listener.Accept()
		if err == nil {
			l.gate.reserve()
		}
		return c, err
	}
}

// Close stops Accept, including one waiting for a free slot, and closes
// the inner listener. It is idempotent.
func (l *idleListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.Listener.Close()
		if l.raw != nil && l.raw != l.Listener {
			err = errors.Join(err, l.raw.Close())
		}
	})
	return err
}
