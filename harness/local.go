package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
)

// Defaults of the local driver.
const (
	DefaultReadyTimeout = 15 * time.Second
	DefaultStopTimeout  = 10 * time.Second
)

// LocalDriver starts a plan's processes as children of this process on the
// loopback interface. Each child runs in its own process group with
// Pdeathsig set, so even if lbbench is killed outright its children die with
// it; Down signals the whole group, so grandchildren (workers started by
// "lbbench serve") go too.
type LocalDriver struct {
	exe    string
	logDir string
	pin    *Pinning // nil: no pinning

	mu   sync.Mutex
	used map[int]bool // ports handed out, so one plan never gets a port twice
}

var _ Driver = (*LocalDriver)(nil)

// NewLocalDriver returns a driver that runs the lbbench binary at exe and
// writes each process's output under logDir.
func NewLocalDriver(exe, logDir string, opts ...LocalOption) (*LocalDriver, error) {
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("harness: lbbench binary: %w", err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: log directory: %w", err)
	}
	d := &LocalDriver{exe: exe, logDir: logDir, used: map[int]bool{}}
	for _, o := range opts {
		o(d)
	}
	if d.pin != nil {
		// The generator runs in this process: its threads go to the
		// generator's CPUs, the targets' processes to the others.
		if err := d.pin.PinSelf(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// LocalOption configures a LocalDriver.
type LocalOption func(*LocalDriver)

// WithPinning pins this process (the generator) and every process the
// driver starts (the targets) to p's disjoint CPU sets.
func WithPinning(p *Pinning) LocalOption { return func(d *LocalDriver) { d.pin = p } }

// Pinning describes the CPU placement, for the results' environment.
func (d *LocalDriver) Pinning() string { return d.pin.String() }

// Name implements Driver.
func (d *LocalDriver) Name() string { return "local" }

// Host implements topologies.Allocator.
func (d *LocalDriver) Host() string { return "127.0.0.1" }

// Ports implements topologies.Allocator: it returns the first of n
// consecutive ports that can be bound now. Ports come from below the
// kernel's ephemeral range so that they never collide with the local ports
// of the generator's own connections.
func (d *LocalDriver) Ports(n int) (int, error) {
	lo, hi := 10000, ephemeralLow()-n
	if n < 1 || hi <= lo {
		return 0, fmt.Errorf("harness: cannot reserve %d consecutive ports below the ephemeral range (%d); at most %d fit", n, ephemeralLow(), ephemeralLow()-lo-1)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for range 200 {
		base := lo + rand.IntN(hi-lo)
		if d.free(base, n) {
			for p := base; p < base+n; p++ {
				d.used[p] = true
			}
			return base, nil
		}
	}
	return 0, fmt.Errorf("harness: no %d consecutive free ports in [%d, %d)", n, lo, hi+n)
}

func (d *LocalDriver) free(base, n int) bool {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		if d.used[p] {
			return false
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(d.Host(), strconv.Itoa(p)))
		if err != nil {
			return false
		}
		lns = append(lns, ln)
	}
	return true
}

func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > 11000 {
				return lo
			}
		}
	}
	return 32768
}

// Up implements Driver: it starts p's processes in order, waiting for each
// to be ready before starting the next. On any failure it stops what it
// started and returns an error that includes the failed process's output.
func (d *LocalDriver) Up(ctx context.Context, p topologies.Plan) (Deployment, error) {
	dep := &localDeployment{plan: p}
	for _, spec := range p.Processes {
		proc, err := d.start(ctx, p.ID, spec)
		if err != nil {
			dep.down(ctx)
			return nil, err
		}
		dep.procs = append(dep.procs, proc)
		if err := proc.waitReady(ctx, DefaultReadyTimeout); err != nil {
			dep.down(ctx)
			return nil, fmt.Errorf("harness: %s: %s did not become ready: %w%s", p.ID, spec.Role, err, proc.logTail())
		}
	}
	return dep, nil
}

