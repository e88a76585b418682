package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// Progress reports the scenario's advance to the caller.
type Progress = results.Progress

// DefaultTeardown bounds how long Run waits for a deployment's Down
// (after Ctrl-C too) unless WithTeardown says otherwise: enough for every
// process to drain and be killed after a driver's stop timeout.
const DefaultTeardown = 20 * time.Second

type config struct {
	progress   func(Progress)
	checkpoint func(*results.Results) error
	version    string
	commit     string
	builds     map[string]string // see WithBuilds
	teardown   time.Duration
	rounds     *Rounds        // see WithRounds
	retries    int            // see WithRetries
	neighbours Neighbours     // see WithNeighbours
	alpha      float64        // see WithLevel
	suite      *results.Suite // see WithLevel
}

// Neighbours is how Run learns of the other lbbench runs on the same host
// (WithNeighbours).
type Neighbours interface {
	// Watch begins a run's load; the function it returns ends it and
	// describes every other lbbench run that was running on this host at
	// some moment in between, one string each.
	Watch() (end func() []string)
}

// Rounds makes Run go on round after round until what it judges (a
// sequential comparison, the scenario's statistical claims) is decided
// (run --until-decided), instead of making the scenario's Repeat rounds.
type Rounds struct {
	// Min is the first round after which Stop is asked (at least 1); Max
	// the most rounds made.
	Min, Max int
	// Budget, when positive, bounds the scenario's time: a round is not
	// started when the rounds so far say it would end past Budget.
	Budget time.Duration
	// Stop is asked, with the results so far, after every round from Min
	// on (or those At says): a Look that is Decided ends the scenario
	// there.
	Stop func(res *results.Results, rounds int) Look
	// At, when set, says after which rounds (from Min on) Stop is asked:
	// the scheduled looks. When the budget ends the rounds after one At
	// passed over, Stop is asked there, a last look. Looks, the number
	// scheduled, is recorded in results.Stop.
	At    func(round int) bool
	Looks int
	// Judging, recorded in results.Stop, is what Stop judged at each look.
	Judging *results.Judging

	last *lastLook // the last look of this Run that did not decide
}

// Look is what Rounds.Stop found after a round.
type Look struct {
	// Decided ends the scenario after this round; Reason says what
	// decided it (results.Stop.Reason).
	Decided bool
	Reason  string
	// Undecided, when not Decided, names what is not decided yet, one
	// item each. The last look's is recorded (results.Stop.Undecided, and
	// in the reason) when the rounds or the budget run out.
	Undecided []string
}

// Option configures Run. Options only set fields; their order does not
// matter.
type Option func(*config)

// WithProgress calls f before and after every run, from Run's goroutine.
func WithProgress(f func(Progress)) Option { return func(c *config) { c.progress = f } }

// WithCheckpoint calls f with the results so far after every run, so a
// caller can persist them; an error from f stops the scenario.
func WithCheckpoint(f func(*results.Results) error) Option {
	return func(c *config) { c.checkpoint = f }
}

// WithVersion records lbbench's version and commit in the environment.
func WithVersion(version, commit string) Option {
	return func(c *config) { c.version, c.commit = version, commit }
}

// WithBuilds maps build names (scenario.Variant.Build) to lbbench
// executables: a variant with a Build runs that executable wherever its
// plan would run the lbbench binary itself. The load generator stays the
// driver's for every variant: it is the instrument, and must not change
// between the builds compared. The empty name, when builds has it, is the
// executable of the variants of no Build (this build's); without it they
// run the driver's own.
func WithBuilds(builds map[string]string) Option { return func(c *config) { c.builds = builds } }

// WithRounds runs rounds until r.Stop says the comparison is decided, or
// r.Max rounds are made, or r.Budget would be passed (see Rounds).
func WithRounds(r Rounds) Option { return func(c *config) { c.rounds = &r } }

// WithRetries makes a run that came out invalid (its generator fell
// behind: on a shared or virtual machine, usually the host taking the
// CPUs, results.Generator.Steal; the host stole more than the scenario's
// validity.max_steal of the run's CPUs; another lbbench run was running on
// the host) again, up to n times, right away, in the same round, so that
// the round still pairs its variants. The invalid
// attempts stay in the results with their reasons and are left out like
// every invalid run; a retry's ID is the run's with "-retryK" after it. A
// run that failed (a process died) or a saturated one is a measurement
// and is not made again.
func WithRetries(n int) Option { return func(c *config) { c.retries = max(n, 0) } }

