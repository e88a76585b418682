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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/internal/syncio"
)

// EnvWorkerConfig names the environment variable that carries a child's
// worker.Config, as JSON, from the Supervisor to WorkerMain.
const EnvWorkerConfig = "LBBENCH_WORKER_CONFIG"

// Environment variables an Exec instance gets, besides the placeholders in
// its command.
const (
	// EnvIndex holds the instance's worker index.
	EnvIndex = "LBBENCH_WORKER_INDEX"
	// EnvWorkers holds Config.Workers.
	EnvWorkers = "LBBENCH_WORKERS"
)

// DefaultStartTimeout bounds how long Start waits for the workers to become
// healthy when its context has no deadline.
const DefaultStartTimeout = 10 * time.Second

const (
	restartMin     = 100 * time.Millisecond
	restartMax     = 5 * time.Second
	restartHealthy = 10 * time.Second // a worker up this long has its back-off reset
)

// Phases of a Supervisor.
const (
	phaseStarting int32 = iota
	phaseRunning
	phaseStopping
)

// Supervisor runs a set of worker processes: it allocates their endpoints,
// starts them, checks their health, reports and optionally restarts a
// worker that fails, and drains them on Stop. Its methods are safe for
// concurrent use.
type Supervisor struct {
	cfg    Config
	stderr io.Writer
	lay    *layout
	slots  []*slot // fixed once Start returns
	client *http.Client

	// mu orders spawning against the switch to phaseStopping, so that no
	// restart starts a process Stop would miss.
	mu sync.Mutex
	// phase decides whether a child that exits is reported: only while
	// running, since Start returns the error itself and Stop expects it.
	phase    atomic.Int32
	exited   chan struct{}
	exitOnce sync.Once
	stopc    chan struct{} // closed when Stop begins
	stopOnce sync.Once
	stopErr  error
	wg       sync.WaitGroup // reapers, restarts and the health checker
}

// slot is one child process position: worker i, whichever process
// currently runs it.
type slot struct {
	index   int
	socks   slotSockets
	client  *http.Client // for health and stats requests
	health  string       // URL of the health check
	stats   string       // URL of the worker's /stats; empty for an Exec
	cur     atomic.Pointer[proc]
	backoff time.Duration // next restart delay; used by the reaper only

	mu          sync.Mutex // guards the fields below
	restarts    int
	lastExit    string
	healthErr   string
	healthKnown bool // a health check has run since the process started
}

// proc is one process of a slot.
type proc struct {
	pid     int
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed once the child is reaped and cmd.ProcessState is set
	// exitCtx is cancelled right after done is closed, to stop requests
	// to the process.
	exitCtx context.Context
	exit    context.CancelFunc
}

// exitErr describes how p of worker i exited, or returns nil while it runs.
func (p *proc) exitErr(i int) error {
	select {
	case <-p.done:
		return fmt.Errorf("prefork: worker %d (pid %d) exited: %v", i, p.pid, p.cmd.ProcessState)
	default:
		return nil
	}
}

// Start makes the listening sockets, starts the children and waits until
// every one is healthy: it answers its admin /healthz, or for an Exec the
// probe on its endpoint. ctx bounds the start only (DefaultStartTimeout if
// it has no deadline); the children run until Stop. On error Start kills
// the children it started and closes every socket.
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
	lay, err := listen(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Supervisor{
		cfg:    cfg,
		stderr: cfg.Stderr,
		lay:    lay,
		client: &http.Client{Transport: &http.Transport{}},
		exited: make(chan struct{}),
		stopc:  make(chan struct{}),
	}
	if _, ok := s.stderr.(*os.File); !ok {
		// Children's output copiers and reapers write concurrently.
		s.stderr = syncio.NewWriter(s.stderr)
	}
	for i, sk := range lay.slots {
		sl := &slot{index: i, socks: sk, client: s.client, backoff: restartMin}
		if cfg.Exec == nil {
			sl.health = "http://" + sk.adminAddr + "/healthz"
			sl.stats = "http://" + sk.adminAddr + "/stats"
		} else {
			host := sk.endpoint
			if sk.socket != "" {
				host = "unix"
				sl.client = unixClient(sk.socket)
			}
			sl.health = "http://" + host + cfg.Exec.Probe
		}
		if err := s.spawn(sl); err != nil {
			s.abort()
			return nil, err
		}
		s.slots = append(s.slots, sl)
	}
	if !cfg.Restart {
		// A reuseport socket kept here would stay in the group after its
		// worker died and get connections that nobody accepts; and a dead
		// worker's admin socket must refuse the health checks at once.
		lay.close()
	}
	if err := s.waitHealthy(ctx); err != nil {
		s.abort()
		return nil, err
	}
	s.mu.Lock()
	s.phase.Store(phaseRunning)
	s.mu.Unlock()
	// A child that exited after its health check but before the store
	// above was not reported by its reaper; the reaper closes done before
	// it loads phase, so one of the two sees the other.
	for _, sl := range s.slots {
		if err := sl.cur.Load().exitErr(sl.index); err != nil {
			s.abort()
			return nil, err
		}
	}
	if cfg.HealthInterval > 0 {
		s.wg.Go(s.checkHealth)
	}
	return s, nil
}