func (d *LocalDriver) start(ctx context.Context, id string, spec topologies.Process) (*localProc, error) {
	name := id + "-" + spec.Role
	dir, err := safepath.Join(d.logDir, name)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("harness: %s: working directory: %w", id, err)
	}
	subst := func(s string) string { return strings.ReplaceAll(s, topologies.DirPlaceholder, dir) }
	for _, f := range spec.Files {
		path, err := safepath.Join(dir, f.Name)
		if err != nil {
			return nil, fmt.Errorf("harness: %s: %w", id, err)
		}
		if err := os.WriteFile(path, []byte(subst(f.Content)), 0o644); err != nil {
			return nil, fmt.Errorf("harness: %s: %w", id, err)
		}
	}
	args := spec.Args()
	for i, a := range args {
		args[i] = subst(a)
	}
	exe := d.exe
	if spec.Exe != "" {
		exe = spec.Exe
	}
	spec.Stats = subst(spec.Stats)
	if ca := spec.CheckArgs(); len(ca) > 0 {
		if err := check(ctx, exe, dir, ca, subst); err != nil {
			return nil, fmt.Errorf("harness: %s: %s: %w", id, spec.Role, err)
		}
	}
	logPath, err := safepath.Join(d.logDir, name+".log")
	if err != nil {
		return nil, fmt.Errorf("harness: %s: %w", id, err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("harness: %s: %w", id, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := d.pin.Start(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("harness: %s: start %s: %w", id, spec.Role, err)
	}
	proc := &localProc{spec: spec, cmd: cmd, logPath: logPath, logf: logf, exited: make(chan struct{})}
	go func() {
		proc.waitErr = cmd.Wait()
		close(proc.exited)
	}()
	return proc, nil
}

// DefaultCheckTimeout bounds a process's configuration check.
const DefaultCheckTimeout = 30 * time.Second

// check runs exe with the check arguments in dir and returns an error
// holding its output (the engine's own message) unless it exits 0.
func check(ctx context.Context, exe, dir string, args []string, subst func(string) string) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultCheckTimeout)
	defer cancel()
	a := make([]string, len(args))
	for i, x := range args {
		a[i] = subst(x)
	}
	cmd := exec.CommandContext(ctx, exe, a...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("configuration check %s %s failed (%w):\n%s", exe, strings.Join(a, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

type localProc struct {
	spec    topologies.Process
	cmd     *exec.Cmd
	logPath string
	logf    *os.File
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// waitReady polls the process's health URL until it answers 200, the
// process exits, ctx ends or timeout passes.
func (p *localProc) waitReady(ctx context.Context, timeout time.Duration) error {
	err := WaitHTTP(ctx, p.spec.Health, timeout, p.exited)
	if errors.Is(err, ErrExited) {
		return fmt.Errorf("exited early (%v)", p.waitErr)
	}
	return err
}

// failure reports whether the process has exited, and how.
func (p *localProc) failure() (results.Failure, bool) {
	select {
	case <-p.exited:
	default:
		return results.Failure{}, false
	}
	exit := "exited"
	if p.cmd.ProcessState != nil {
		exit = p.cmd.ProcessState.String()
	} else if p.waitErr != nil {
		exit = p.waitErr.Error()
	}
	f := results.Failure{Process: fmt.Sprintf("%s (pid %d)", p.spec.Role, p.cmd.Process.Pid), Exit: exit, LogTail: p.tailLines()}
	return NameDeadWorker(f, p.spec.Role), true
}

// NameDeadWorker returns f, the failure of a process of role, naming the
// worker that died first when f's log says one did: a supervisor ("lbbench
// serve") exits when one of its workers dies, and logs which.
func NameDeadWorker(f results.Failure, role string) results.Failure {
	for _, line := range f.LogTail {
		if m := workerExited.FindStringSubmatch(line); m != nil {
			f.Exit = fmt.Sprintf("%s; then %s: %s", m[2], f.Process, f.Exit)
			f.Process = role + ": " + m[1]
			break
		}
		// "lbbench guard" exits when the engine's master does (nginx's
		// workers would go on serving without it), and says how.
		if m := engineExited.FindStringSubmatch(line); m != nil {
			f.Exit = fmt.Sprintf("%s; then %s: %s", m[2], f.Process, f.Exit)
			f.Process = role + ": " + m[1] + " (the engine's master process)"
			break
		}
	}
	return f
}

// engineExited matches what "lbbench guard" logs when the engine it runs
// is killed (internal/guard).
var engineExited = regexp.MustCompile(`guard: (\S+): (signal: .+)$`)

// workerExited matches the line a workers' supervisor logs when one of its
// workers exits (targets/prefork).
var workerExited = regexp.MustCompile(`prefork: (worker \d+ \(pid \d+\)) exited: (.+)$`)

// tailLines returns the last lines of the process's output.
func (p *localProc) tailLines() []string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(b) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[max(0, len(lines)-10):]
}

// logTail returns the last lines of the process's output, indented, for an
// error message.
func (p *localProc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = lines[max(0, len(lines)-10):]
	return "\n  " + p.spec.Role + " output (" + p.logPath + "):\n    " + strings.Join(lines, "\n    ")
}

// stop signals the process group to drain, then kills it if it has not
// exited by the deadline.
func (p *localProc) stop(ctx context.Context) error {
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(DefaultStopTimeout)
	defer t.Stop()
	var err error
	select {
	case <-p.exited:
	case <-ctx.Done():
		err = fmt.Errorf("%s: killed: %w", p.spec.Role, ctx.Err())
	case <-t.C:
		err = fmt.Errorf("%s: killed after %s without exiting", p.spec.Role, DefaultStopTimeout)
	}
	// The leader may be gone while a worker still runs: kill the group
	// regardless, then wait for the leader.
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.exited
	p.logf.Close()
	return err
}

type localDeployment struct {
	plan     topologies.Plan
	procs    []*localProc
	downOnce sync.Once
	downErr  error
}

func (d *localDeployment) Entry() string { return d.plan.Entry }

// Stats fetches every process's counters. A process that died is listed
// in Dead (with how it exited and its log's tail) instead of failing the
// call, and so is a worker its supervisor reports dead.
func (d *localDeployment) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var errs []error
	for _, p := range d.procs {
		if f, dead := p.failure(); dead {
			st.Dead = append(st.Dead, f)
			continue
		}
		if p.spec.Stats == "" {
			continue
		}
		var err error
		if p.spec.StatsKind == topologies.StatsHAProxy {
			err = ReadHAProxyStats(ctx, p.spec.Stats, &st)
		} else {
			var body []byte
			if body, err = Fetch(ctx, p.spec.Stats, 5*time.Second); err == nil {
				err = DecodeStats(p.spec.StatsKind, body, &st)
			} else if se := (*HTTPStatusError)(nil); errors.As(err, &se) {
				if n := len(st.Dead); DecodeFailedStats(p.spec.StatsKind, se.Body, &st) {
					for i := n; i < len(st.Dead); i++ {
						st.Dead[i].Process = p.spec.Role + ": " + st.Dead[i].Process
						st.Dead[i].LogTail = p.tailLines()
					}
					err = nil
				}
			}
		}
		if err != nil {
			if f, dead := p.failure(); dead { // it died while asked
				st.Dead = append(st.Dead, f)
				continue
			}
			errs = append(errs, fmt.Errorf("harness: %s: stats of %s: %w", d.plan.ID, p.spec.Role, err))
		}
	}
	return st, errors.Join(errs...)
}

// down takes what Up started so far down after a failure, under a
// teardown context of ctx (a hard stop kills at once).
func (d *localDeployment) down(ctx context.Context) {
	tctx, cancel := TeardownContext(ctx, 2*DefaultStopTimeout)
	defer cancel()
	d.Down(tctx)
}

// Down stops processes in reverse order of start: SIGTERM to each process
// group, then SIGKILL after DefaultStopTimeout or as soon as ctx ends. It
// is idempotent.
func (d *localDeployment) Down(ctx context.Context) error {
	d.downOnce.Do(func() {
		var errs []error
		for i := len(d.procs) - 1; i >= 0; i-- {
			errs = append(errs, d.procs[i].stop(ctx))
		}
		if err := errors.Join(errs...); err != nil {
			d.downErr = fmt.Errorf("harness: %s: down: %w", d.plan.ID, err)
		}
	})
	return d.downErr
}

// PIDs returns the process group ids of the deployment's processes.
func (d *localDeployment) PIDs() []int {
	out := make([]int, len(d.procs))
	for i, p := range d.procs {
		out[i] = p.cmd.Process.Pid
	}
	return out
}
