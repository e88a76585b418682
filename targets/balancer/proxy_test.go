package balancer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/internal/testkit"
)

// startBackends starts n upstream servers whose responses carry X-Worker: i,
// then run handler (or answer "ok" if it is nil). It returns their addresses.
func startBackends(t *testing.T, n int, handler http.HandlerFunc) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Worker", strconv.Itoa(i))
			if handler == nil {
				io.WriteString(w, "ok")
				return
			}
			handler(w, r)
		}))
		t.Cleanup(srv.Close)
		addrs[i] = srv.Listener.Addr().String()
	}
	return addrs
}

// testProxy is a Proxy served on loopback for the duration of a test.
type testProxy struct {
	*Proxy
	url, admin string
	client     *http.Client
}

// startProxy serves a Proxy built from cfg until the test ends, then checks
// that Serve returned nil.
func startProxy(t *testing.T, cfg Config) *testProxy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, admin := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln, admin) }()
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testProxy{
		Proxy:  p,
		url:    "http://" + ln.Addr().String(),
		admin:  "http://" + admin.Addr().String(),
		client: &http.Client{Transport: tr},
	}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// get sends GET path and returns the status, X-Worker header and body.
func (tp *testProxy) get(t *testing.T, path string) (int, string, string) {
	t.Helper()
	r, err := testkit.Fetch(tp.client, tp.url+path)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status, r.Worker, r.Body
}

func TestSequentialSpreadIsEven(t *testing.T) {
	for _, policy := range []string{"round_robin", "least_conn"} {
		t.Run(policy, func(t *testing.T) {
			const backends, requests = 4, 100
			tp := startProxy(t, Config{Upstreams: startBackends(t, backends, nil), Policy: policy, UpstreamKeepAlive: true})
			counts := map[string]int{}
			for range requests {
				code, worker, body := tp.get(t, "/")
				if code != http.StatusOK || body != "ok" {
					t.Fatalf("got %d %q, want 200 ok", code, body)
				}
				counts[worker]++
			}
			for i := range backends {
				if got := counts[strconv.Itoa(i)]; got != requests/backends {
					t.Errorf("worker %d served %d requests, want %d (all: %v)", i, got, requests/backends, counts)
				}
			}
			s := tp.Stats()
			if s.Policy != policy || s.Decisions != requests {
				t.Errorf("stats: policy %q decisions %d, want %q %d", s.Policy, s.Decisions, policy, requests)
			}
			for i, b := range s.Backends {
				if b.Requests != requests/backends || b.Active != 0 || b.PeakActive != 1 || b.Errors != 0 {
					t.Errorf("backend %d stats %+v", i, b)
				}
			}
		})
	}
}

// TestLeastConnAvoidsBusyBackend holds one backend busy with a response whose
// body is still streaming and checks that it counts as active until the body
// is done, and that least_conn sends nothing else to it meanwhile.
func TestLeastConnAvoidsBusyBackend(t *testing.T) {
	release := make(chan struct{})
	addrs := startBackends(t, 4, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stream" {
			io.WriteString(w, "ok")
			return
		}
		io.WriteString(w, "head,")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "tail")
	})
	tp := startProxy(t, Config{Upstreams: addrs, Policy: "least_conn", UpstreamKeepAlive: true})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // first, so a failed test does not hang in shutdown

	resp, err := tp.client.Get(tp.url + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	busy, err := strconv.Atoi(resp.Header.Get(testkit.WorkerHeader))
	if err != nil {
		t.Fatalf("X-Worker: %v", err)
	}
	// Headers and part of the body have reached the client; the backend
	// must still count as active.
	if a := tp.Stats().Backends[busy].Active; a != 1 {
		t.Fatalf("streaming backend %d active = %d, want 1", busy, a)
	}

	counts := map[string]int{}
	for range 30 {
		_, worker, _ := tp.get(t, "/")
		counts[worker]++
	}
	if n := counts[strconv.Itoa(busy)]; n != 0 {
		t.Errorf("busy backend %d got %d requests (all: %v)", busy, n, counts)
	}
	if len(counts) != 3 {
		t.Errorf("requests reached %d idle backends, want 3 (all: %v)", len(counts), counts)
	}
	if a := tp.Stats().Backends[busy].Active; a != 1 {
		t.Fatalf("streaming backend %d active = %d after other requests, want 1", busy, a)
	}

	unblock()
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "head,tail" {
		t.Fatalf("streamed body = %q, %v; want head,tail", body, err)
	}
	testkit.WaitFor(t, "the streaming backend to become idle", func() bool { return tp.Stats().Backends[busy].Active == 0 })
}

