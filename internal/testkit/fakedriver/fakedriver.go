// Package fakedriver is a harness.Driver whose deployments run nothing,
// for the tests of the run loop (harness) and of the jobs around it (job),
// written once. Its deployments are Attackers that send no load: by
// default every attack returns Measurement(time.Millisecond), and the
// driver's hooks make a chosen Up, attack or Stats call fail, block or
// answer otherwise. It records every call, in order (Log, Plans,
// Deployments), so that a test can check what the loop did.
//
// That lbbench drives real processes is shown by the real drivers' tests,
// not with this one. Only tests import it (internal/archtest checks); it
// lives beside the test kit because it needs lbbench's packages, which
// the kit itself must not import.
package fakedriver

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

const (
	// Name is the driver's name, recorded in the results' environment.
	Name = "fake"
	// Generator is what Describe records as the environment's generator
	// container.
	Generator = "fake generator"
	// FirstPort is the first port Ports hands out; nothing listens on it.
	FirstPort = 20000
)

// Driver is a harness.Driver whose deployments run nothing. The zero value
// is ready to use; set the hooks before the driver is used. Every hook's n
// counts its calls from 1, over the driver's whole life (all deployments).
type Driver struct {
	// UpErr, when set, is asked before the n-th Up with the plan rendered
	// for it; a non-nil error fails that Up (logged "up-failed ID").
	UpErr func(n int, p topologies.Plan) error
	// Attack, when set, makes the n-th attack, of the deployment of plan
	// p; nil means Measurement(time.Millisecond). It is called without
	// the driver's lock held: it may block.
	Attack func(ctx context.Context, n int, p topologies.Plan) (*results.Measurement, error)
	// Stats, when set, answers the n-th Stats call made after a
	// deployment's attack; nil means empty Stats. A Stats call before the
	// deployment's attack (the run loop's CPU baseline) answers empty
	// Stats and is not counted.
	Stats func(n int, p topologies.Plan) (harness.Stats, error)
	// DescribeErr, when set, is Describe's error.
	DescribeErr error

	mu      sync.Mutex
	port    int
	log     []string          // "up ID", "up-failed ID", "down ID", "start ID", "done ID"
	plans   []topologies.Plan // every plan Up rendered, in order
	deps    []*Deployment     // the deployments that came up, in order
	live    *Deployment       // the deployment up now, if any
	overlap []string          // Ups made while another deployment was up
	attacks int
	nstats  int
}

var (
	_ harness.Driver     = (*Driver)(nil)
	_ harness.Deployment = (*Deployment)(nil)
)

// Name is Name.
func (d *Driver) Name() string { return Name }

// Host is the loopback address.
func (d *Driver) Host() string { return "127.0.0.1" }

// Ports hands out consecutive numbers from FirstPort, n at a time; nothing
// listens on them.
func (d *Driver) Ports(n int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.port == 0 {
		d.port = FirstPort
	}
	p := d.port
	d.port += n
	return p, nil
}

// Describe records Generator as the environment's generator container and
// returns DescribeErr.
func (d *Driver) Describe(_ context.Context, _ scenario.Scenario, e *results.Env) error {
	e.Containers = &results.ContainerEnv{Generator: Generator}
	return d.DescribeErr
}

// Up renders b's plan with the driver's ports and brings up a deployment
// that runs nothing. It fails when ctx is done or UpErr says so; an Up
// while another deployment is still up is recorded (Overlaps).
func (d *Driver) Up(ctx context.Context, b harness.Bring) (harness.Deployment, error) {
	p, err := topologies.RenderRun(b.ID, b.Variant, b.Workers, d, b.Exe)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.plans = append(d.plans, p)
	if d.live != nil {
		d.overlap = append(d.overlap, fmt.Sprintf("%s while %s was up", p.ID, d.live.plan.ID))
	}
	err = ctx.Err()
	if err == nil && d.UpErr != nil {
		err = d.UpErr(len(d.plans), p)
	}
	if err != nil {
		d.log = append(d.log, "up-failed "+p.ID)
		return nil, err
	}
	d.log = append(d.log, "up "+p.ID)
	dep := &Deployment{d: d, plan: p}
	d.deps = append(d.deps, dep)
	d.live = dep
	return dep, nil
}

// Progress returns a progress function (harness.WithProgress) that
// appends every event to events and logs it next to the driver's calls,
// "start ID" or "done ID".
func (d *Driver) Progress(events *[]harness.Progress) func(harness.Progress) {
	return func(p harness.Progress) {
		d.mu.Lock()
		defer d.mu.Unlock()
		*events = append(*events, p)
		if p.Done {
			d.log = append(d.log, "done "+p.ID)
		} else {
			d.log = append(d.log, "start "+p.ID)
		}
	}
}

// Log returns the calls so far, in order: "up ID", "up-failed ID" and
// "down ID" (the first Down of each deployment), with "start ID" and
// "done ID" for the events of Progress.
func (d *Driver) Log() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.log...)
}

