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

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
)

// Timeouts of the driver.
const (
	ReadyTimeout = harness.DefaultReadyTimeout
	StopTimeout  = harness.DefaultStopTimeout
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
	_ harness.EnvDescriber    = (*Driver)(nil)
	_ harness.Attacker        = (*deployment)(nil)
	_ topologies.EngineFinder = (*Driver)(nil)
)

// DriverOption configures NewDriver.
type DriverOption func(*driverConfig)

type driverConfig struct {
	logf         func(format string, args ...any)
	engineImages map[string]string
	placement    string
	limits       Limits
}

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

// DescribeEnv implements harness.EnvDescriber.
func (d *Driver) DescribeEnv(e *results.Env) {
	e.Containers = &results.ContainerEnv{
		Engine:    d.c.ServerVersion,
		API:       d.c.APIVersion,
		Session:   d.session,
		Image:     d.image,
		Network:   "internal bridge network, one per run",
		Generator: "lbbench attack in a container of its own on the run's network",
		Placement: d.place.roles,
	}
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

// Up implements harness.Driver: a network and a /tmp volume for the run, the
// generator container, then each of the plan's processes in a container,
// each ready before the next starts. On failure it removes everything it
// made and returns an error with the failed container's log.
func (d *Driver) Up(ctx context.Context, p topologies.Plan) (harness.Deployment, error) {
	if err := supported(p); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.runs++
	run := fmt.Sprintf("%03d", d.runs)
	d.mu.Unlock()
	dep := &deployment{d: d, plan: p, run: run, prefix: "lbbench-" + d.session + "-" + run}
	if err := dep.up(ctx); err != nil {
		downCtx, cancel := harness.TeardownContext(ctx, 2*StopTimeout)
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
