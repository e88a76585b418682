package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// Timeouts of the driver.
const (
	ReadyTimeout = driver.DefaultReadyTimeout
	StopTimeout  = driver.DefaultStopTimeout
)

// Driver runs plans in containers (see the package documentation). It
// implements harness.Driver, and its deployments harness.Attacker.
type Driver struct {
	c       *Client
	exe     string
	image   string
	logDir  string
	session string
	owner   string
	place   placement
	limits  Limits

	generators int                     // WithGenerators; at least 1
	live       func(loadgen.LiveStats) // WithLive

	mu           sync.Mutex
	images       map[string]string         // lbbench executable -> image tag
	engineImages map[string]string         // engine -> image (see WithEngineImages)
	engineBins   map[string]engines.Binary // see FindEngine
	runs         int                       // plans brought up
	oneOff       atomic.Int64              // one-off containers run (runOnce; callers may or may not hold mu)
	port         int                       // next port to hand out
}

var (
	_ harness.Driver          = (*Driver)(nil)
	_ harness.Deployment      = (*deployment)(nil)
	_ topologies.EngineFinder = (*Driver)(nil)
)

// DriverOption configures NewDriver.
type DriverOption func(*driverConfig)

type driverConfig struct {
	logf         func(format string, args ...any)
	engineImages map[string]string
	placement    string
	limits       Limits
	generators   int
	live         func(loadgen.LiveStats)
}

// WithGenerators offers each run's load from k "lbbench attack" processes
// in the generator container, each with 1/k of the rate, their histograms
// merged losslessly; k of 1 or less runs one.
func WithGenerators(k int) DriverOption { return func(c *driverConfig) { c.generators = k } }

// WithLive calls f with the live figures of a run's generator about once
// per second, when there is one generator process (see
// loadgen.LiveContext).
func WithLive(f func(loadgen.LiveStats)) DriverOption { return func(c *driverConfig) { c.live = f } }

// WithLog sends the driver's notices (an image built, leftovers removed)
// to logf.
func WithLog(logf func(format string, args ...any)) DriverOption {
	return func(c *driverConfig) { c.logf = logf }
}

// NewDriver returns a driver on c that runs the static lbbench binary at
// exe, building its image if need be, and writes each container's log and
// working files under logDir. It first removes what earlier lbbench
// processes that no longer run left behind.
func NewDriver(ctx context.Context, c *Client, exe, logDir string, opts ...DriverOption) (*Driver, error) {
	cfg := driverConfig{logf: func(string, ...any) {}}
	for _, o := range opts {
		o(&cfg)
	}
	limits, err := cfg.limits.withDefaults()
	if err != nil {
		return nil, err
	}
	if rep, err := c.Clean(ctx, CleanFilter{}); err != nil {
		return nil, err
	} else if !rep.Empty() {
		cfg.logf("removed %d containers, %d networks and %d volumes left by lbbench processes that no longer run", len(rep.Containers), len(rep.Networks), len(rep.Volumes))
	}
	start := time.Now()
	image, built, err := c.EnsureImage(ctx, exe)
	if err != nil {
		return nil, err
	}
	if built {
		cfg.logf("built image %s in %s", image, time.Since(start).Round(time.Millisecond))
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("docker: log directory: %w", err)
	}
	info, err := c.api.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: daemon info: %w", err)
	}
	place, err := newPlacement(info.NCPU, cfg.placement)
	if err != nil {
		return nil, err
	}
	var b [4]byte
	rand.Read(b[:])
	return &Driver{
		c: c, exe: exe, image: image, logDir: logDir,
		session:      hex.EncodeToString(b[:]),
		owner:        owner(),
		place:        place,
		limits:       limits,
		images:       map[string]string{exe: image},
		engineImages: maps.Clone(cfg.engineImages),
		engineBins:   map[string]engines.Binary{},
		port:         firstPort,
		generators:   max(cfg.generators, 1),
		live:         cfg.live,
	}, nil
}

