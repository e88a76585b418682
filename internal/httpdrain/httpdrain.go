// Package httpdrain makes http.Server's Shutdown close, instead of waiting
// for, the connections that have not begun a request.
//
// http.Server.Shutdown closes idle keep-alive connections at once and waits
// for busy ones, but it counts a connection still in StateNew (accepted,
// not one byte of a request read) as busy until it is 5 seconds old. Yet
// the server answers no request that it reads after Shutdown began (its
// connection loop returns when it sees the server shutting down), so such
// a connection can only end unanswered: waiting for it only delays the
// drain. And such connections are common: an HTTP client's spare
// connection, dialled in parallel and parked in its pool, or a TCP probe.
// Each held lbbench serve's stop, and so a run's teardown and Ctrl-C, for
// up to 5 s. nginx, too, closes connections waiting for their first request
// when it shuts down gracefully.
package httpdrain

import (
	"net"
	"net/http"
	"sync"
)

// CloseFreshOnShutdown chains srv's ConnState hook (which keeps being
// called) to track the connections in StateNew and registers a shutdown
// function that closes them. Set srv's ConnState before calling it, and do
// not change it after. It returns srv.
func CloseFreshOnShutdown(srv *http.Server) *http.Server {
	var mu sync.Mutex
	fresh := map[net.Conn]struct{}{}
	next := srv.ConnState
	srv.ConnState = func(c net.Conn, state http.ConnState) {
		mu.Lock()
		if state == http.StateNew {
			fresh[c] = struct{}{}
		} else {
			delete(fresh, c)
		}
		mu.Unlock()
		if next != nil {
			next(c, state)
		}
	}
	// Shutdown runs this once it has marked the server shutting down and
	// closed its listeners: no connection joins fresh after, and any that
	// begins a request from now on would be dropped unanswered.
	srv.RegisterOnShutdown(func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range fresh {
			c.Close()
			delete(fresh, c)
		}
	})
	return srv
}
