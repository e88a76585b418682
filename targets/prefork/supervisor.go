package prefork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/targets/worker"
)

// EnvWorkerConfig names the environment variable that carries a child's
// worker.Config, as JSON, from the Supervisor to WorkerMain.
const EnvWorkerConfig = "LBBENCH_WORKER_CONFIG"

// DefaultStartTimeout bounds how long Start waits for the workers to become
// healthy when its context has no deadline.
const DefaultStartTimeout = 10 * time.Second

const (
	healthRetry  = 20 * time.Millisecond // between health checks during Start
	adminTimeout = 5 * time.Second       // for a request to Handler
)

// StatsReport is the JSON body of /stats on the Handler.
type StatsReport struct {
	// Workers holds each worker's stats, in index order.
	Workers []worker.Stats `json:"workers"`
}

// Phases of a Supervisor.
const (
	phaseStarting int32 = iota
	phaseRunning
	phaseStopping
)

// Supervisor runs a set of worker processes. Its methods are safe for
// concurrent use.
type Supervisor struct {
	stderr io.Writer
	procs  []*proc // fixed once Start returns
	client *http.Client

	// phase decides whether a child that exits is reported: only while
	// running, since Start returns the error itself and Stop expects it.
	phase    atomic.Int32
	exited   chan struct{}
	exitOnce sync.Once
	stopOnce sync.Once
	stopErr  error
	wg       sync.WaitGroup // one reaper per child
}

// proc is one worker process.
type proc struct {
	index               int
	pid                 int
	mainAddr, adminAddr string
	cmd                 *exec.Cmd
	done                chan struct{} // closed once the child is reaped and cmd.ProcessState is set
}

// exitErr describes how p exited, or returns nil while it runs.
func (p *proc) exitErr() error {
	select {
	case <-p.done:
		return fmt.Errorf("prefork: worker %d (pid %d) exited: %v", p.index, p.pid, p.cmd.ProcessState)
	default:
		return nil
	}
}

// Start makes the listening sockets, starts cfg.Workers children and waits
// until every one answers its admin /healthz. ctx bounds the start only
// (DefaultStartTimeout if it has no deadline); the children run until Stop.
// On error Start kills the children it started and closes every socket.
func Start(ctx context.Context, cfg Config) (*Supervisor, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	socks, err := listen(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Supervisor{
		stderr: cfg.Stderr,
		client: &http.Client{Transport: &http.Transport{}},
		exited: make(chan struct{}),
	}
	if _, ok := s.stderr.(*os.File); !ok {
		// Children's output copiers and reapers write concurrently.
		s.stderr = &lockedWriter{w: s.stderr}
	}
	for i, sk := range socks {
		if err := s.spawn(cfg, i, sk); err != nil {
			closeSockets(socks[i+1:])
			s.abort()
			return nil, err
		}
	}
	if err := s.waitHealthy(ctx); err != nil {
		s.abort()
		return nil, err
	}
	s.phase.Store(phaseRunning)
	// A child that exited after its health check but before the store
	// above was not reported by its reaper; the reaper closes done before
	// it loads phase, so one of the two sees the other.
	for _, p := range s.procs {
		if err := p.exitErr(); err != nil {
			s.abort()
			return nil, err
		}
	}
	return s, nil
}

// spawn starts worker i on sk and closes the supervisor's copies of sk: a
// reuseport socket it kept would stay in the group and get connections that
// nobody accepts.
func (s *Supervisor) spawn(cfg Config, i int, sk sockets) error {
	defer closeSockets([]sockets{sk})
	wcfg := cfg.Worker
	wcfg.Index = i
	if f, ok := cfg.Slowdown[i]; ok {
		wcfg.Slowdown = f
	}
	js, _ := json.Marshal(wcfg) // cannot fail: plain fields
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), EnvWorkerConfig+"="+string(js))
	cmd.ExtraFiles = []*os.File{sk.main, sk.admin} // fds 3 and 4
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("prefork: start worker %d: %w", i, err)
	}
	p := &proc{
		index:     i,
		pid:       cmd.Process.Pid,
		mainAddr:  sk.mainAddr,
		adminAddr: sk.adminAddr,
		cmd:       cmd,
		done:      make(chan struct{}),
	}
	s.procs = append(s.procs, p)
	s.wg.Go(func() { s.reap(p) })
	return nil
}

// reap waits for p to exit and reports a failure while the supervisor is
// running. A clean exit is not a failure: a worker exits 0 only when asked
// to stop, for example by a Ctrl-C or a SIGTERM that reached the whole
// process group before Stop was called.
func (s *Supervisor) reap(p *proc) {
	p.cmd.Wait() // the exit status is in p.cmd.ProcessState
	close(p.done)
	if s.phase.Load() != phaseRunning || p.cmd.ProcessState.Success() {
		return
	}
	fmt.Fprintln(s.stderr, p.exitErr())
	s.exitOnce.Do(func() { close(s.exited) })
}

