package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/guard"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// Names and paths inside a run.
const (
	// ServerHost is the hostname and network alias of a run's server
	// namespace: every address in a plan is ServerHost:port.
	ServerHost = "server"
	// RoleGenerator is the generator container's role.
	RoleGenerator = "generator"
	// WorkDir is where a server container's working directory (the plan's
	// {dir}) is mounted; OutDir the generator's.
	WorkDir = "/work"
	OutDir  = "/out"
	// tmpfsSize bounds each run's shared /tmp.
	tmpfsSize = "256m"
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
		downCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*StopTimeout)
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

type deployment struct {
	d      *Driver
	plan   topologies.Plan
	run    string
	prefix string // lbbench-<session>-<run>

	network, volume string
	gen             *box
	boxes           []*box // the plan's processes, in start order

	downOnce sync.Once
	downErr  error
}

// box is one container.
type box struct {
	name, id string
	role     string
	spec     topologies.Process
	hostDir  string // mounted at WorkDir (the generator's at OutDir)
	logPath  string
	exited   <-chan container.WaitResponse
	waitErr  <-chan error
}

func (dep *deployment) labels(role string) map[string]string {
	l := map[string]string{
		LabelManaged: "true",
		LabelSession: dep.d.session,
		LabelRun:     dep.run,
		LabelOwner:   dep.d.owner,
		LabelPlan:    dep.plan.ID,
	}
	if role != "" {
		l[LabelRole] = role
	}
	return l
}

func (dep *deployment) up(ctx context.Context) error {
	api := dep.d.c.api
	nw, err := api.NetworkCreate(ctx, dep.prefix, network.CreateOptions{Driver: "bridge", Internal: true, Labels: dep.labels("")})
	if err != nil {
		return fmt.Errorf("docker: %s: create network: %w", dep.plan.ID, err)
	}
	dep.network = nw.ID
	vol, err := api.VolumeCreate(ctx, volume.CreateOptions{
		Name:       dep.prefix + "-tmp",
		Driver:     "local",
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=" + tmpfsSize + ",mode=1777"},
		Labels:     dep.labels(""),
	})
	if err != nil {
		return fmt.Errorf("docker: %s: create volume: %w", dep.plan.ID, err)
	}
	dep.volume = vol.Name

	// The generator, where readiness probes run, starts alongside the
	// first server container.
	genDone := make(chan error, 1)
	go func() { genDone <- dep.startGenerator(ctx) }()
	genWaited := false
	waitGen := func() error {
		if genWaited {
			return nil
		}
		genWaited = true
		return <-genDone
	}
	for i, spec := range dep.plan.Processes {
		b, err := dep.startProcess(ctx, i, spec)
		if gerr := waitGen(); gerr != nil {
			return errors.Join(err, gerr)
		}
		if err != nil {
			return err
		}
		if err := dep.waitReady(ctx, b); err != nil {
			return err
		}
	}
	return waitGen()
}

// startGenerator creates and starts the generator container, which idles
// until the driver execs probes and attacks in it.
func (dep *deployment) startGenerator(ctx context.Context) error {
	genDir, err := dep.hostDir(RoleGenerator)
	if err != nil {
		return err
	}
	gen, err := dep.create(ctx, RoleGenerator, 0, topologies.Process{Role: RoleGenerator}, &container.Config{Image: dep.d.image, Cmd: []string{"idle"}},
		&container.HostConfig{
			NetworkMode:    container.NetworkMode(dep.network),
			ReadonlyRootfs: true,
			Tmpfs:          map[string]string{"/tmp": "rw,size=64m,mode=1777"},
			Mounts:         []mount.Mount{{Type: mount.TypeBind, Source: genDir, Target: OutDir}},
			Resources:      dep.d.place.generator,
		}, nil)
	if err != nil {
		return err
	}
	gen.hostDir = genDir
	dep.gen = gen // Down removes it even if it never starts
	return dep.start(ctx, gen)
}

