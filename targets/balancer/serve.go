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
)

// ShutdownTimeout is how long Serve waits for in-flight requests to finish
// once its context is done, before closing their connections.
const ShutdownTimeout = 30 * time.Second

// Serve serves proxied traffic on ln and, if admin is non-nil, the admin API
// on admin: GET /healthz answers 200 and GET /stats the JSON of Stats. It
// blocks until ctx is done, then stops accepting, lets in-flight requests
// finish (up to ShutdownTimeout), closes idle upstream connections and
// returns nil. It returns an error if a listener fails or the drain times
// out. Serve closes both listeners. Client connections accepted on ln are
// counted in Stats.ClientConns.
func (p *Proxy) Serve(ctx context.Context, ln, admin net.Listener) error {
	type server struct {
		name string
		srv  *http.Server
		ln   net.Listener
	}
	servers := []server{{"proxy", &http.Server{Handler: p, ConnState: p.countConn}, ln}}
	if admin != nil {
		servers = append(servers, server{"admin", &http.Server{Handler: p.adminHandler()}, admin})
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
	p.transport.CloseIdleConnections()
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
