package worker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/busywork"
)

// Modes a Worker spends its service time in.
const (
	// ModeSleep sleeps for the service time: the request holds a slot but
	// no CPU.
	ModeSleep = "sleep"
	// ModeSpin burns a CPU in a busy loop for the service time.
	ModeSpin = "spin"
)

// Accept strategies: how a worker waits for connections on its main
// listener. They differ only when several workers share one listening
// socket; see the package documentation for what each does.
const (
	// AcceptNetpoll is Go's default: http.Server accepting through the
	// runtime's netpoller (epoll, edge-triggered, without EPOLLEXCLUSIVE).
	AcceptNetpoll = "netpoll"
	// AcceptBlocking accepts in a blocking accept4(2) on the raw socket, on
	// a thread of its own; the kernel hands each connection to the waiter
	// that has waited longest.
	AcceptBlocking = "blocking"
	// AcceptEpollExclusive waits in epoll_wait(2) on an epoll instance of
	// its own holding the socket with EPOLLEXCLUSIVE, so the kernel wakes
	// one waiting worker per connection, not all of them.
	AcceptEpollExclusive = "epoll-exclusive"
	// AcceptPoll is a gunicorn sync worker's order: accept4(2) without
	// waiting first, and only when nothing is queued a poll(2) on the
	// socket, registered afresh each time (gunicorn uses select(2)), so
	// every waiting worker is woken and a worker just finished takes a
	// queued connection before it waits.
	AcceptPoll = "poll"
)

// AcceptStrategies lists the accept strategies, default first.
func AcceptStrategies() []string {
	return []string{AcceptNetpoll, AcceptBlocking, AcceptEpollExclusive, AcceptPoll}
}

// When a worker takes new connections (Config.AcceptWhen).
const (
	// AcceptAlways accepts whenever a connection is queued, busy or not:
	// Go's default, where the accept loop never waits for the handlers.
	AcceptAlways = "always"
	// AcceptIdle accepts only while the worker has a free slot, as an
	// event-loop worker (nginx, Node, uvicorn, a gunicorn sync worker)
	// does: while its slots are taken a new connection waits in the
	// kernel's queue for another worker. Connections already open still
	// bring requests, which queue in the worker.
	AcceptIdle = "idle"
)

// AcceptWhens lists the values of Config.AcceptWhen, default first.
func AcceptWhens() []string { return []string{AcceptAlways, AcceptIdle} }

// Defaults applied by Config.WithDefaults.
const (
	// DefaultConcurrency is the default number of requests served at a
	// time: a single-task worker.
	DefaultConcurrency = 1
	// DefaultMode is the default Mode.
	DefaultMode = ModeSleep
	// DefaultAccept is the default Accept strategy.
	DefaultAccept = AcceptNetpoll
	// DefaultAcceptWhen is the default AcceptWhen.
	DefaultAcceptWhen = AcceptAlways
)

// MaxService is the longest service time a request or Config.Service may
// ask for. It equals DrainTimeout, so a request in service when draining
// starts can always complete.
const MaxService = 30 * time.Second