// startProcess creates and starts process i of the plan. The first owns
// the server namespace; the others join it.
func (dep *deployment) startProcess(ctx context.Context, i int, spec topologies.Process) (*box, error) {
	dir, err := dep.hostDir(spec.Role)
	if err != nil {
		return nil, err
	}
	subst := func(args []string) []string {
		out := make([]string, len(args))
		for j, a := range args {
			out[j] = strings.ReplaceAll(a, topologies.DirPlaceholder, WorkDir)
		}
		return out
	}
	for _, f := range spec.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(strings.ReplaceAll(f.Content, topologies.DirPlaceholder, WorkDir)), 0o644); err != nil {
			return nil, fmt.Errorf("docker: %s: %w", dep.plan.ID, err)
		}
	}
	spec.Stats = strings.ReplaceAll(spec.Stats, topologies.DirPlaceholder, WorkDir)
	mounts := []mount.Mount{
		{Type: mount.TypeVolume, Source: dep.volume, Target: "/tmp"},
		{Type: mount.TypeBind, Source: dir, Target: WorkDir},
	}
	var image string
	var entrypoint, cmd []string
	if spec.Engine != nil {
		engine := spec.Engine.Engine
		// nginx or HAProxy from its image: the engine itself is the
		// container's process (lbbench guard's work is Docker's here).
		if image, err = dep.d.engineImage(engine); err != nil {
			return nil, err
		}
		// As PID 1, HAProxy ignores SIGTERM: lbbench guard, mounted from
		// this machine (it is static), runs the engine and passes signals
		// on, as it does for local processes.
		entrypoint, cmd = append([]string{ImageBinary}, guard.Args(spec.Engine.Path)...), subst(spec.Engine.Args)
		if len(spec.Engine.Check) > 0 {
			// In the server's namespace, where the configuration's
			// addresses resolve and bind.
			if i == 0 {
				return nil, fmt.Errorf("docker: %s: the engine cannot be the plan's first process", dep.plan.ID)
			}
			out, code, err := dep.d.runOnce(ctx, "check", image, []string{spec.Engine.Path}, subst(spec.Engine.Check), mounts, "container:"+dep.boxes[0].id)
			if err != nil {
				return nil, err
			}
			if code != 0 {
				return nil, fmt.Errorf("docker: %s: %s configuration check failed (exit status %d):\n%s", dep.plan.ID, engine, code, strings.TrimSpace(out))
			}
		}
	} else {
		if image, err = dep.d.imageFor(ctx, spec.Exe); err != nil {
			return nil, err
		}
		cmd = subst(spec.Args())
	}
	if entrypoint != nil {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: dep.d.exe, Target: ImageBinary, ReadOnly: true})
	}
	hc := &container.HostConfig{ReadonlyRootfs: true, Mounts: mounts, Resources: dep.d.place.server}
	hostname := ""
	var aliases []string
	if i == 0 {
		hc.NetworkMode = container.NetworkMode(dep.network)
		hostname, aliases = ServerHost, []string{ServerHost}
	} else {
		hc.NetworkMode = container.NetworkMode("container:" + dep.boxes[0].id)
	}
	b, err := dep.create(ctx, spec.Role, 0, spec, &container.Config{Image: image, Entrypoint: entrypoint, Cmd: cmd, Hostname: hostname}, hc, aliases)
	if err != nil {
		return nil, err
	}
	b.hostDir = dir
	dep.boxes = append(dep.boxes, b)
	return b, dep.start(ctx, b)
}

// hostDir makes the run's directory for role under the log directory,
// writable by the image's unprivileged user, and returns its absolute path.
func (dep *deployment) hostDir(role string) (string, error) {
	dir, err := filepath.Abs(filepath.Join(dep.d.logDir, dep.plan.ID+"-"+role))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		return "", fmt.Errorf("docker: %s: working directory: %w", dep.plan.ID, err)
	}
	return dir, nil
}

