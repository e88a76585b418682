package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/internal/monoclock"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/worker"
	"github.com/lbbench/lbbench/workloads"
)

func TestConfig(t *testing.T) {
	if got, want := (worker.Config{}).WithDefaults(), (worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll"}); got != want {
		t.Errorf("zero Config.WithDefaults() = %+v, want %+v", got, want)
	}
	tests := []struct {
		name    string
		cfg     worker.Config
		wantErr string
	}{
		{name: "defaults", cfg: worker.Config{}.WithDefaults()},
		{name: "spin", cfg: worker.Config{Index: 3, Concurrency: 8, Mode: "spin", Service: time.Millisecond, Accept: "blocking", MaxConns: 8}},
		{name: "unknown accept", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "fifo"}, wantErr: `worker: accept must be one of netpoll, blocking, epoll-exclusive, poll, got "fifo"`},
		{name: "event loop", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "blocking", AcceptWhen: "idle"}},
		{name: "unknown accept_when", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll", AcceptWhen: "busy"}, wantErr: `worker: accept_when must be one of always, idle, got "busy"`},
		{name: "negative max conns", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll", MaxConns: -1}, wantErr: "worker: max_conns must be >= 0 (0: no limit), got -1"},
		{name: "zero concurrency", cfg: worker.Config{Mode: "sleep"}, wantErr: "worker: concurrency must be >= 1, got 0"},
		{name: "negative index", cfg: worker.Config{Index: -1, Concurrency: 1, Mode: "sleep"}, wantErr: "worker: index must be >= 0, got -1"},
		{name: "unknown mode", cfg: worker.Config{Concurrency: 1, Mode: "busy"}, wantErr: `worker: mode must be "sleep" or "spin", got "busy"`},
		{name: "negative service", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Service: -1}, wantErr: "worker: service must be between 0 and 30s, got -1ns"},
		{name: "service too long", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Service: time.Minute}, wantErr: "worker: service must be between 0 and 30s, got 1m0s"},
		{name: "inject cost", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll", InjectCost: 40 * time.Microsecond}},
		{name: "negative inject cost", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll", InjectCost: -time.Microsecond}, wantErr: "worker: inject_cost must be between 0 (none) and 1s, got -1µs"},
		{name: "inject cost too long", cfg: worker.Config{Concurrency: 1, Mode: "sleep", Accept: "netpoll", InjectCost: time.Minute}, wantErr: "worker: inject_cost must be between 0 (none) and 1s, got 1m0s"},
	}
	if _, err := worker.New(worker.Config{Concurrency: -1}); err == nil || err.Error() != "worker: concurrency must be >= 1, got -1" {
		t.Errorf("New with concurrency -1 = %v, want a concurrency error", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// serve runs a new Worker for cfg on fresh 127.0.0.1 main and admin
// listeners until the test ends.
func serve(t *testing.T, cfg worker.Config) (w *worker.Worker, mainURL, adminURL string) {
	t.Helper()
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	admin := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Serve(ctx, ln, admin) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return w, "http://" + ln.Addr().String(), "http://" + admin.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func TestRoutes(t *testing.T) {
	w, err := worker.New(worker.Config{Index: 7})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{path: "/work", wantCode: 200, wantBody: "ok\n"},
		{path: "/work?us=100&lbc=0", wantCode: 200, wantBody: "ok\n"},
		{path: "/any/other/path?ms=0.1", wantCode: 200, wantBody: "ok\n"},
		{path: "/healthz", wantCode: 200, wantBody: "ok\n"},
		{path: "/stats", wantCode: 200, wantBody: `"index":7`},
		{path: "/work?ms=abc", wantCode: 400, wantBody: `worker: bad ms="abc"`},
		{path: "/work?us=-5", wantCode: 400, wantBody: `worker: bad us="-5"`},
		{path: "/work?us=1&ms=1", wantCode: 400, wantBody: "worker: give one service time"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := testkit.Fetch(srv.Client(), srv.URL+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantCode || !strings.Contains(got.Body, tt.wantBody) {
				t.Errorf("GET %s = %d %q, want %d with %q", tt.path, got.Status, got.Body, tt.wantCode, tt.wantBody)
			}
			if got.Worker != "7" {
				t.Errorf("GET %s: X-Worker = %q, want \"7\"", tt.path, got.Worker)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	tests := []struct {
		name         string
		concurrency  int
		wantOrder    string // which request completes first
		wantMaxQueue int64
	}{
		{name: "single task queues the second request", concurrency: 1, wantOrder: "long,short", wantMaxQueue: 1},
		{name: "two slots serve both at once", concurrency: 2, wantOrder: "short,long", wantMaxQueue: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, base, _ := serve(t, worker.Config{Concurrency: tt.concurrency})
			done := make(chan string, 2)
			send := func(name, path string) {
				got, err := testkit.Fetch(http.DefaultClient, base+path)
				if err != nil || got.Status != 200 {
					t.Errorf("GET %s = %+v, %v", path, got, err)
				}
				done <- name
			}
			go send("long", "/work?ms=400")
			testkit.WaitFor(t, "the long request to be in service", func() bool { return w.Stats().Active == 1 })
			// The short request has a service time of its own, so that its
			// response trails the long one's by a wide margin when it queues.
			go send("short", "/work?ms=100")
			if tt.concurrency == 1 {
				testkit.WaitFor(t, "the short request to queue", func() bool { return w.Stats().Queued == 1 })
			}
			if order := <-done + "," + <-done; order != tt.wantOrder {
				t.Errorf("completion order %s, want %s", order, tt.wantOrder)
			}
			st := w.Stats()
			if st.MaxQueue != tt.wantMaxQueue || st.Requests != 2 || st.Active != 0 || st.Queued != 0 {
				t.Errorf("Stats() = %+v, want max_queue %d, requests 2, active 0, queued 0", st, tt.wantMaxQueue)
			}
		})
	}
}

func TestModes(t *testing.T) {
	const service = 20 * time.Millisecond
	for _, mode := range []string{worker.ModeSleep, worker.ModeSpin} {
		t.Run(mode, func(t *testing.T) {
			_, base, _ := serve(t, worker.Config{Mode: mode, Service: service})
			start := time.Now()
			got, err := testkit.Fetch(http.DefaultClient, base+"/work")
			if err != nil || got.Status != 200 {
				t.Fatalf("GET /work = %+v, %v", got, err)
			}
			// A lower bound only: the service time is a floor, never a ceiling.
			if elapsed := time.Since(start); elapsed < service {
				t.Errorf("request took %v, less than the service time %v", elapsed, service)
			}
		})
	}
}

func TestStatsCountsConnections(t *testing.T) {
	_, base, admin := serve(t, worker.Config{Index: 2})
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range 3 {
		if _, err := testkit.Fetch(fresh, base+"/work"); err != nil {
			t.Fatal(err)
		}
	}
	keepAlive := &http.Client{Transport: &http.Transport{}}
	defer keepAlive.CloseIdleConnections()
	for range 3 {
		if _, err := testkit.Fetch(keepAlive, base+"/work"); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // admin connections are not counted
		if _, err := testkit.Fetch(fresh, admin+"/healthz"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testkit.Fetch(fresh, admin+"/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st worker.Stats
	if err := json.Unmarshal([]byte(got.Body), &st); err != nil {
		t.Fatalf("decode %q: %v", got.Body, err)
	}
	if st.Connections != 4 || st.Requests != 6 || st.Index != 2 || st.PID == 0 {
		t.Errorf("stats = %+v, want connections 4, requests 6, index 2 and a pid", st)
	}
}

func TestServeDrainsInFlight(t *testing.T) {
	w, err := worker.New(worker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx, ln, nil) }()

	type result struct {
		resp testkit.Response
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		r, err := testkit.Fetch(http.DefaultClient, "http://"+ln.Addr().String()+"/work?ms=300")
		resc <- result{r, err}
	}()
	testkit.WaitFor(t, "the request to be in service", func() bool { return w.Stats().Active == 1 })
	cancel()
	if res := <-resc; res.err != nil || res.resp.Status != 200 {
		t.Errorf("in-flight request = %+v, %v; want 200", res.resp, res.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("listener still accepts after Serve returned")
	}
}

// discard is a ResponseWriter that keeps nothing, so the benchmark measures
// the handler alone.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func BenchmarkHandler(b *testing.B) {
	w, err := worker.New(worker.Config{Concurrency: 4})
	if err != nil {
		b.Fatal(err)
	}
	h := w.Handler()
	req := httptest.NewRequest(http.MethodGet, "/work?us=0&lbc=1", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rw := &discard{h: make(http.Header)}
		for pb.Next() {
			h.ServeHTTP(rw, req)
		}
	})
	if got := w.Stats().Requests; got != uint64(b.N) {
		b.Fatalf("requests = %d, want %d", got, b.N)
	}
}

func TestSlowdownMultipliesService(t *testing.T) {
	took := func(slowdown float64) time.Duration {
		w, err := worker.New(worker.Config{Slowdown: slowdown}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(w.Handler())
		defer srv.Close()
		start := time.Now()
		resp, err := http.Get(srv.URL + "/work?ms=20")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return time.Since(start)
	}
	normal, slow := took(1), took(4)
	if slow < 2*normal {
		t.Errorf("slowdown 4 took %s, normal %s: want at least twice as long", slow, normal)
	}
	if _, err := worker.New(worker.Config{Slowdown: -1}.WithDefaults()); err == nil {
		t.Error("negative slowdown accepted")
	}
}

// TestInjectCostSpendsCPU: with InjectCost every request spends at least
// that much CPU time (the process's CPU clock, which counts the client and
// the server too, so only the lower bound is checked), in addition to a
// service time spent sleeping, and inside the request's service: the
// answer's Began to Done spans it.
func TestInjectCostSpendsCPU(t *testing.T) {
	const cost, n = 2 * time.Millisecond, 20
	_, base, _ := serve(t, worker.Config{InjectCost: cost}.WithDefaults())
	cpu := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	before := cpu()
	for range n {
		resp, err := http.Get(base + "/work?us=100")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !monoclock.Valid() {
			continue // no times in the answer
		}
		times, ok := workloads.ParseTimes(resp.Header.Get(workloads.TimesHeader))
		if !ok {
			t.Fatalf("no times in the answer: %q", resp.Header.Get(workloads.TimesHeader))
		}
		if took := time.Duration(times.Done - times.Began); took < cost+100*time.Microsecond {
			t.Errorf("service of a 100µs request with an injected cost of %s took %s", cost, took)
		}
	}
	if spent := cpu() - before; spent < n*cost {
		t.Errorf("%d requests with an injected cost of %s used %s of CPU, want at least %s", n, cost, spent, n*cost)
	}
}

// TestTimesStamped: a worker stamps each answer with when it received the
// request, began it and was done, and when it accepted the connection, on
// CLOCK_MONOTONIC: a request queued
// behind another is received at once but begun only when the first is
// done, and each stamp is within the client's own view of the exchange.
func TestTimesStamped(t *testing.T) {
	w, base, _ := serve(t, worker.Config{Concurrency: 1})
	stamps := make(chan workloads.Times, 2)
	send := func(path string) {
		before := monoclock.Now()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Error(err)
			stamps <- workloads.Times{}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		after := monoclock.Now()
		st, ok := workloads.ParseTimes(resp.Header.Get(workloads.TimesHeader))
		if !ok || st.Received < before || st.Done > after {
			t.Errorf("GET %s: %s %q (parsed %v), want three stamps within [%d, %d]", path, workloads.TimesHeader, resp.Header.Get(workloads.TimesHeader), ok, before, after)
		}
		// Each request has a connection of its own (the other is busy
		// with the first): accepted after the client began, before the
		// request was received.
		if st.Accepted < before || st.Accepted > st.Received {
			t.Errorf("GET %s: connection accepted at %d, want within [%d, %d]", path, st.Accepted, before, st.Received)
		}
		if st.Clock == "" || st.Clock != monoclock.Host() {
			t.Errorf("GET %s: stamps name the clock %q, this host's is %q", path, st.Clock, monoclock.Host())
		}
		stamps <- st
	}
	go send("/work?ms=200")
	testkit.WaitFor(t, "the first request to be in service", func() bool { return w.Stats().Active == 1 })
	go send("/work?ms=10")
	a, b := <-stamps, <-stamps // the first to finish is the first sent
	if !(b.Received < a.Done && b.Began >= a.Done) {
		t.Errorf("queued request: received %d, began %d; the first was done at %d: want received before, begun after", b.Received, b.Began, a.Done)
	}
	if d := time.Duration(a.Done - a.Began); d < 200*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("the first request's service took %s by its stamps, want about 200ms", d)
	}
}
