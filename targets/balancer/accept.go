package balancer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// listening is what the layer 7 and layer 4 servers share of
// http.Server's lifecycle: their listener, whether Shutdown or Close was
// called, and their connections' goroutines. mu also guards each server's
// own connection set.
type listening struct {
	mu sync.Mutex
	ln net.Listener
	// closing: Shutdown or Close was called, accept no more. It is set
	// with mu held and read without it (a request's hot path reads it).
	closing atomic.Bool
	wg      sync.WaitGroup
}

// begin records ln as the listener, or closes it and returns false when
// the server is already closing (Serve then returns http.ErrServerClosed).
func (l *listening) begin(ln net.Listener) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing.Load() {
		ln.Close()
		return false
	}
	l.ln = ln
	return true
}

func (l *listening) isClosing() bool { return l.closing.Load() }

// stopAcceptingLocked marks the server closing and closes its listener;
// l.mu is held.
func (l *listening) stopAcceptingLocked() {
	l.closing.Store(true)
	if l.ln != nil {
		l.ln.Close()
	}
}

// acceptLoop accepts connections on ln and hands each to serve, until
// Accept fails for good: then it returns http.ErrServerClosed when closing
// says the server is shutting down, else the error. A timeout or running
// out of file descriptors waits and retries with a growing backoff (5 ms
// doubling to 1 s), as http.Server does. Both the layer 7 and the layer 4
// server accept through it.
func acceptLoop(ln net.Listener, closing func() bool, serve func(net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if closing() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		serve(c)
	}
}

// everyTick calls look with the tick's time every period until ctx ends:
// the loop of the layer 4 idle reaper and the layer 7 sweeper, which look
// at every connection of their server in turn.
func everyTick(ctx context.Context, every time.Duration, look func(now time.Time)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			look(now)
		}
	}
}

// drain is the graceful part of both servers' Shutdown, once they stopped
// accepting: every period it calls sweep, which closes the connections that
// may go now and returns how many are left. When none are left it waits for
// their goroutines (wg) and returns nil; when ctx ends first it calls
// closeAll and returns ctx's error.
func drain(ctx context.Context, every time.Duration, sweep func() int, wg *sync.WaitGroup, closeAll func() error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if sweep() == 0 {
			wg.Wait()
			return nil
		}
		select {
		case <-ctx.Done():
			closeAll()
			return ctx.Err()
		case <-tick.C:
		}
	}
}
