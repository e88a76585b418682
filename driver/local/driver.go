package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// MaxGenerators bounds WithGenerators: each generator is a process on
// this machine, and more only compete for its CPUs.
const MaxGenerators = 64

// Driver starts a plan's processes as children of this process on the
// loopback interface. Each child runs in its own process group with
// Pdeathsig set, so even if lbbench is killed outright its children die
// with it; Down signals the whole group, so grandchildren (workers started
// by "lbbench serve") go too. Its deployments offer the load from this
// process (loadgen.Attack) or, with WithGenerators, from K "lbbench attack"
// child processes. It is safe for concurrent use.
type Driver struct {
	exe    string
	logDir string
	pin    *Pinning // nil: no pinning

	generators int                     // WithGenerators; 0 or 1: this process
	genDir     string                  // where generator processes keep their files
	rawDir     string                  // WithRaw; "" for none
	live       func(loadgen.LiveStats) // WithLive

	mu   sync.Mutex
	used map[int]bool // ports handed out, so one plan never gets a port twice
}

var _ harness.Driver = (*Driver)(nil)

// Option configures a Driver. Options only set fields; New validates.
type Option func(*Driver)

// WithPinning pins this process (the generator) and every process the
// driver starts (the targets) to p's disjoint CPU sets.
func WithPinning(p *Pinning) Option { return func(d *Driver) { d.pin = p } }

// WithGenerators offers each run's load from k "lbbench attack" child
// processes (the driver's lbbench binary), each with 1/k of the rate,
// their histograms merged losslessly; their files go under dir/<run id>.
// k of 1 or less offers it from this process.
func WithGenerators(k int, dir string) Option {
	return func(d *Driver) { d.generators, d.genDir = k, dir }
}

// WithRaw streams one line per measured request of each run into
// dir/<run-id>.csv (see loadgen.RawHeader). Memory stays constant; the
// files grow. It needs the generator in this process.
func WithRaw(dir string) Option { return func(d *Driver) { d.rawDir = dir } }

// WithLive calls f with the load's live figures about once per second
// while a run's load is on (see loadgen.LiveContext); with K > 1 generator
// processes there are none.
func WithLive(f func(loadgen.LiveStats)) Option { return func(d *Driver) { d.live = f } }

// New returns a driver that runs the lbbench binary at exe and writes each
// process's output under logDir.
func New(exe, logDir string, opts ...Option) (*Driver, error) {
	d := &Driver{exe: exe, logDir: logDir, used: map[int]bool{}}
	for _, o := range opts {
		o(d)
	}
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("local: lbbench binary: %w", err)
	}
	if d.generators < 0 || d.generators > MaxGenerators {
		return nil, fmt.Errorf("local: generators: must be between 1 and %d (each is a process on this machine; more only compete for its CPUs), got %d", MaxGenerators, d.generators)
	}
	if d.generators > 1 && d.rawDir != "" {
		return nil, fmt.Errorf("local: raw per-request lines need the generator in this process, not %d generator processes", d.generators)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("local: log directory: %w", err)
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

// Name implements harness.Driver.
func (d *Driver) Name() string { return "local" }

// Describe implements harness.Driver: the CPU pinning and the versions of
// this machine's engines that s uses. A closed-loop or burst workload runs
// from one generator in this process, without raw lines.
func (d *Driver) Describe(ctx context.Context, s scenario.Scenario, env *results.Env) error {
	if d.generators > 1 || d.rawDir != "" {
		for _, v := range s.Variants {
			if s.WorkloadFor(v, 0).Deterministic() {
				return fmt.Errorf("local: variant %s: a closed-loop or burst workload runs from one generator and has no raw per-request file (drop --generators and --raw)", v.Name)
			}
		}
	}
	env.Pinning = d.pin.String()
	var err error
	env.Engines, err = driver.EngineVersions(ctx, s, engines.Find)
	return err
}

// Host implements topologies.Allocator.
func (d *Driver) Host() string { return "127.0.0.1" }

// Ports implements topologies.Allocator: it returns the first of n
// consecutive ports that can be bound now. Ports come from below the
// kernel's ephemeral range so that they never collide with the local ports
// of the generator's own connections.
func (d *Driver) Ports(n int) (int, error) {
	lo, hi := 10000, ephemeralLow()-n
	if n < 1 || hi <= lo {
		return 0, fmt.Errorf("local: cannot reserve %d consecutive ports below the ephemeral range (%d); at most %d fit", n, ephemeralLow(), ephemeralLow()-lo-1)
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
	return 0, fmt.Errorf("local: no %d consecutive free ports in [%d, %d)", n, lo, hi+n)
}

func (d *Driver) free(base, n int) bool {
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

// Up implements harness.Driver: it renders r's plan on loopback and brings
// it up (UpPlan).
func (d *Driver) Up(ctx context.Context, r harness.Bring) (harness.Deployment, error) {
	p, err := topologies.RenderRun(r.ID, r.Variant, r.Workers, d, r.Exe)
	if err != nil {
		return nil, err
	}
	return d.UpPlan(ctx, p)
}

// UpPlan starts p's processes in order, waiting for each to be ready
// before starting the next. On any failure it stops what it started and
// returns an error that includes the failed process's output.
func (d *Driver) UpPlan(ctx context.Context, p topologies.Plan) (harness.Deployment, error) {
	dep := &deployment{d: d, plan: p}
	for _, spec := range p.Processes {
		proc, err := d.start(ctx, p.ID, spec)
		if err != nil {
			dep.downAfterFailure(ctx)
			return nil, err
		}
		dep.procs = append(dep.procs, proc)
		if err := proc.waitReady(ctx, driver.DefaultReadyTimeout); err != nil {
			dep.downAfterFailure(ctx)
			return nil, fmt.Errorf("local: %s: %s did not become ready: %w%s", p.ID, spec.Role, err, proc.logTail())
		}
	}
	return dep, nil
}