// command builds the process for sl.
func (s *Supervisor) command(sl *slot) *exec.Cmd {
	cfg := s.cfg
	var cmd *exec.Cmd
	if cfg.Exec == nil {
		wcfg := cfg.Worker
		wcfg.Index = sl.index
		if f, ok := cfg.Slowdown[sl.index]; ok {
			wcfg.Slowdown = f
		}
		js, _ := json.Marshal(wcfg) // cannot fail: plain fields
		cmd = exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Env = append(os.Environ(), EnvWorkerConfig+"="+string(js))
		cmd.ExtraFiles = []*os.File{sl.socks.main, sl.socks.admin} // fds 3 and 4
	} else {
		perInstance := 1
		if cfg.Listen == Shared {
			perInstance = cfg.Workers
		}
		argv := cfg.Exec.argv(instanceVars{
			host:    cfg.Host,
			port:    strconv.Itoa(sl.socks.port),
			socket:  sl.socks.socket,
			index:   strconv.Itoa(sl.index),
			workers: strconv.Itoa(perInstance),
		})
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Dir = cfg.Exec.Dir
		cmd.Env = append(os.Environ(), EnvIndex+"="+strconv.Itoa(sl.index), EnvWorkers+"="+strconv.Itoa(cfg.Workers))
		if sl.socks.main != nil {
			cmd.ExtraFiles = []*os.File{sl.socks.main} // fd 3
		}
	}
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Owns reports whether pid is the current process of one of the
// supervisor's slots: one it waits for itself.
func (s *Supervisor) Owns(pid int) bool {
	for _, sl := range s.slots {
		if p := sl.cur.Load(); p != nil && p.pid == pid {
			return true
		}
	}
	return false
}

// spawn starts a process for sl and its reaper.
func (s *Supervisor) spawn(sl *slot) error {
	if s.cfg.Exec != nil && sl.socks.main == nil && sl.socks.socket != "" {
		// A foreign server killed earlier left its socket file behind.
		if err := freeSocketPath(sl.socks.socket); err != nil {
			return err
		}
	}
	cmd := s.command(sl)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("prefork: start worker %d: %w", sl.index, err)
	}
	p := &proc{pid: cmd.Process.Pid, cmd: cmd, started: time.Now(), done: make(chan struct{})}
	p.exitCtx, p.exit = context.WithCancel(context.Background())
	sl.mu.Lock()
	sl.healthKnown, sl.healthErr = false, ""
	sl.mu.Unlock()
	sl.cur.Store(p)
	s.wg.Go(func() { s.reap(sl, p) })
	return nil
}