func TestUpstreamKeepAlive(t *testing.T) {
	const requests = 40
	tests := []struct {
		name      string
		keepAlive bool
		check     func(conns uint64) bool
		want      string
	}{
		{"off", false, func(c uint64) bool { return c == requests }, "one per request"},
		{"on", true, func(c uint64) bool { return c <= requests/5 }, "far fewer than requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := startProxy(t, Config{Upstreams: startBackends(t, 4, nil), UpstreamKeepAlive: tt.keepAlive})
			for range requests {
				if code, _, _ := tp.get(t, "/"); code != http.StatusOK {
					t.Fatalf("status %d", code)
				}
			}
			s := tp.Stats()
			if !tt.check(s.UpstreamConns) {
				t.Errorf("upstream_conns = %d for %d requests, want %s", s.UpstreamConns, requests, tt.want)
			}
			if s.ClientConns != 1 {
				t.Errorf("client_conns = %d, want 1 (one keep-alive client connection)", s.ClientConns)
			}
		})
	}
}

func TestUpstreamFailures(t *testing.T) {
	deadAddr := deadAddr(t)
	release := make(chan struct{})
	slow := startBackends(t, 1, func(http.ResponseWriter, *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // runs before the backend closes

	tests := []struct {
		name      string
		cfg       Config
		errors    uint64 // backend errors after 3 requests
		noBackend uint64
	}{
		// Each refusal marks its backend down, so the third request finds
		// none left.
		{"all backends down", Config{Upstreams: []string{deadAddr, deadAddr}}, 2, 1},
		// A slow backend is not marked down: it accepted the connection.
		{"headers slower than timeout", Config{Upstreams: slow, Timeout: 50 * time.Millisecond}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := startProxy(t, tt.cfg)
			const requests = 3
			for range requests {
				if code, _, body := tp.get(t, "/"); code != http.StatusBadGateway {
					t.Fatalf("status %d %q, want 502", code, body)
				}
			}
			s := tp.Stats()
			var errs uint64
			for _, b := range s.Backends {
				errs += b.Errors
				if b.Active != 0 {
					t.Errorf("backend %s still active: %+v", b.Addr, b)
				}
			}
			if errs != tt.errors || s.NoBackend != tt.noBackend {
				t.Errorf("backend errors = %d, no_backend = %d; want %d, %d", errs, s.NoBackend, tt.errors, tt.noBackend)
			}
		})
	}
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
}

// nonePolicy never finds a backend.
type nonePolicy struct{}

func (nonePolicy) Pick([]*balance.Backend, *http.Request) *balance.Backend { return nil }

func TestNoBackendAvailable(t *testing.T) {
	p, err := New(Config{Upstreams: startBackends(t, 1, nil)})
	if err != nil {
		t.Fatal(err)
	}
	p.fallback.policy = nonePolicy{}
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || string(body) != "balancer: no backend available\n" {
		t.Fatalf("got %d %q, want 502 no backend available", resp.StatusCode, body)
	}
	if d := p.Stats().Decisions; d != 0 {
		t.Errorf("decisions = %d, want 0", d)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		is   error
	}{
		{"empty upstreams", Config{}, nil},
		{"unknown policy", Config{Upstreams: []string{"127.0.0.1:1"}, Policy: "leastconn"}, balance.ErrUnknownPolicy},
		{"policy arguments", Config{Upstreams: []string{"127.0.0.1:1"}, PolicyArgs: map[string]string{"x": "1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if err == nil {
				t.Fatalf("New = %v, want an error", p)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v does not wrap %v", err, tt.is)
			}
		})
	}
}

func TestAdminAPI(t *testing.T) {
	tp := startProxy(t, Config{Upstreams: startBackends(t, 2, nil), Policy: "round_robin", UpstreamKeepAlive: true})
	for range 3 {
		tp.get(t, "/")
	}
	resp, err := tp.client.Get(tp.admin + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz status %d", resp.StatusCode)
	}

	resp, err = tp.client.Get(tp.admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Policy != "round_robin" || s.Decisions != 3 || s.ClientConns != 1 || s.UpstreamConns != 2 ||
		len(s.Backends) != 2 || s.Backends[0].Requests != 2 || s.Backends[1].Requests != 1 {
		t.Errorf("/stats = %+v", s)
	}
}

func TestServeDrainsInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	addrs := startBackends(t, 1, func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})
	p, err := New(Config{Upstreams: addrs})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln, nil) }()
	unblock := sync.OnceFunc(func() { close(release) })
	defer unblock() // so a failed test does not hang in shutdown

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		got <- result{string(body), err}
	}()
	<-started
	cancel()
	testkit.WaitFor(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}
	unblock()
	if r := <-got; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request got %q, %v; want done", r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
}