// waitHealthy waits until every child answers /healthz, one after the
// other. Connections to a child that has not started serving yet wait in
// its admin socket's backlog.
func (s *Supervisor) waitHealthy(ctx context.Context) error {
	for _, p := range s.procs {
		for {
			err := s.get(ctx, p, "/healthz", nil)
			if err == nil {
				break
			}
			select {
			case <-p.done:
				return fmt.Errorf("prefork: worker %d (pid %d) exited before it was healthy: %v", p.index, p.pid, p.cmd.ProcessState)
			case <-ctx.Done():
				return fmt.Errorf("prefork: worker %d (pid %d) not healthy: %w", p.index, p.pid, err)
			case <-time.After(healthRetry):
			}
		}
	}
	return nil
}

// abort kills every child and waits for the reapers. It is Start's
// teardown.
func (s *Supervisor) abort() {
	s.phase.Store(phaseStopping)
	for _, p := range s.procs {
		p.cmd.Process.Kill()
	}
	s.wg.Wait()
	s.client.CloseIdleConnections()
}

// Endpoints returns each worker's main address ("host:port"), in index
// order. In ReusePort mode they are all the same.
func (s *Supervisor) Endpoints() []string {
	out := make([]string, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.mainAddr
	}
	return out
}

// AdminAddrs returns each worker's private admin address, in index order.
func (s *Supervisor) AdminAddrs() []string {
	out := make([]string, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.adminAddr
	}
	return out
}

// Exited returns a channel that is closed when a worker fails while the
// supervisor runs: it exits with a non-zero status or is killed by a
// signal. The failure is also written to Config.Stderr. A worker that exits
// with status 0 was asked to stop (SIGTERM or SIGINT) and does not close
// the channel; Healthy and Stats report every exited worker.
func (s *Supervisor) Exited() <-chan struct{} { return s.exited }

// Healthy returns nil if every worker answers its admin /healthz, and
// otherwise an error naming each worker that does not.
func (s *Supervisor) Healthy(ctx context.Context) error {
	var errs []error
	for _, p := range s.procs {
		errs = append(errs, s.ask(ctx, p, "/healthz", nil))
	}
	return errors.Join(errs...)
}

// Stats fetches each worker's stats from its admin /stats, in index order.
// A worker that does not answer keeps only its Index in the result, and the
// error names it (and how it exited, if it did).
func (s *Supervisor) Stats(ctx context.Context) ([]worker.Stats, error) {
	out := make([]worker.Stats, len(s.procs))
	var errs []error
	for i, p := range s.procs {
		out[i].Index = i
		errs = append(errs, s.ask(ctx, p, "/stats", &out[i]))
	}
	return out, errors.Join(errs...)
}

// ask is get with errors that name the worker.
func (s *Supervisor) ask(ctx context.Context, p *proc, path string, v any) error {
	if err := p.exitErr(); err != nil {
		return err
	}
	err := s.get(ctx, p, path, v)
	if err == nil {
		return nil
	}
	if xerr := p.exitErr(); xerr != nil {
		return xerr
	}
	return fmt.Errorf("prefork: worker %d (pid %d): %w", p.index, p.pid, err)
}

// get fetches path from p's admin listener and, unless v is nil, decodes
// the JSON body into v.
func (s *Supervisor) get(ctx context.Context, p *proc, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.adminAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Handler returns the supervisor's aggregate admin handler: /healthz
// answers 200 when every worker is healthy and 503 with the reasons
// otherwise; /stats answers a StatsReport as JSON, or 503 if a worker does
// not answer.
func (s *Supervisor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
		defer cancel()
		if err := s.Healthy(ctx); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
		defer cancel()
		st, err := s.Stats(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(StatsReport{Workers: st})
	})
	return mux
}

// Stop sends SIGTERM to every child, so that it drains its in-flight
// requests and exits, and waits for them. Children still running when ctx
// is done get SIGKILL, and the error names them. Stop waits for all of the
// supervisor's goroutines. It is idempotent: later calls wait for the first
// and return its result.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Supervisor) stop(ctx context.Context) error {
	s.phase.Store(phaseStopping)
	for _, p := range s.procs {
		p.cmd.Process.Signal(syscall.SIGTERM) // os.ErrProcessDone if it already exited
	}
	var errs []error
	for _, p := range s.procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			if p.cmd.Process.Kill() == nil {
				errs = append(errs, fmt.Errorf("prefork: stop: worker %d (pid %d) killed: %w", p.index, p.pid, context.Cause(ctx)))
			}
			<-p.done
		}
	}
	s.wg.Wait()
	s.client.CloseIdleConnections()
	return errors.Join(errs...)
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