// Config describes a Worker. The zero value is a single-task sleeping
// worker with index 0, no default service time, accepting through Go's
// netpoller with no limit on open connections.
type Config struct {
	// Index identifies the worker in X-Worker headers and Stats; >= 0.
	Index int `yaml:"index" json:"index"`
	// Concurrency is the number of requests served at a time; further
	// requests wait in a queue. 0 means DefaultConcurrency.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Mode is ModeSleep or ModeSpin. Empty means DefaultMode.
	Mode string `yaml:"mode" json:"mode"`
	// Service is the service time of a request whose query gives none,
	// at most MaxService. 0 means requests complete at once.
	Service time.Duration `yaml:"service" json:"service"`
	// Slowdown multiplies every service time, to make one worker slower
	// than its peers; 0 means 1 (normal speed).
	Slowdown float64 `yaml:"slowdown" json:"slowdown"`
	// InjectCost is CPU time every request spends in busy work
	// (busywork.Spend) after its service time, holding its slot: a known
	// extra cost per request, to check that a gate judging the workers'
	// CPU per request fails it ("lbbench run --baseline REF --inject-cost
	// workers=D"). 0 means none; at most busywork.Max.
	InjectCost time.Duration `yaml:"inject_cost" json:"inject_cost,omitempty"`
	// Accept is the accept strategy of the main listener, one of
	// AcceptStrategies(); empty means DefaultAccept. It applies to
	// listeners made by ListenFD.
	Accept string `yaml:"accept" json:"accept"`
	// MaxConns is the most main-listener connections the worker holds open
	// at a time: at the limit it stops accepting until one closes, and new
	// connections wait in the kernel's queue for whichever worker accepts
	// first. 0 means no limit. With MaxConns equal to Concurrency the
	// worker waits for a connection only when it is idle, like a
	// pre-forked synchronous worker.
	MaxConns int `yaml:"max_conns" json:"max_conns"`
	// HeaderTimeout is how long a client may take to send a request's
	// headers, and IdleTimeout how long a keep-alive connection may wait
	// for its next request, before the worker closes it: a slow or idle
	// client cannot hold a connection for ever. 0 means
	// DefaultHeaderTimeout and DefaultIdleTimeout.
	HeaderTimeout time.Duration `yaml:"header_timeout" json:"header_timeout,omitempty"`
	IdleTimeout   time.Duration `yaml:"idle_timeout" json:"idle_timeout,omitempty"`
	// AcceptWhen is AcceptAlways or AcceptIdle; empty means
	// DefaultAcceptWhen (WithDefaults leaves it empty, so that configs
	// written before it existed compare and print as they did). Under AcceptIdle the worker is busy while its
	// connections that are new (accepted, no request finished yet) or
	// carrying a request number Concurrency or more, and it does not call
	// accept(2) then, with any Accept strategy (see the package
	// documentation).
	AcceptWhen string `yaml:"accept_when" json:"accept_when"`
}

// Defaults of the connection timeouts: far above what any request of a
// benchmark on loopback takes, short enough that a stalled client goes.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	// MaxConnTimeout bounds both.
	MaxConnTimeout = time.Hour
)

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.Accept == "" {
		c.Accept = DefaultAccept
	}
	return c
}

// Validate reports the first invalid field of c. It does not apply
// defaults: call it on the result of WithDefaults.
func (c Config) Validate() error {
	switch {
	case c.Index < 0:
		return fmt.Errorf("worker: index must be >= 0, got %d", c.Index)
	case c.Concurrency < 1:
		return fmt.Errorf("worker: concurrency must be >= 1, got %d", c.Concurrency)
	case c.Mode != ModeSleep && c.Mode != ModeSpin:
		return fmt.Errorf("worker: mode must be %q or %q, got %q", ModeSleep, ModeSpin, c.Mode)
	case c.Slowdown < 0 || c.Slowdown > 100:
		return fmt.Errorf("worker: slowdown must be in (0, 100], got %g", c.Slowdown)
	case c.InjectCost < 0 || c.InjectCost > busywork.Max:
		return fmt.Errorf("worker: inject_cost must be between 0 (none) and %v, got %v", busywork.Max, c.InjectCost)
	case c.Service < 0 || c.Service > MaxService:
		return fmt.Errorf("worker: service must be between 0 and %v, got %v", MaxService, c.Service)
	case !slices.Contains(AcceptStrategies(), c.Accept):
		return fmt.Errorf("worker: accept must be one of %s, got %q", strings.Join(AcceptStrategies(), ", "), c.Accept)
	case c.AcceptWhen != "" && !slices.Contains(AcceptWhens(), c.AcceptWhen):
		return fmt.Errorf("worker: accept_when must be one of %s, got %q", strings.Join(AcceptWhens(), ", "), c.AcceptWhen)
	case c.MaxConns < 0:
		return fmt.Errorf("worker: max_conns must be >= 0 (0: no limit), got %d", c.MaxConns)
	case c.HeaderTimeout < 0 || c.HeaderTimeout > MaxConnTimeout:
		return fmt.Errorf("worker: header_timeout must be between 0 (default %v) and %v, got %v", DefaultHeaderTimeout, MaxConnTimeout, c.HeaderTimeout)
	case c.IdleTimeout < 0 || c.IdleTimeout > MaxConnTimeout:
		return fmt.Errorf("worker: idle_timeout must be between 0 (default %v) and %v, got %v", DefaultIdleTimeout, MaxConnTimeout, c.IdleTimeout)
	}
	return nil
}

// timeouts returns the header-read and idle timeouts, defaults applied
// (they stay 0 in the Config, so that an exec target, which sets its own,
// can be told apart from one given timeouts).
func (c Config) timeouts() (header, idle time.Duration) {
	header, idle = c.HeaderTimeout, c.IdleTimeout
	if header == 0 {
		header = DefaultHeaderTimeout
	}
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	return header, idle
}