// Plans returns every plan Up rendered, in order, including those of the
// Ups that failed.
func (d *Driver) Plans() []topologies.Plan {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]topologies.Plan(nil), d.plans...)
}

// Deployments returns the deployments that came up, in order.
func (d *Driver) Deployments() []*Deployment {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Deployment(nil), d.deps...)
}

// Live returns the deployment that is up now (brought up and not yet
// taken down), nil when there is none.
func (d *Driver) Live() *Deployment {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live
}

// Overlaps returns one line ("ID while ID was up") for every Up made while
// another deployment was up.
func (d *Driver) Overlaps() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.overlap...)
}

// Deployment is one fake bring-up. It records how it was attacked and
// taken down.
type Deployment struct {
	d    *Driver
	plan topologies.Plan

	// Under d.mu.
	spec      workloads.Spec
	attacked  bool
	downs     int
	firstDown DownCall
}

// DownCall is what a deployment's first Down was given: when it was made,
// the state of its context then, and the context's deadline.
type DownCall struct {
	At time.Time
	// Err is ctx.Err() at the call: non-nil when the context was
	// already done.
	Err error
	// Deadline and Bounded are ctx.Deadline().
	Deadline time.Time
	Bounded  bool
}

// Plan is the plan the deployment was brought up for.
func (f *Deployment) Plan() topologies.Plan { return f.plan }

// Entry is the plan's entry.
func (f *Deployment) Entry() string { return f.plan.Entry }

// Attack records spec and answers with the driver's Attack hook, or
// Measurement(time.Millisecond) without one.
func (f *Deployment) Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	f.d.mu.Lock()
	f.spec, f.attacked = spec, true
	f.d.attacks++
	n, hook := f.d.attacks, f.d.Attack
	f.d.mu.Unlock()
	if hook != nil {
		return hook(ctx, n, f.plan) // unlocked: the hook may block
	}
	return Measurement(time.Millisecond), nil
}

// Stats answers the driver's Stats hook after the deployment's attack;
// before it (the run loop's CPU baseline) it answers nothing, and the
// hook does not count the call.
func (f *Deployment) Stats(context.Context) (harness.Stats, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if !f.attacked {
		return harness.Stats{}, nil
	}
	f.d.nstats++
	if f.d.Stats != nil {
		return f.d.Stats(f.d.nstats, f.plan)
	}
	return harness.Stats{}, nil
}

// Down is idempotent, as the interface requires: the first call records
// its context (FirstDown) and is logged, and Downs counts every call so
// that a test can check the loop makes exactly one.
func (f *Deployment) Down(ctx context.Context) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	f.downs++
	if f.downs > 1 {
		return nil
	}
	f.firstDown.At, f.firstDown.Err = time.Now(), ctx.Err()
	f.firstDown.Deadline, f.firstDown.Bounded = ctx.Deadline()
	f.d.log = append(f.d.log, "down "+f.plan.ID)
	if f.d.live == f {
		f.d.live = nil
	}
	return nil
}

// Spec returns the workload the deployment was attacked with, and whether
// it was attacked.
func (f *Deployment) Spec() (workloads.Spec, bool) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return f.spec, f.attacked
}

// Downs returns the number of Down calls so far.
func (f *Deployment) Downs() int {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return f.downs
}

// FirstDown returns what the first Down call was given (the zero DownCall
// before any).
func (f *Deployment) FirstDown() DownCall {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return f.firstDown
}

// Workers is the number of workers Measurement attributes responses to.
const Workers = 3

// ByWorker returns the responses Measurement attributes to each worker:
// 50, 30 and 20 of its 100 to workers 0, 1 and 2.
func ByWorker() map[int]uint64 { return map[int]uint64{0: 50, 1: 30, 2: 20} }

// Measurement is a clean run of 100 requests over one second at the
// intended rate of 100/s, of one class "a", with latencies from 1ms to
// 1.99ms, every request sent lag late, and its responses spread over the
// workers as ByWorker says.
func Measurement(lag time.Duration) *results.Measurement {
	m := &results.Measurement{
		Duration:     time.Second,
		Requests:     100,
		IntendedRate: 100,
		AchievedRate: 100,
		Latency:      results.NewHistogram(),
		Uncorrected:  results.NewHistogram(),
		SendLag:      results.NewHistogram(),
		ErrorLatency: results.NewHistogram(),
		ByWorker:     map[int]uint64{},
	}
	class := results.Class{Name: "a", Requests: 100, Latency: results.NewHistogram()}
	for i := range 100 {
		d := time.Duration(1000+10*i) * time.Microsecond
		m.Latency.RecordDuration(d)
		m.Uncorrected.RecordDuration(d)
		class.Latency.RecordDuration(d)
		m.SendLag.RecordDuration(lag)
	}
	m.Classes = []results.Class{class}
	maps.Copy(m.ByWorker, ByWorker())
	m.Summarize()
	return m
}
