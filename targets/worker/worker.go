package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/internal/httpdrain"
	"github.com/lbbench/lbbench/internal/monoclock"
	"github.com/lbbench/lbbench/internal/quietconn"
	"github.com/lbbench/lbbench/internal/sleep"
	"github.com/lbbench/lbbench/workloads"
)

// DrainTimeout bounds how long Serve waits for in-flight requests once its
// context is done.
const DrainTimeout = 30 * time.Second

// Stats is a snapshot of a Worker's counters.
type Stats struct {
	// Index is the worker's Config.Index.
	Index int `json:"index"`
	// Requests counts work requests completed.
	Requests uint64 `json:"requests"`
	// Connections counts connections accepted on the main listener given
	// to Serve (not the admin listener).
	Connections uint64 `json:"connections"`
	// Active is the number of requests in service now.
	Active int64 `json:"active"`
	// Queued is the number of requests waiting for a slot now.
	Queued int64 `json:"queued"`
	// MaxQueue is the largest Queued ever seen.
	MaxQueue int64 `json:"max_queue"`
	// PID is the process the worker runs in.
	PID int `json:"pid"`
	// CPU is the user plus system CPU time the worker's process and its
	// descendants have used, filled by its supervisor from /proc (zero
	// when the worker answers for itself).
	CPU time.Duration `json:"cpu_ns,omitempty"`
}

// Worker is an HTTP worker with a concurrency limit and a configurable
// service time. Its methods are safe for concurrent use.
type Worker struct {
	cfg     Config
	pid     int
	sem     chan struct{} // a slot is held by a value in the channel
	xWorker []string      // shared X-Worker header value; len == cap, so never appended to in place

	requests    atomic.Uint64
	connections atomic.Uint64
	active      atomic.Int64
	queued      atomic.Int64
	maxQueue    atomic.Int64
}

var (
	okBody    = []byte("ok\n")
	textPlain = []string{"text/plain; charset=utf-8"}
	appJSON   = []string{"application/json"}
)

// New returns a Worker for cfg after applying defaults and validating it.
func New(cfg Config) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{
		cfg:     cfg,
		pid:     os.Getpid(),
		sem:     make(chan struct{}, cfg.Concurrency),
		xWorker: []string{strconv.Itoa(cfg.Index)},
	}, nil
}

// Stats returns a snapshot of w's counters. The fields are read one by one,
// so they need not be mutually consistent while requests are in flight.
func (w *Worker) Stats() Stats {
	return Stats{
		Index:       w.cfg.Index,
		Requests:    w.requests.Load(),
		Connections: w.connections.Load(),
		Active:      w.active.Load(),
		Queued:      w.queued.Load(),
		MaxQueue:    w.maxQueue.Load(),
		PID:         w.pid,
	}
}

// Handler returns the handler serving /healthz, /stats and, on every other
// path, the work.
func (w *Worker) Handler() http.Handler { return http.HandlerFunc(w.serveHTTP) }

func (w *Worker) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	h := rw.Header()
	h["X-Worker"] = w.xWorker
	switch r.URL.Path {
	case "/healthz":
		h["Content-Type"] = textPlain
		rw.Write(okBody)
	case "/stats":
		h["Content-Type"] = appJSON
		json.NewEncoder(rw).Encode(w.Stats())
	default:
		w.work(rw, r)
	}
}