// WithNeighbours makes every run record the other lbbench runs n saw on
// this host during its load (results.Run.Concurrent); such a run is
// invalid unless the scenario's validity.allow_concurrent.
func WithNeighbours(n Neighbours) Option { return func(c *config) { c.neighbours = n } }

// WithLevel records the false-alarm rate the run's family is judged at
// (results.Results.Alpha) and the claims suite it is one part of, if any
// (nil: none).
func WithLevel(alpha float64, suite *results.Suite) Option {
	return func(c *config) { c.alpha, c.suite = alpha, suite }
}

// WithTeardown bounds each deployment's Down to d (DefaultTeardown when
// zero or negative).
func WithTeardown(d time.Duration) Option { return func(c *config) { c.teardown = d } }

// Run runs scenario s (already defaulted and validated) on d, following
// s.Schedule. It always returns the results gathered so far, together with
// the error that stopped it, if any: an interrupted scenario keeps its
// finished runs.
func Run(ctx context.Context, s scenario.Scenario, d Driver, opts ...Option) (*results.Results, error) {
	c := config{teardown: DefaultTeardown}
	for _, o := range opts {
		o(&c)
	}
	if c.teardown <= 0 {
		c.teardown = DefaultTeardown
	}
	res := &results.Results{
		Schema:   results.SchemaVersion,
		Scenario: s,
		Env:      results.CaptureEnv(d.Name(), c.version, c.commit),
		Started:  wallNow(),
		Alpha:    c.alpha,
		Suite:    c.suite,
	}
	if sim, ok := d.(Simulator); ok {
		res.Simulated = sim.Simulated()
	}
	rounds := s.Repeat
	if c.rounds != nil {
		rc := *c.rounds // this Run's looks, whoever else uses the option
		rc.last = nil
		c.rounds = &rc
		rounds = c.rounds.Max
	}
	sched := s.Schedule(rounds)
	for _, slot := range sched {
		res.Order = append(res.Order, slot.ID)
	}
	err := func() error {
		// A missing engine or a workload the driver cannot offer fails
		// here, before any run.
		if err := d.Describe(ctx, s, &res.Env); err != nil {
			return err
		}
		perRound := len(s.Variants)
		extra := 0 // retries inserted into res.Order so far
		for i, slot := range sched {
			// A round's first slot (slot.Index counts from 1; a round of
			// one variant is one slot, first and last).
			if (slot.Index-1)%perRound == 0 && c.rounds != nil && c.rounds.stopBefore(res, slot.Round) {
				res.Order = res.Order[:i+extra]
				break
			}
			n, err := runSlot(ctx, &c, s, d, slot, i+extra, res)
			extra += n
			if err != nil {
				return err
			}
			if slot.Index%perRound == 0 && c.rounds != nil && c.rounds.decided(res, slot.Round) {
				res.Order = res.Order[:i+1+extra]
				break
			}
		}
		if c.rounds != nil && res.Stop == nil {
			res.Stop = c.rounds.notDecided(rounds, fmt.Sprintf("not decided within the %d rounds allowed", rounds))
		}
		return nil
	}()
	res.Finished = wallNow()
	res.Complete = err == nil
	if err != nil {
		res.Error = err.Error()
	}
	if c.checkpoint != nil {
		if cerr := c.checkpoint(res); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return res, err
}

// wallNow is the time now as results.json keeps it: the wall clock
// alone. A time.Now keeps the monotonic clock's reading too, and the
// span between two such times is measured on it; read back from the file
// it is measured on the wall clock, which NTP slews. A report made from
// the run in memory and one made from its file must say the same (a
// scenario's 1.5 s rounded to 1 s in one and 2 s in the other).
func wallNow() time.Time { return time.Now().Round(0) }

// runSlot makes the run of slot, which is res.Order[pos], appends it to
// res and checkpoints, reporting progress before and after; an invalid
// run is made again as WithRetries says, each retry's ID inserted into
// res.Order after the attempts before it. It returns the number of
// retries made.
func runSlot(ctx context.Context, c *config, s scenario.Scenario, d Driver, slot scenario.Slot, pos int, res *results.Results) (int, error) {
	v := s.Variants[slot.Variant]
	id := slot.ID
	for retry := 0; ; retry++ {
		if retry > 0 {
			id = fmt.Sprintf("%s-retry%d", slot.ID, retry)
			res.Order = slices.Insert(res.Order, pos+retry, id)
		}
		p := Progress{Index: pos + retry + 1, Total: len(res.Order), ID: id, Variant: v.Name, Rep: slot.Round}
		if c.progress != nil {
			c.progress(p)
		}
		run, err := runOne(ctx, c, s, v, slot.Round, d, id)
		if run != nil {
			run.Rep = slot.Round
			res.Runs = append(res.Runs, *run)
			if c.checkpoint != nil {
				if cerr := c.checkpoint(res); cerr != nil {
					return retry, errors.Join(err, cerr)
				}
			}
		}
		if err != nil {
			return retry, err
		}
		if c.progress != nil {
			p.Run, p.Done = run, true
			c.progress(p)
		}
		if run == nil || run.Valid || len(run.Failed) > 0 || retry == c.retries || ctx.Err() != nil {
			return retry, nil
		}
	}
}

// bring is what d brings up for variant v's run id, with another build's
// binary when v has a Build.
func bring(c *config, s scenario.Scenario, v scenario.Variant, id string) (Bring, error) {
	b := Bring{ID: id, Variant: v, Workers: s.Workers}
	exe, ok := c.builds[v.Build]
	if !ok && v.Build != "" {
		return b, fmt.Errorf("harness: %s: no executable for build %q (see WithBuilds)", id, v.Build)
	}
	b.Exe = exe
	return b, nil
}

// runOne brings variant v up, offers its workload of round
// (scenario.Scenario.WorkloadFor), collects counters and takes the
// variant down, whatever happens. A run interrupted by ctx is not
// returned: a partial run would bias the statistics.
func runOne(ctx context.Context, c *config, s scenario.Scenario, v scenario.Variant, round int, d Driver, id string) (run *results.Run, err error) {
	b, err := bring(c, s, v, id)
	if err != nil {
		return nil, err
	}
	upStart := time.Now()
	dep, err := d.Up(ctx, b)
	if err != nil {
		return nil, err
	}
	bringUp := time.Since(upStart)
	defer func() {
		// Down must run even when ctx is cancelled, with its own deadline;
		// a hard stop (a second Ctrl-C) ends its waits: it kills.
		downCtx, cancel := hardstop.Teardown(ctx, c.teardown)
		defer cancel()
		downStart := time.Now()
		if derr := dep.Down(downCtx); derr != nil {
			err = errors.Join(err, derr)
		}
		if run != nil {
			run.TearDown = time.Since(downStart)
		}
	}()

	// The processes' CPU so far (bring-up, readiness probes), to take
	// from what they report after the load. A driver that cannot tell
	// reports none.
	before, _ := dep.Stats(ctx)
	spec := s.WorkloadFor(v, round)
	// The other lbbench runs on this host are watched over the load: what
	// runs beside the bring-up or the teardown changes no figure.
	endWatch := func() []string { return nil }
	if c.neighbours != nil {
		endWatch = c.neighbours.Watch()
	}
	started := time.Now()
	m, err := dep.Attack(ctx, spec)
	concurrent := endWatch()
	if err != nil {
		return nil, fmt.Errorf("harness: %s: attack: %w", id, err)
	}
	if err := m.Bursts.Fit(s.Workers.Count); err != nil {
		return nil, err
	}
	stats, err := dep.Stats(ctx)
	if err != nil && (len(stats.Dead) == 0 || ctx.Err() != nil) {
		return nil, err
	}
	run = &results.Run{ID: id, Variant: v.Name, Seed: spec.Seed, Started: started.Round(0), Entry: dep.Entry(), BringUp: bringUp, Measurement: *m, Proxy: stats.Proxy, Engine: stats.Engine,
		Server: serverDuring(before.Steal, stats.Steal), Concurrent: concurrent}
	run.Summary = run.Latency.Summarize()
	run.Workers = workerResults(s.Workers.Count, m.ByWorker, stats.Workers)
	run.CPU = cpuDuring(before.CPU, stats.CPU, m.Generator)
	if p, ok := dep.(Placed); ok {
		run.Pods = p.Pods()
	}
	// Judged on everything measured: whether the generator shared the
	// server's CPUs is in the CPU times and the pods' nodes.
	judge(run, s.Validity, spec.WarmupTime())
	if len(stats.Dead) > 0 {
		failed(run, stats.Dead, err)
	}
	return run, nil
}

// cpuDuring is each process's CPU time during the load: after minus
// before, matched by role and name (a process that restarted, whose time
// went down, counts from zero), and the generator's.
func cpuDuring(before, after []results.ProcessCPU, g results.Generator) []results.ProcessCPU {
	var out []results.ProcessCPU
	for _, a := range after {
		d := a.Time
		for _, b := range before {
			if b.Role == a.Role && b.Name == a.Name && b.Time <= a.Time {
				d = a.Time - b.Time
				break
			}
		}
		a.Time = d
		out = append(out, a)
	}
	if g.CPU > 0 {
		out = append(out, results.ProcessCPU{Role: results.RoleGenerator, Name: "generator", Worker: -1, Time: g.CPU})
	}
	return out
}

// serverDuring is the server side's host figures during the load: the
// steal time of each CPU reported both before and after it, after minus
// before (a counter that went down counts as none), summed. Nil when
// either reading is empty (nothing reports it).
func serverDuring(before, after map[int]time.Duration) *results.Server {
	if len(before) == 0 || len(after) == 0 {
		return nil
	}
	var sv results.Server
	for cpu, a := range after {
		b, ok := before[cpu]
		if !ok {
			continue
		}
		sv.CPUs++
		sv.Steal += max(a-b, 0)
	}
	if sv.CPUs == 0 {
		return nil
	}
	return &sv
}

// failed marks run failed: a failed run is a result, recorded and invalid,
// and the scenario goes on. The counters of the processes still alive are
// kept; statsErr, an error reading the others', is one more reason.
func failed(run *results.Run, dead []results.Failure, statsErr error) {
	run.Failed = dead
	run.Valid = false
	var why []string
	for _, f := range dead {
		why = append(why, "failed: "+f.String())
	}
	if statsErr != nil {
		why = append(why, "failed: "+statsErr.Error())
	}
	run.Invalid = append(why, run.Invalid...)
}

// workerResults joins the client's per-worker response counts with the
// workers' own counters.
func workerResults(n int, responses map[int]uint64, stats []results.WorkerStats) []results.Worker {
	out := make([]results.Worker, n)
	for i := range out {
		out[i] = results.Worker{Index: i, Responses: responses[i]}
	}
	for _, st := range stats {
		if st.Index >= 0 && st.Index < n {
			w := &out[st.Index]
			w.Requests, w.Connections, w.MaxQueue = st.Requests, st.Connections, st.MaxQueue
		}
	}
	return out
}

// decided asks Stop after round (from Min on) and records a decision, or
// keeps what the look left undecided.
func (r *Rounds) decided(res *results.Results, round int) bool {
	if round < r.Min || r.Stop == nil || (r.At != nil && !r.At(round)) {
		return false
	}
	return r.look(res, round)
}

// look asks Stop after round and records a decision, or keeps what the
// look left undecided.
func (r *Rounds) look(res *results.Results, round int) bool {
	l := r.Stop(res, round)
	if l.Decided {
		res.Stop = &results.Stop{Rounds: round, MaxRounds: r.Max, Looks: r.Looks, Decided: true, Reason: l.Reason, Judging: r.Judging}
		return true
	}
	r.last = &lastLook{round: round, undecided: l.Undecided}
	return false
}

// lastLook is the last look that did not decide: after which round, and
// what it left undecided.
type lastLook struct {
	round     int
	undecided []string
}

// notDecided is the Stop of a scenario that ran out of rounds or time
// after rounds rounds, saying why (reason) and what the last look left
// undecided.
func (r *Rounds) notDecided(rounds int, reason string) *results.Stop {
	st := &results.Stop{Rounds: rounds, MaxRounds: r.Max, Looks: r.Looks, Reason: reason, Judging: r.Judging}
	if l := r.last; l != nil && l.round == rounds && len(l.undecided) > 0 {
		st.Undecided = l.undecided
		st.Reason += "; undecided at the last look: " + strings.Join(l.undecided, "; ")
	}
	return st
}

// stopBefore says whether round should not start: the time budget would
// be passed by one more round as long as the mean of those made so far.
func (r *Rounds) stopBefore(res *results.Results, round int) bool {
	if r.Budget <= 0 || round <= 1 {
		return false
	}
	elapsed := time.Since(res.Started)
	mean := elapsed / time.Duration(round-1)
	if elapsed+mean <= r.Budget {
		return false
	}
	// The last round made was passed over by the schedule: look there,
	// in place of the scheduled look that will not come.
	if last := round - 1; last >= r.Min && r.Stop != nil && r.At != nil && !r.At(last) && r.look(res, last) {
		return true
	}
	res.Stop = r.notDecided(round-1, fmt.Sprintf("not decided after %d rounds: another round (about %s) would pass the budget of %s", round-1, mean.Round(time.Second), r.Budget))
	return true
}