// Session is the id shared by the names and labels of everything this
// driver creates.
func (d *Driver) Session() string { return d.session }

// Image is the tag of the image of the driver's lbbench binary.
func (d *Driver) Image() string { return d.image }

// Name implements harness.Driver.
func (d *Driver) Name() string { return "docker" }

// Host implements topologies.Allocator: every process of a plan listens on
// the server namespace's address, which the generator resolves by name.
func (d *Driver) Host() string { return ServerHost }

// Ports handed out: every run has a network namespace of its own, so any
// port is free; a counter keeps one plan's ports distinct.
const firstPort, lastPort = 20000, 60000

// Ports implements topologies.Allocator.
func (d *Driver) Ports(n int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.port+n > lastPort {
		d.port = firstPort
	}
	p := d.port
	d.port += n
	return p, nil
}

// Pinning describes the CPU placement, for the results.
func (d *Driver) Pinning() string { return d.place.desc }

// Describe implements harness.Driver: the container engine, image,
// session and CPU placement, and the versions of the engines s uses as
// their images hold them. A closed-loop or burst workload runs from one
// generator.
func (d *Driver) Describe(ctx context.Context, s scenario.Scenario, e *results.Env) error {
	if d.generators > 1 {
		for _, v := range s.Variants {
			if s.WorkloadFor(v, 0).Deterministic() {
				return fmt.Errorf("docker: variant %s: a closed-loop or burst workload runs from one generator (drop --generators)", v.Name)
			}
		}
	}
	e.Pinning = d.place.desc
	var err error
	if e.Engines, err = driver.EngineVersions(ctx, s, d.FindEngine); err != nil {
		return err
	}
	e.Containers = &results.ContainerEnv{
		Engine:    d.c.ServerVersion,
		API:       d.c.APIVersion,
		Session:   d.session,
		Image:     d.image,
		Network:   "internal bridge network, one per run",
		Generator: "lbbench attack in a container of its own on the run's network",
		Placement: d.place.roles,
	}
	return nil
}

// imageFor returns the image of the lbbench binary exe ("" for the
// driver's own), building it if need be.
func (d *Driver) imageFor(ctx context.Context, exe string) (string, error) {
	if exe == "" {
		return d.image, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if tag, ok := d.images[exe]; ok {
		return tag, nil
	}
	tag, _, err := d.c.EnsureImage(ctx, exe)
	if err != nil {
		return "", err
	}
	d.images[exe] = tag
	return tag, nil
}

// Up implements harness.Driver: it renders r's plan and brings it up
// (UpPlan).
func (d *Driver) Up(ctx context.Context, r harness.Bring) (harness.Deployment, error) {
	p, err := topologies.RenderRun(r.ID, r.Variant, r.Workers, d, r.Exe)
	if err != nil {
		return nil, err
	}
	return d.UpPlan(ctx, p)
}

// UpPlan makes a network and a /tmp volume for the run, the
// generator container, then each of the plan's processes in a container,
// each ready before the next starts. On failure it removes everything it
// made and returns an error with the failed container's log.
func (d *Driver) UpPlan(ctx context.Context, p topologies.Plan) (harness.Deployment, error) {
	if err := supported(p); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.runs++
	run := fmt.Sprintf("%03d", d.runs)
	d.mu.Unlock()
	dep := &deployment{d: d, plan: p, run: run, prefix: "lbbench-" + d.session + "-" + run}
	if err := dep.up(ctx); err != nil {
		downCtx, cancel := hardstop.Teardown(ctx, 2*StopTimeout)
		defer cancel()
		return nil, errors.Join(err, dep.Down(downCtx))
	}
	return dep, nil
}

// supported rejects plans that need something the image does not hold.
func supported(p topologies.Plan) error {
	for _, proc := range p.Processes {
		if proc.Serve != nil && proc.Serve.Exec != nil {
			return fmt.Errorf("docker: %s: workers.target runs a command from this machine, which is not in the lbbench image; run it with --driver local", p.ID)
		}
	}
	return nil
}