// create creates container i of role from cfg (image, entrypoint, command,
// hostname) and hc, with the run's labels, on the run's network under
// aliases (when hc puts it there).
func (dep *deployment) create(ctx context.Context, role string, i int, spec topologies.Process, cfg *container.Config, hc *container.HostConfig, aliases []string) (*box, error) {
	name := dep.prefix + "-" + role + "-" + strconv.Itoa(i)
	cfg.Labels = dep.labels(role)
	cfg.WorkingDir = WorkDir
	if role == RoleGenerator {
		cfg.WorkingDir = OutDir
	}
	var nc *network.NetworkingConfig
	if hc.NetworkMode.IsUserDefined() {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{dep.network: {Aliases: aliases}}}
	}
	resp, err := dep.d.c.api.ContainerCreate(ctx, cfg, hc, nc, nil, name)
	if err != nil {
		return nil, fmt.Errorf("docker: %s: create %s: %w", dep.plan.ID, name, err)
	}
	return &box{name: name, id: resp.ID, role: role, spec: spec, logPath: filepath.Join(dep.d.logDir, dep.plan.ID+"-"+role+".log")}, nil
}

func (dep *deployment) start(ctx context.Context, b *box) error {
	api := dep.d.c.api
	// Wait for the next exit before starting, so that an early exit is
	// never missed.
	b.exited, b.waitErr = api.ContainerWait(context.WithoutCancel(ctx), b.id, container.WaitConditionNextExit)
	if err := api.ContainerStart(ctx, b.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("docker: %s: start %s: %w", dep.plan.ID, b.name, err)
	}
	return nil
}

// waitReady probes b's health URL from the generator container, inside the
// run's network, until it answers 200. It stops early when b exits, with
// b's log in the error.
func (dep *deployment) waitReady(ctx context.Context, b *box) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout+5*time.Second)
	defer cancel()
	type result struct {
		code int
		out  string
		err  error
	}
	probed := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, harness.ProbeCommand{URL: b.spec.Health, Timeout: ReadyTimeout}.Args()...), &out, &out)
		probed <- result{code, strings.TrimSpace(out.String()), err}
	}()
	select {
	case r := <-probed:
		switch {
		case r.err != nil:
			return fmt.Errorf("docker: %s: %s did not become ready: %w%s", dep.plan.ID, b.name, r.err, dep.logTail(b))
		case r.code != 0:
			return fmt.Errorf("docker: %s: %s did not become ready: %s%s", dep.plan.ID, b.name, r.out, dep.logTail(b))
		}
		return nil
	case w := <-b.exited:
		msg := fmt.Sprintf("exit status %d", w.StatusCode)
		if w.Error != nil {
			msg += ": " + w.Error.Message
		}
		return fmt.Errorf("docker: %s: %s exited early (%s)%s", dep.plan.ID, b.name, msg, dep.logTail(b))
	case err := <-b.waitErr:
		return fmt.Errorf("docker: %s: watching %s: %w", dep.plan.ID, b.name, err)
	}
}

// logTail returns the last lines of b's log, indented, for an error.
func (dep *deployment) logTail(b *box) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := dep.d.c.api.ContainerLogs(ctx, b.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "15"})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, rc)
	s := strings.TrimRight(out.String(), "\n")
	if s == "" {
		return "\n  " + b.name + " wrote nothing"
	}
	return "\n  " + b.name + " output:\n    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func (dep *deployment) Entry() string { return dep.plan.Entry }

// Stats fetches every process's counters from inside the run's network.
func (dep *deployment) Stats(ctx context.Context) (harness.Stats, error) {
	var st harness.Stats
	for _, b := range dep.boxes {
		if b.spec.Stats == "" {
			continue
		}
		if b.spec.StatsKind == topologies.StatsHAProxy {
			// The stats socket is in the working directory, which is
			// bind-mounted from this machine: read it from here.
			sock := filepath.Join(b.hostDir, strings.TrimPrefix(b.spec.Stats, WorkDir+"/"))
			if err := harness.ReadHAProxyStats(ctx, sock, &st); err != nil {
				return st, fmt.Errorf("docker: %s: stats of %s: %w", dep.plan.ID, b.role, err)
			}
			continue
		}
		var out, errOut bytes.Buffer
		code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, harness.ProbeCommand{URL: b.spec.Stats, Get: true}.Args()...), &out, &errOut)
		if err == nil && code != 0 {
			err = fmt.Errorf("%s", strings.TrimSpace(errOut.String()))
		}
		if err == nil {
			err = harness.DecodeStats(b.spec.StatsKind, out.Bytes(), &st)
		}
		if err != nil {
			return st, fmt.Errorf("docker: %s: stats of %s: %w", dep.plan.ID, b.role, err)
		}
	}
	return st, nil
}

