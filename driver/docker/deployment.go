package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/guard"
	"github.com/lbbench/lbbench/internal/logtail"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
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
	hostDir  string           // mounted at WorkDir (the generator's at OutDir)
	hung     *results.Failure // set by killHung: why it was killed
	logPath  string
	exited   <-chan container.WaitResponse
	waitErr  <-chan error
}

func (dep *deployment) labels(role string) map[string]string {
	l := driver.Labels(dep.d.session, dep.d.owner, role)
	l[driver.LabelRun] = dep.run
	l[driver.LabelPlan] = dep.plan.ID
	return l
}

// Start implements driver.Starting: the run's network and /tmp volume,
// the generator container, then each of the plan's processes in a
// container, each ready before the next starts.
func (dep *deployment) Start(ctx context.Context) error {
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

// startProcess creates and starts process i of the plan. The first owns
// the server namespace; the others join it.
func (dep *deployment) startProcess(ctx context.Context, i int, spec topologies.Process) (*box, error) {
	dir, err := dep.hostDir(spec.Role)
	if err != nil {
		return nil, err
	}
	inWorkDir := driver.Subst(WorkDir)
	subst := func(args []string) []string { return driver.SubstAll(inWorkDir, args) }
	if err := driver.WritePlanFiles(dir, spec, inWorkDir); err != nil {
		return nil, fmt.Errorf("docker: %s: %w", dep.plan.ID, err)
	}
	spec.Stats = inWorkDir(spec.Stats)
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
		if image, err = dep.d.engines.Image(engine); err != nil {
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
// owned by the containers' unprivileged user (see ownDir), and returns its absolute path.
func (dep *deployment) hostDir(role string) (string, error) {
	dir, err := safepath.Join(dep.d.logDir, dep.plan.ID+"-"+role)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = ownDir(dir)
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
	cfg.User = containerUser()
	dep.d.harden(hc)
	cfg.WorkingDir = WorkDir
	if role == RoleGenerator {
		cfg.WorkingDir = OutDir
	}
	var nc *network.NetworkingConfig
	if hc.NetworkMode.IsUserDefined() {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{dep.network: {Aliases: aliases}}}
	}
	logPath, err := safepath.Join(dep.d.logDir, dep.plan.ID+"-"+role+".log")
	if err != nil {
		return nil, fmt.Errorf("docker: %s: %w", dep.plan.ID, err)
	}
	resp, err := dep.d.c.api.ContainerCreate(ctx, cfg, hc, nc, nil, name)
	if err != nil {
		return nil, fmt.Errorf("docker: %s: create %s: %w", dep.plan.ID, name, err)
	}
	return &box{name: name, id: resp.ID, role: role, spec: spec, logPath: logPath}, nil
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
		code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, driver.ProbeCommand{URL: b.spec.Health, Timeout: ReadyTimeout}.Args()...), &out, &out)
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

// logLines returns the last lines of b's log.
func (dep *deployment) logLines(b *box) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := dep.d.c.api.ContainerLogs(ctx, b.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "15"})
	if err != nil {
		return nil
	}
	defer rc.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, rc)
	return logtail.Lines(out.String(), 15)
}

// logTail returns the last lines of b's log, indented, for an error.
func (dep *deployment) logTail(b *box) string {
	lines := dep.logLines(b)
	if len(lines) == 0 {
		return "\n  " + b.name + " wrote nothing"
	}
	return logtail.Format(b.name+" output", lines)
}

func (dep *deployment) Entry() string { return dep.plan.Entry }

// Stats fetches every process's counters from inside the run's network.
// A container that is no longer running is listed in Dead (with its exit
// status and log's tail) instead of failing the call, and so is one that
// is paused, or that gives no stats within driver.StatsTimeout while no
// other container died, which is killed.
func (dep *deployment) Stats(ctx context.Context) (harness.Stats, error) {
	var st harness.Stats
	var errs []error
	type silentBox struct {
		b   *box
		err error
	}
	var silent []silentBox
	for _, b := range dep.boxes {
		if f, dead := dep.failure(ctx, b); dead {
			st.Dead = append(st.Dead, f)
			continue
		}
		if b.spec.Stats == "" {
			continue
		}
		if err := dep.stats(ctx, b, &st); err != nil {
			if f, dead := dep.failure(ctx, b); dead { // it died while asked
				st.Dead = append(st.Dead, f)
				continue
			}
			if ctx.Err() == nil && driver.TimedOut(err) { // alive but hung?
				silent = append(silent, silentBox{b, err})
				continue
			}
			errs = append(errs, err)
		}
	}
	for _, s := range silent {
		// A container that shares a dead one's network (the proxy shares
		// the workers') cannot be reached either: then its silence is
		// one more reason, not a hang of its own.
		if len(st.Dead) > 0 {
			errs = append(errs, s.err)
			continue
		}
		st.Dead = append(st.Dead, dep.killHung(ctx, s.b, "not answering"))
	}
	return st, errors.Join(errs...)
}

