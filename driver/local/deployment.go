package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// deployment is one plan's processes.
type deployment struct {
	d        *Driver
	plan     topologies.Plan
	procs    []*proc
	downOnce sync.Once
	downErr  error
}

var _ harness.Deployment = (*deployment)(nil)

func (dep *deployment) Entry() string { return dep.plan.Entry }

// Attack implements harness.Attacker: from this process (loadgen.Attack,
// with its raw lines when WithRaw asked for them), or from K "lbbench
// attack" child processes.
func (dep *deployment) Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	d, id := dep.d, dep.plan.ID
	ctx = loadgen.LiveContext(ctx, d.live)
	if d.generators > 1 {
		dir, err := safepath.Join(d.genDir, id)
		if err != nil {
			return nil, fmt.Errorf("local: %s: generators: %w", id, err)
		}
		g := loadgen.Generators{K: d.generators, Entry: dep.Entry(), HostDir: dir, Dir: dir, Exec: loadgen.LocalExec(d.exe)}
		return g.Run(ctx, spec)
	}
	if d.rawDir == "" {
		return loadgen.Attack(ctx, dep.Entry(), spec, loadgen.Options{})
	}
	if err := os.MkdirAll(d.rawDir, 0o755); err != nil {
		return nil, fmt.Errorf("local: %s: raw: %w", id, err)
	}
	path, err := safepath.Join(d.rawDir, id+".csv")
	if err != nil {
		return nil, fmt.Errorf("local: %s: raw: %w", id, err)
	}
	raw, err := files.Create(path)
	if err != nil {
		return nil, fmt.Errorf("local: %s: raw: %w", id, err)
	}
	defer raw.Close()
	m, err := loadgen.Attack(ctx, dep.Entry(), spec, loadgen.Options{Raw: raw})
	if cerr := raw.Commit(); cerr != nil && err == nil {
		err = fmt.Errorf("local: %s: raw: %w", id, cerr)
	}
	return m, err
}

// Stats fetches every process's counters. A process that died is listed
// in Dead (with how it exited and its log's tail) instead of failing the
// call, and so is a worker its supervisor reports dead or not answering,
// and a process that is alive but gives no stats within
// driver.StatsTimeout (stopped or hung), which is killed.
func (dep *deployment) Stats(ctx context.Context) (harness.Stats, error) {
	var st harness.Stats
	var errs []error
	for _, p := range dep.procs {
		if f, dead := p.failure(); dead {
			st.Dead = append(st.Dead, f)
			continue
		}
		if p.spec.Stats == "" {
			continue
		}
		if err := p.stats(ctx, &st); err != nil {
			if f, dead := p.failure(); dead { // it died while asked
				st.Dead = append(st.Dead, f)
				continue
			}
			if ctx.Err() == nil && driver.TimedOut(err) { // alive but hung
				st.Dead = append(st.Dead, p.killHung())
				continue
			}
			errs = append(errs, fmt.Errorf("local: %s: stats of %s: %w", dep.plan.ID, p.spec.Role, err))
		}
	}
	return st, errors.Join(errs...)
}

// stats reads p's counters into st. A supervisor that answers 503 naming
// dead workers is not an error: they are added to st.Dead, with p's log.
// An engine's CPU (its guard, master and workers) is read from /proc here:
// nginx and HAProxy do not report their own.
func (p *proc) stats(ctx context.Context, st *harness.Stats) error {
	if e := p.spec.Engine; e != nil {
		if cpu, err := proccpu.Tree(p.cmd.Process.Pid); err == nil {
			st.CPU = append(st.CPU, results.ProcessCPU{Role: results.RoleProxy, Name: e.Engine, Worker: -1, Time: cpu})
		}
	}
	if p.spec.StatsKind == topologies.StatsHAProxy {
		return driver.ReadHAProxyStats(ctx, p.spec.Stats, st)
	}
	body, err := driver.Fetch(ctx, p.spec.Stats, driver.StatsTimeout)
	if err == nil {
		return driver.DecodeStats(p.spec.StatsKind, body, st)
	}
	var se *driver.HTTPStatusError
	if !errors.As(err, &se) {
		return err
	}
	n := len(st.Dead)
	if !driver.DecodeFailedStats(p.spec.StatsKind, se.Body, st) {
		return err
	}
	for i := n; i < len(st.Dead); i++ {
		st.Dead[i].Process = p.spec.Role + ": " + st.Dead[i].Process
		st.Dead[i].LogTail = p.tailLines()
	}
	return nil
}

// Start implements driver.Starting: it starts the plan's processes in
// order, each ready before the next starts.
func (dep *deployment) Start(ctx context.Context) error {
	p := dep.plan
	for _, spec := range p.Processes {
		proc, err := dep.d.start(ctx, p.ID, spec)
		if err != nil {
			return err
		}
		dep.procs = append(dep.procs, proc)
		if err := proc.waitReady(ctx, driver.DefaultReadyTimeout); err != nil {
			return fmt.Errorf("local: %s: %s did not become ready: %w%s", p.ID, spec.Role, err, proc.logTail())
		}
	}
	return nil
}

// Down implements harness.Deployment: it stops processes in reverse order
// of start, SIGTERM to each process group, then SIGKILL after
// driver.DefaultStopTimeout or as soon as ctx ends. It is idempotent.
func (dep *deployment) Down(ctx context.Context) error {
	dep.downOnce.Do(func() {
		var errs []error
		for i := len(dep.procs) - 1; i >= 0; i-- {
			errs = append(errs, dep.procs[i].stop(ctx))
		}
		if err := errors.Join(errs...); err != nil {
			dep.downErr = fmt.Errorf("local: %s: down: %w", dep.plan.ID, err)
		}
	})
	return dep.downErr
}