// Attack implements harness.Attacker: it runs k "lbbench attack" processes
// in the generator container, each with 1/k of spec's load, and merges
// their histograms. When ctx ends it kills the generator container (the
// run is void anyway).
func (dep *deployment) Attack(ctx context.Context, spec workloads.Spec, k int) (*results.Measurement, error) {
	g := harness.Generators{
		K:       k,
		Entry:   dep.plan.Entry,
		HostDir: dep.gen.hostDir, // made by startGenerator, mounted at OutDir
		Dir:     OutDir,
		Live:    harness.LiveFunc(ctx),
		Exec: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, args...), stdout, stderr)
			if err == nil && code != 0 {
				err = fmt.Errorf("exit status %d", code)
			}
			return err
		},
	}
	stop := context.AfterFunc(ctx, func() {
		dep.d.c.api.ContainerKill(context.Background(), dep.gen.id, "KILL")
	})
	defer stop()
	m, err := g.Run(ctx, spec)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("docker: %s: %w", dep.plan.ID, err)
	}
	return m, err
}

// Down stops the plan's containers in reverse order (SIGTERM: the workers
// drain), saves every container's log, and removes the containers, the
// volume and the network. It is idempotent and goes on past errors.
func (dep *deployment) Down(ctx context.Context) error {
	dep.downOnce.Do(func() {
		var errs []error
		// The generator is idle (or killed): it goes while the server's
		// containers stop in reverse order of start.
		var genErr error
		var wg sync.WaitGroup
		if dep.gen != nil {
			wg.Go(func() { genErr = dep.remove(ctx, dep.gen) })
		}
		boxes := slices.Clone(dep.boxes)
		slices.Reverse(boxes)
		for _, b := range boxes {
			errs = append(errs, dep.remove(ctx, b))
		}
		wg.Wait()
		errs = append(errs, genErr)
		api := dep.d.c.api
		if dep.volume != "" {
			if err := api.VolumeRemove(ctx, dep.volume, true); err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove volume: %w", err))
			}
		}
		if dep.network != "" {
			if err := api.NetworkRemove(ctx, dep.network); err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove network: %w", err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			dep.downErr = fmt.Errorf("docker: %s: down: %w", dep.plan.ID, err)
		}
	})
	return dep.downErr
}

// remove stops b, saves its log and removes it.
func (dep *deployment) remove(ctx context.Context, b *box) error {
	api := dep.d.c.api
	timeout := int(StopTimeout / time.Second)
	if b.role == RoleGenerator {
		timeout = 1
	}
	var errs []error
	if err := api.ContainerStop(ctx, b.id, container.StopOptions{Timeout: &timeout}); err != nil && !errdefs.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("stop %s: %w", b.name, err))
	}
	if err := dep.saveLog(ctx, b); err != nil {
		errs = append(errs, err)
	}
	if err := api.ContainerRemove(ctx, b.id, container.RemoveOptions{Force: true}); err != nil && !errdefs.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("remove %s: %w", b.name, err))
	}
	return errors.Join(errs...)
}

func (dep *deployment) saveLog(ctx context.Context, b *box) error {
	rc, err := dep.d.c.api.ContainerLogs(ctx, b.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Timestamps: true})
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	defer rc.Close()
	f, err := os.Create(b.logPath)
	if err != nil {
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	_, err = stdcopy.StdCopy(f, f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	return nil
}