// failure reports whether b's container has stopped, and how.
func (dep *deployment) failure(ctx context.Context, b *box) (results.Failure, bool) {
	if b.hung != nil {
		return *b.hung, true
	}
	info, err := dep.d.c.api.ContainerInspect(ctx, b.id)
	if err == nil && info.State != nil && info.State.Paused {
		return dep.killHung(ctx, b, "paused"), true
	}
	if err != nil || info.State == nil || info.State.Running {
		return results.Failure{}, false
	}
	exit := fmt.Sprintf("exit status %d", info.State.ExitCode)
	if info.State.OOMKilled {
		exit += ", killed for lack of memory"
	}
	if info.State.Error != "" {
		exit += ": " + info.State.Error
	}
	f := results.Failure{Process: fmt.Sprintf("%s (container %s)", b.role, b.name), Exit: exit}
	for _, l := range dep.logLines(b) {
		f.LogTail = append(f.LogTail, strings.TrimSpace(l))
	}
	return driver.NameDeadWorker(f, b.role), true
}

// killHung kills b's container, alive but not answering (looks says how
// it looked), and returns its failure, which failure reports from then
// on. A paused container is unpaused first: the daemon kills no paused
// container.
func (dep *deployment) killHung(ctx context.Context, b *box, looks string) results.Failure {
	api := dep.d.c.api
	if info, err := api.ContainerInspect(ctx, b.id); err == nil && info.State != nil && info.State.Paused {
		looks = "paused"
		api.ContainerUnpause(ctx, b.id)
	}
	api.ContainerKill(ctx, b.id, "KILL")
	f := driver.Unresponsive(fmt.Sprintf("%s (container %s)", b.role, b.name), looks)
	for _, l := range dep.logLines(b) {
		f.LogTail = append(f.LogTail, strings.TrimSpace(l))
	}
	b.hung = &f
	return f
}

// stats reads b's counters into st.
func (dep *deployment) stats(ctx context.Context, b *box, st *harness.Stats) error {
	if e := b.spec.Engine; e != nil {
		// nginx and HAProxy do not report their own CPU: the container's
		// cgroup does.
		if cpu, err := dep.containerCPU(ctx, b); err == nil {
			st.CPU = append(st.CPU, results.ProcessCPU{Role: results.RoleProxy, Name: e.Engine, Worker: -1, Time: cpu})
		}
	}
	if b.spec.StatsKind == topologies.StatsHAProxy {
		// The stats socket is in the working directory, which is
		// bind-mounted from this machine: read it from here.
		sock := filepath.Join(b.hostDir, strings.TrimPrefix(b.spec.Stats, WorkDir+"/"))
		if err := driver.ReadHAProxyStats(ctx, sock, st); err != nil {
			return fmt.Errorf("docker: %s: stats of %s: %w", dep.plan.ID, b.role, err)
		}
		return nil
	}
	var out, errOut bytes.Buffer
	probe := driver.ProbeCommand{URL: b.spec.Stats, Get: true, Timeout: driver.StatsTimeout}
	code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, probe.Args()...), &out, &errOut)
	switch {
	case err != nil:
	case code == driver.ProbeTimedOut:
		err = fmt.Errorf("%s: %w", strings.TrimSpace(errOut.String()), context.DeadlineExceeded)
	case code != 0:
		err = fmt.Errorf("%s", strings.TrimSpace(errOut.String()))
	}
	if err == nil {
		err = driver.DecodeStats(b.spec.StatsKind, out.Bytes(), st)
	}
	if err != nil {
		return fmt.Errorf("docker: %s: stats of %s: %w", dep.plan.ID, b.role, err)
	}
	return nil
}

// containerCPU is the CPU time b's container has used, from its cgroup
// (the daemon's one-shot stats).
func (dep *deployment) containerCPU(ctx context.Context, b *box) (time.Duration, error) {
	rd, err := dep.d.c.api.ContainerStatsOneShot(ctx, b.id)
	if err != nil {
		return 0, err
	}
	defer rd.Body.Close()
	var sr container.StatsResponse
	if err := json.NewDecoder(io.LimitReader(rd.Body, 1<<20)).Decode(&sr); err != nil {
		return 0, err
	}
	return time.Duration(sr.CPUStats.CPUUsage.TotalUsage), nil
}
