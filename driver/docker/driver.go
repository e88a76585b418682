package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/harness"
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
	engines *driver.EngineImages

	generators int                     // WithGenerators; 1 to driver.MaxGenerators
	live       func(loadgen.LiveStats) // WithLive

	mu     sync.Mutex
	images map[string]string // lbbench executable -> image tag
	runs   int               // plans brought up
	oneOff atomic.Int64      // one-off containers run (runOnce)
	ports  driver.PortCounter
}

var (
	_ harness.Driver          = (*Driver)(nil)
	_ harness.Deployment      = (*deployment)(nil)
	_ topologies.EngineFinder = (*Driver)(nil)
	_ driver.Planner          = (*Driver)(nil)
	_ driver.Starting         = (*deployment)(nil)
)

// Option configures New. Options only set fields; New validates them.
type Option func(*config)

type config struct {
	logf         func(format string, args ...any)
	engineImages map[string]string
	placement    string
	limits       Limits
	generators   int
	raw          string
	live         func(loadgen.LiveStats)
}

// WithGenerators offers each run's load from k "lbbench attack" processes
// in the generator container, each with 1/k of the rate, their histograms
// merged losslessly; k of 1, the default, runs one; less than 1 or more
// than driver.MaxGenerators is an error.
func WithGenerators(k int) Option { return func(c *config) { c.generators = k } }

// WithLive calls f with the live figures of a run's generator about once
// per second, when there is one generator process (see
// loadgen.LiveContext).
func WithLive(f func(loadgen.LiveStats)) Option { return func(c *config) { c.live = f } }

// WithLog sends the driver's notices (an image built, leftovers removed)
// to logf.
func WithLog(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// WithEngineImages names the image each proxy engine (nginx, haproxy) runs
// from: a local image with the engine on its PATH, or HostImage. lbbench
// never pulls: the image must be on this machine.
func WithEngineImages(images map[string]string) Option {
	return func(c *config) { c.engineImages = images }
}

// WithRaw asks for one line per measured request in dir, which the
// driver's generator does not write: New refuses a dir that is not empty.
func WithRaw(dir string) Option { return func(c *config) { c.raw = dir } }

// New returns a driver on c that runs the static lbbench binary at
// exe, building its image if need be, and writes each container's log and
// working files under logDir. It first removes what earlier lbbench
// processes that no longer run left behind.
func New(ctx context.Context, c *Client, exe, logDir string, opts ...Option) (*Driver, error) {
	cfg := config{logf: func(string, ...any) {}, generators: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if err := driver.CheckGeneratorCount(cfg.generators); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if cfg.raw != "" {
		return nil, errors.New("docker: --raw needs --driver local (the docker driver's generator writes histograms only)")
	}
	limits, err := cfg.limits.withDefaults()
	if err != nil {
		return nil, err
	}
	if rep, err := c.Clean(ctx, driver.CleanFilter{}); err != nil {
		return nil, err
	} else if !rep.Empty() {
		cfg.logf("removed %d containers, %d networks and %d volumes left by lbbench processes that no longer run", len(rep.Of(KindContainers)), len(rep.Of(KindNetworks)), len(rep.Of(KindVolumes)))
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
	d := &Driver{
		c: c, exe: exe, image: image, logDir: logDir,
		session:    hex.EncodeToString(b[:]),
		owner:      owner(),
		place:      place,
		limits:     limits,
		images:     map[string]string{exe: image},
		generators: cfg.generators,
		live:       cfg.live,
	}
	d.engines = driver.NewEngineImages("docker", cfg.engineImages, noEngineImage, d.resolveEngine)
	return d, nil
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

// Ports implements topologies.Allocator: every run has a network
// namespace of its own, so any port of the driver kit's range is free
// (driver.PortCounter).
func (d *Driver) Ports(n int) (int, error) { return d.ports.Ports(n) }

// Pinning describes the CPU placement, for the results.
func (d *Driver) Pinning() string { return d.place.desc }

// Describe implements harness.Driver: the container engine, image,
// session and CPU placement, and the versions of the engines s uses as
// their images hold them. A closed-loop or burst workload runs from one
// generator.
func (d *Driver) Describe(ctx context.Context, s scenario.Scenario, e *results.Env) error {
	if d.generators > 1 {
		if err := driver.OneGenerator(s); err != nil {
			return fmt.Errorf("docker: %w (drop --generators)", err)
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
// (driver.Up, UpPlan).
func (d *Driver) Up(ctx context.Context, r harness.Bring) (harness.Deployment, error) {
	return driver.Up(ctx, d, r)
}

// UpPlan makes a network and a /tmp volume for the run, the
// generator container, then each of the plan's processes in a container,
// each ready before the next starts. On failure it removes everything it
// made and returns an error with the failed container's log.
func (d *Driver) UpPlan(ctx context.Context, p topologies.Plan) (harness.Deployment, error) {
	if err := driver.InImage(p); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	d.mu.Lock()
	d.runs++
	run := fmt.Sprintf("%03d", d.runs)
	d.mu.Unlock()
	return driver.Start(ctx, &deployment{d: d, plan: p, run: run, prefix: "lbbench-" + d.session + "-" + run})
}
