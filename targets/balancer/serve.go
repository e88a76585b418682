package balancer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lbbench/lbbench/internal/httpdrain"
)

// ShutdownTimeout is how long Serve waits for in-flight requests to finish
// once its context is done, before closing their connections.
const ShutdownTimeout = 30 * time.Second

// MaxHeaderBytes bounds a client's request head (layer 7): a longer one is
// answered 431 and its connection closed; other connections are not
// affected.
const MaxHeaderBytes = 64 << 10

// server is what Serve needs of the layer-7 http.Server and the layer-4
// server alike.
type server interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
	Close() error
}

var (
	_ server = (*http.Server)(nil)
	_ server = (*l4Server)(nil)
	_ server = (*fastServer)(nil)
)

// Serve serves proxied traffic on ln in the configured mode and, if admin
// is non-nil, the admin API on admin: GET /healthz answers 200 and GET
// /stats the JSON of Stats. It blocks until ctx is done, then stops
// accepting, lets in-flight work finish (up to ShutdownTimeout), closes idle
// upstream connections and returns nil. It returns an error if a listener
// fails or the drain times out. Serve closes both listeners. Client
// connections accepted on ln are counted in Stats.ClientConns.
//
// Layer 7 drains like http.Server.Shutdown: idle keep-alive connections
// close at once, busy ones after their response. Layer 4 cannot see
// requests, so it closes a connection once it is quiet: no bytes moved for
// a moment and the last ones went to the client.
func (p *Proxy) Serve(ctx context.Context, ln, admin net.Listener) error {
	type named struct {
		name string
		srv  server
		ln   net.Listener
	}
	var main server = httpdrain.CloseFreshOnShutdown(&http.Server{
		Handler:           p,
		ConnState:         p.countConn,
		ReadHeaderTimeout: p.cfg.HeaderTimeout,
		IdleTimeout:       p.cfg.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	})
	switch {
	case p.cfg.Mode == L4:
		main = newL4Server(p)
	case !p.cfg.NetHTTP:
		main = newFastServer(p)
	}
	servers := []named{{"proxy", main, ln}}
	if admin != nil {
		servers = append(servers, named{"admin", httpdrain.CloseFreshOnShutdown(&http.Server{Handler: p.adminHandler()}), admin})
	}
	errc := make(chan error, len(servers))
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("balancer: serve %s on %s: %w", s.name, s.ln.Addr(), err)
			}
		})
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	// The proxy drains first; the admin API keeps answering meanwhile.
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if serr := s.srv.Shutdown(sctx); serr != nil {
			s.srv.Close()
			err = errors.Join(err, fmt.Errorf("balancer: shut down %s: %w", s.name, serr))
		}
	}
	wg.Wait()
	p.closeIdle()
	return err
}

// countConn is the proxy server's ConnState hook.
func (p *Proxy) countConn(_ net.Conn, state http.ConnState) {
	if state == http.StateNew {
		p.clientConns.Add(1)
	}
}

func (p *Proxy) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Stats())
	})
	return mux
}