// reap waits for p to exit and reports a failure while the supervisor is
// running, then restarts the worker or closes Exited. A clean exit is not a
// failure: a worker exits 0 only when asked to stop, for example by a
// Ctrl-C or a SIGTERM that reached the whole process group before Stop was
// called.
func (s *Supervisor) reap(sl *slot, p *proc) {
	p.cmd.Wait() // the exit status is in p.cmd.ProcessState
	close(p.done)
	p.exit()
	sl.mu.Lock()
	sl.lastExit = p.cmd.ProcessState.String()
	sl.mu.Unlock()
	if s.phase.Load() != phaseRunning || p.cmd.ProcessState.Success() {
		return
	}
	if !s.cfg.Restart {
		fmt.Fprintln(s.stderr, p.exitErr(sl.index))
		s.exitOnce.Do(func() { close(s.exited) })
		return
	}
	// Back off while the worker keeps failing soon after it starts.
	if time.Since(p.started) > restartHealthy {
		sl.backoff = restartMin
	}
	delay := sl.backoff
	sl.backoff = min(2*sl.backoff, restartMax)
	fmt.Fprintf(s.stderr, "%v; restarting in %v\n", p.exitErr(sl.index), delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stopc:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase.Load() != phaseRunning {
		return
	}
	if err := s.spawn(sl); err != nil {
		fmt.Fprintf(s.stderr, "prefork: restart worker %d: %v\n", sl.index, err)
		s.exitOnce.Do(func() { close(s.exited) })
		return
	}
	sl.mu.Lock()
	sl.restarts++
	sl.mu.Unlock()
	fmt.Fprintf(s.stderr, "prefork: worker %d restarted (pid %d)\n", sl.index, sl.cur.Load().pid)
}

// abort kills every child and waits for the reapers. It is Start's
// teardown.
func (s *Supervisor) abort() {
	s.mu.Lock()
	s.phase.Store(phaseStopping)
	s.mu.Unlock()
	close(s.stopc)
	for _, sl := range s.slots {
		sl.cur.Load().cmd.Process.Kill()
	}
	s.wg.Wait()
	s.lay.close()
	s.lay.removeSockets()
	s.client.CloseIdleConnections()
}

// Endpoints returns each worker's main endpoint, in index order: "host:port"
// for TCP, or UnixPrefix followed by the socket's path. In ReusePort and
// Shared modes they are all the same.
func (s *Supervisor) Endpoints() []string { return append([]string(nil), s.lay.endpoints...) }

// AdminAddrs returns each worker's private admin address, in index order;
// empty strings for an Exec, which has none.
func (s *Supervisor) AdminAddrs() []string {
	out := make([]string, len(s.slots))
	for i, sl := range s.slots {
		out[i] = sl.socks.adminAddr
	}
	return out
}

// Exited returns a channel that is closed when a worker fails while the
// supervisor runs and is not restarted (Config.Restart is false, or the
// restart itself failed): it exits with a non-zero status or is killed by a
// signal. The failure is also written to Config.Stderr. A worker that exits
// with status 0 was asked to stop (SIGTERM or SIGINT) and does not close
// the channel; Healthy, Stats and Status report every exited worker.
func (s *Supervisor) Exited() <-chan struct{} { return s.exited }

// Stop sends SIGTERM to every child, so that it drains its in-flight
// requests and exits, and waits for them. Children still running when ctx
// is done get SIGKILL, and the error names them. Stop then closes the
// sockets the supervisor kept, removes the Unix socket files it made and
// waits for all of its goroutines. It is idempotent: later calls wait for
// the first and return its result.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Supervisor) stop(ctx context.Context) error {
	s.mu.Lock()
	s.phase.Store(phaseStopping)
	s.mu.Unlock()
	close(s.stopc)
	// No spawn can happen from here on: every slot's process is final.
	for _, sl := range s.slots {
		pr := sl.cur.Load().cmd.Process
		pr.Signal(syscall.SIGTERM) // os.ErrProcessDone if it already exited
		pr.Signal(syscall.SIGCONT) // a stopped child handles it only once continued
	}
	var errs []error
	for _, sl := range s.slots {
		p := sl.cur.Load()
		select {
		case <-p.done:
		case <-ctx.Done():
			if p.cmd.Process.Kill() == nil {
				errs = append(errs, fmt.Errorf("prefork: stop: worker %d (pid %d) killed: %w", sl.index, p.pid, context.Cause(ctx)))
			}
			<-p.done
		}
	}
	s.wg.Wait()
	s.lay.close()
	s.lay.removeSockets()
	s.client.CloseIdleConnections()
	for _, sl := range s.slots {
		sl.client.CloseIdleConnections()
	}
	return errors.Join(errs...)
}