func (w *Worker) work(rw http.ResponseWriter, r *http.Request) {
	received := monoclock.Now()
	d, err := parseService(r.URL.RawQuery, w.cfg.Service)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	if w.cfg.Slowdown > 0 && w.cfg.Slowdown != 1 {
		d = time.Duration(float64(d) * w.cfg.Slowdown)
	}
	// Take a free slot at once if there is one; only a request that has to
	// wait counts as queued.
	select {
	case w.sem <- struct{}{}:
	default:
		raise(&w.maxQueue, w.queued.Add(1))
		select {
		case w.sem <- struct{}{}:
			w.queued.Add(-1)
		case <-r.Context().Done():
			// The client left while waiting: nobody will read a response.
			w.queued.Add(-1)
			return
		}
	}
	w.active.Add(1)
	began := monoclock.Now()
	w.spend(d, queryMode(r.URL.RawQuery, w.cfg.Mode))
	if w.cfg.InjectCost > 0 {
		busywork.Spend(w.cfg.InjectCost)
	}
	done := monoclock.Now()
	w.active.Add(-1)
	<-w.sem
	if monoclock.Valid() {
		accepted, _ := r.Context().Value(acceptedKey{}).(int64)
		rw.Header()[workloads.TimesHeader] = []string{workloads.FormatTimes(workloads.Times{Received: received, Began: began, Done: done, Accepted: accepted, Clock: monoclock.Host()})}
	}
	// Count before responding, so a client that reads /stats after its
	// response sees its request counted.
	w.requests.Add(1)
	rw.Header()["Content-Type"] = textPlain
	rw.Write(okBody)
}

// acceptedKey is the context key of when the worker accepted a
// connection, on CLOCK_MONOTONIC.
type acceptedKey struct{}

// raise sets m to v if v is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

// spend takes d in the given mode (ModeSleep or ModeSpin).
func (w *Worker) spend(d time.Duration, mode string) {
	if d <= 0 {
		return
	}
	if mode == ModeSleep {
		// Not time.Sleep: it wakes up to a millisecond late, which would
		// inflate every short service time.
		sleep.For(d)
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// Serve serves w on ln and, if admin is not nil, on admin too, until ctx is
// done. It then stops accepting, closes both listeners, waits up to
// DrainTimeout for in-flight requests to complete and returns nil, or an
// error if a listener failed or the drain timed out. Connections are counted
// in Stats only on ln. With Config.MaxConns set, Serve accepts on ln only
// while fewer than MaxConns of its connections are open; with
// Config.AcceptWhen AcceptIdle, only while it has a free slot.
func (w *Worker) Serve(ctx context.Context, ln net.Listener, admin net.Listener) error {
	if ln == nil {
		return errors.New("worker: serve: nil listener")
	}
	var gate *idleGate
	if w.cfg.AcceptWhen == AcceptIdle {
		gate = newIdleGate(w.cfg.Concurrency)
		il, err := newIdleListener(ln, gate)
		if err != nil {
			ln.Close()
			return err
		}
		ln = il
	}
	// Reads and writes as raw system calls (see package quietconn). After
	// the idle gate, which looks at the listener's own type.
	ln = quietconn.Listener{Listener: ln}
	if w.cfg.MaxConns > 0 {
		ln = newLimitListener(ln, w.cfg.MaxConns)
	}
	header, idle := w.cfg.timeouts()
	servers := []*http.Server{httpdrain.CloseFreshOnShutdown(&http.Server{
		Handler:           w.Handler(),
		ReadHeaderTimeout: header,
		IdleTimeout:       idle,
		// When this worker took the connection: its requests' answers say
		// so (workloads.Times.Accepted), and how long a request waited
		// for it follows.
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, acceptedKey{}, monoclock.Now())
		},
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				w.connections.Add(1)
			}
			if gate != nil {
				gate.connState(c, s)
			}
		},
	})}
	listeners := []net.Listener{ln}
	if admin != nil {
		servers = append(servers, httpdrain.CloseFreshOnShutdown(&http.Server{Handler: w.Handler(), ReadHeaderTimeout: header, IdleTimeout: idle}))
		listeners = append(listeners, admin)
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}

	var errs []error
	pending := len(servers)
	select {
	case <-ctx.Done():
	case err := <-errc:
		pending--
		errs = append(errs, fmt.Errorf("worker: serve: %w", err))
	}
	// The main server drains first; the admin server keeps answering
	// /stats meanwhile.
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(drainCtx); err != nil {
			errs = append(errs, fmt.Errorf("worker: drain: %w", err))
			srv.Close()
		}
	}
	for ; pending > 0; pending-- {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("worker: serve: %w", err))
		}
	}
	return errors.Join(errs...)
}
