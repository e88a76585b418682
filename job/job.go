// Package job is lbbench's main job, behind "lbbench run" and "make
// bench-compare": one scenario run into an output directory. It checks
// every output before the first run, runs the scenario (package harness)
// saving results.json and summary.txt after every run, compares the
// variants (package compare: with each one's baseline build when gating
// a change, or with the first variant for information), judges the
// scenario's claims (package claims), writes the report and its exports
// (package reports), and ends with the exit status CI acts on.
//
// It is also where every report is computed, for every command that
// writes one: Report builds the one document (summaries, judged claims,
// bursts beside the model) that each format of package reports only
// formats; Comparison and CalibrateVariants judge a comparison that
// reports.Comparison writes; JudgeSuite judges a claims suite. Package
// reports calls no judging function of compare or claims
// (internal/archtest).
//
// The command line turns flags into Options and calls Run; everything a
// test of the job's outcome needs is here, not in cmd.
package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/baseline"
	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/internal/neighbours"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// Exit statuses of a job (README, "Exit status").
const (
	// ExitPass: every run finished, and the verdict (when gating) passed.
	ExitPass = 0
	// ExitRegression: the gate's verdict is a regression (or inconclusive,
	// counted as one).
	ExitRegression = 1
	// ExitError: a usage or infrastructure error; what finished is saved.
	ExitError = 2
	// ExitInconclusive: the gate could not decide.
	ExitInconclusive = 3
	// ExitClaims: a claim of the scenario fails (with FailOnClaims).
	ExitClaims = 4
	// ExitFailedRuns: runs failed because a process died (or hung); they
	// are recorded and left out of every comparison.
	ExitFailedRuns = 5
	// ExitInterrupted: Ctrl-C; what finished is saved.
	ExitInterrupted = 130
)

// Error is a job that did not end in ExitPass: its exit status and why.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Options is one job. Scenario, Out and Driver are required.
type Options struct {
	// Scenario is the scenario to run, defaulted and validated.
	Scenario scenario.Scenario
	// Out is the output directory.
	Out string
	// Dirs are the directories under Out the driver will write (logs,
	// raw, generators), checked with the files before anything runs.
	Dirs []string
	// Driver makes the driver, once the outputs have been checked. The
	// function it returns releases the driver. Unused with Simulate.
	Driver func(ctx context.Context) (harness.Driver, func(), error)
	// Simulate runs the scenario in the model's simulator (Simulator)
	// instead of on a Driver, through the same loop: the same schedule,
	// round workloads, checkpoints, progress and interruption. A scenario
	// the model cannot simulate is refused before anything is written
	// (an error wrapping model.ErrUnsupported). The tables are headed
	// SimNote, and the variants are not compared (lbbench compare reads
	// simulated results as it reads measured ones).
	Simulate bool
	// Harness are the run loop's options: progress, version, builds.
	Harness []harness.Option
	// builds are the executables of the builds compared (--baseline):
	// harness.WithBuilds's map, set by withBaseline.
	builds map[string]string
	// Compare configures the comparison; Calibrate runs an A/A
	// calibration of the baselines first.
	Compare   compare.Options
	Calibrate bool
	// Baseline, a git ref of the repository in the working directory,
	// gates a change: lbbench is built at that ref, every variant gets a
	// twin that runs that build (variant@base), the two are interleaved,
	// each variant is compared with its twin, and the verdict is the exit
	// status. Without it the variants are compared with the first, for
	// information.
	Baseline string
	// InjectSlowdown, with Baseline, makes this build's variants f times
	// slower (scenario.Variant.ServiceScale) and leaves the baseline's as
	// they are: a known regression, to check that the gate fails it.
	// Zero means none.
	InjectSlowdown float64
	// InjectCost, with Baseline, makes this build's variants spend more
	// CPU per request: it maps a role (InjectRoles: the built-in proxy,
	// the built-in workers) to the CPU time it spends in busy work on
	// every request (scenario.Variant.ProxyCost, WorkerCost), in every
	// variant that runs it (at least one must), and leaves the baseline's
	// as they are: a known cost regression, to check that a gate judging
	// CPU per request fails it. Nil or zero means none.
	InjectCost map[string]time.Duration
	// Inconclusive maps an inconclusive gate: "pass", "fail", or "" for
	// ExitInconclusive.
	Inconclusive string
	// UntilDecided runs round after round until the comparison decides
	// every judged metric (pass or fail) and every statistical claim of
	// the scenario (claims.Statistical) holds or fails, from
	// compare.MinRounds rounds to MaxRounds, and not past Budget (zero:
	// none), instead of the scenario's Repeat rounds. Each look gets its
	// share of the alpha (compare.Options.Look, stats.SpendAlpha), the
	// comparison's and the claims' family's alike, so looking after every
	// round keeps the false-alarm rate at alpha. A scenario with claims
	// but nothing that more rounds decide (no comparison, no statistical
	// claim) makes its Repeat rounds, with a note on Stderr.
	UntilDecided bool
	MaxRounds    int
	Budget       time.Duration
	// Looks, when positive, looks only that many times, after rounds
	// spread evenly up to MaxRounds (compare.LookRounds): each look gets a
	// larger share of alpha than one after every round would. Zero: a
	// look after every round from compare.MinRounds.
	Looks int
	// FailOnClaims makes a failing claim the exit status (ExitClaims).
	FailOnClaims bool
	// StepSummary, when set, is a file the comparison's markdown is
	// appended to ($GITHUB_STEP_SUMMARY).
	StepSummary string
	// Stdout gets the summary table, the comparison and where the files
	// are; Stderr the opening line and notices.
	Stdout, Stderr io.Writer
	// AfterRuns, if set, is called once the runs are over, before
	// anything is printed: it ends a progress display's last line.
	AfterRuns func()
	// Neighbours, when set, is the directory of the registry of lbbench
	// runs on this host (package neighbours; neighbours.Dir()): the job
	// registers there from its start (a baseline's build included) to its
	// end, says on Stderr which other runs are registered when it starts,
	// and every run records the other runs there during its load
	// (results.Run.Concurrent), which makes it invalid unless the
	// scenario's validity.allow_concurrent. Empty: not watched (the
	// driver does not measure on this host). Unused with Simulate.
	Neighbours string
	// Suite, when set, is the claims suite the scenario is run as one
	// part of (run --suite, claims.SuiteShare): Compare.Alpha is then its
	// share of the suite's level, the level of the run's whole family.
	// The results record both (results.Results.Alpha, Suite).
	Suite *results.Suite
}

// Run runs the job. It returns nil for ExitPass, an *Error for any other
// exit status (a plain error is ExitError), and the results it gathered
// (nil when none: the outputs or the driver were refused).
func Run(ctx context.Context, o Options) (*results.Results, error) {
	output := reports.Output{Dir: o.Out, Saved: true}
	if o.Simulate {
		if err := model.Simulable(o.Scenario); err != nil {
			return nil, err
		}
		output.Note = SimNote
		o.Driver = func(context.Context) (harness.Driver, func(), error) { return Simulator{}, func() {}, nil }
	}
	// Every file and folder the scenario will write, checked before the
	// first run.
	if err := output.Preflight(o.Dirs...); err != nil {
		return nil, err
	}
	if o.InjectSlowdown != 0 && o.Baseline == "" {
		return nil, &Error{Code: ExitError, Err: errors.New("--inject-slowdown slows this build against its baseline: give --baseline REF too")}
	}
	if err := o.checkInjectCost(); err != nil {
		return nil, err
	}
	var beside []neighbours.Run
	if o.Neighbours != "" && !o.Simulate {
		reg, others, err := neighbours.Join(o.Neighbours, neighbours.Run{PID: os.Getpid(), Scenario: o.Scenario.Name, Started: time.Now()})
		if err != nil {
			notef(o.Stderr, "cannot tell whether other lbbench runs share this host, so runs made beside one are not marked: %v", err)
		} else {
			defer reg.Leave()
			beside = others
			o.Harness = append(o.Harness, harness.WithNeighbours(reg))
		}
	}
	if o.Baseline != "" {
		cleanup, err := withBaseline(ctx, &o)
		if err != nil {
			return nil, err
		}
		defer cleanup()
	}
	// The comparison and the claims are judged at one level: the
	// comparison's (run --alpha, or the suite's share), as one family
	// unless the claims are a family alone (a suite's part, SharesFamily).
	o.Harness = append(o.Harness, harness.WithLevel(o.Compare.WithDefaults().Alpha, o.Suite))
	if o.UntilDecided {
		if err := o.untilDecided(); err != nil {
			return nil, err
		}
	}
	d, release, err := o.Driver(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if o.builds != nil {
		if d.Name() == "local" {
			// This build's servers run from a copy of it, beside the
			// baseline's: run from the generator's own file they would
			// share its code in the page cache and the CPUs' caches,
			// which the baseline's servers cannot, and A/A gates
			// favoured this build (docs/verdicts.md, "One binary each").
			self, err := baseline.CopySelf(filepath.Dir(o.builds[baseline.BuildName]))
			if err != nil {
				return nil, fmt.Errorf("--baseline: %w", err)
			}
			o.builds[""] = self
		}
		o.Harness = append(o.Harness, harness.WithBuilds(o.builds))
	}
	announce(o.Stderr, o)
	warnBeside(o.Stderr, beside, o.Scenario.Validity)
	res, saved, runErr := run(ctx, o, d, &output)
	if o.AfterRuns != nil {
		o.AfterRuns()
	}
	if res == nil {
		return nil, runErr
	}
	cmp, err := compareRun(res, runErr, o)
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	output.Comparison = cmp.text()
	if cmp == nil && res.Stop != nil {
		// Until decided on the claims alone: say how it stopped.
		output.Comparison = []byte("\n" + stopLine(res.Stop))
	}
	doc, err := Report(res, cmp.verdictsOrNil(), nil)
	if err == nil {
		err = output.Write(o.Stdout, doc)
	}
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err == nil && !output.Saved {
		// Write saved results.json after all (the checkpoint's failure
		// passed).
		saved = len(res.Runs)
	}
	if runErr != nil {
		return res, stoppedEarly(ctx, runErr, res, saved, output.ResultsPath())
	}
	return res, outcome(doc, cmp, o)
}

// withBaseline builds lbbench at o.Baseline and adds its twin to every
// variant of o.Scenario, with the harness option that runs the build. The
// returned func removes the build.
// The scenario with its twins and this build's injections is checked
// before the build, so that an injection the scenario cannot take (a
// proxy cost for nginx) is refused at once.
func withBaseline(ctx context.Context, o *Options) (func(), error) {
	s := o.injected(baseline.Twins(o.Scenario))
	if err := s.Validate(topologies.Catalog()); err != nil {
		return nil, fmt.Errorf("with the baseline variants: %w", err)
	}
	exe, cleanup, err := baseline.Build(ctx, ".", o.Baseline, o.Stderr)
	if errors.Is(err, baseline.ErrNotACommit) {
		return nil, &Error{Code: ExitError, Err: fmt.Errorf("--%w", err)}
	}
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	o.Scenario = s
	o.builds = map[string]string{baseline.BuildName: exe}
	return cleanup, nil
}

// InjectRoles are the roles Options.InjectCost may name: the built-in
// proxy and the built-in workers, as the metric cpu_per_request(ROLE)
// names them.
func InjectRoles() []string { return []string{topologies.RoleProxy, topologies.RoleWorkers} }

// CheckInjectCost reports what is wrong with injecting d of CPU per
// request into role: a role not of InjectRoles, or d negative or past
// busywork.Max.
func CheckInjectCost(role string, d time.Duration) error {
	if !slices.Contains(InjectRoles(), role) {
		return fmt.Errorf("unknown role %q (known: %s)", role, strings.Join(InjectRoles(), ", "))
	}
	if d < 0 || d > busywork.Max {
		return fmt.Errorf("%s: the CPU time per request must be between 0 and %v, got %v", role, busywork.Max, d)
	}
	return nil
}

// checkInjectCost checks o.InjectCost, which needs a baseline.
func (o Options) checkInjectCost() error {
	some := false
	for _, role := range slices.Sorted(maps.Keys(o.InjectCost)) {
		d := o.InjectCost[role]
		if err := CheckInjectCost(role, d); err != nil {
			return &Error{Code: ExitError, Err: fmt.Errorf("--inject-cost: %w", err)}
		}
		some = some || d != 0
	}
	if some && o.Baseline == "" {
		return &Error{Code: ExitError, Err: errors.New("--inject-cost makes this build cost more than its baseline: give --baseline REF too")}
	}
	for _, role := range InjectRoles() {
		if d := o.InjectCost[role]; d != 0 && !slices.ContainsFunc(o.Scenario.Variants, func(v scenario.Variant) bool { return spends(o.Scenario, v, role) }) {
			return &Error{Code: ExitError, Err: fmt.Errorf("--inject-cost %s=%v: no variant of scenario %s runs the built-in %s to spend it", role, d, o.Scenario.Name, map[string]string{topologies.RoleProxy: "proxy", topologies.RoleWorkers: "worker"}[role])}
		}
	}
	return nil
}

// spends says whether variant v of s runs the built-in role (proxy or
// workers) that an injected cost of that role is spent by.
func spends(s scenario.Scenario, v scenario.Variant, role string) bool {
	if role == topologies.RoleProxy {
		return v.BuiltinProxy()
	}
	return s.BuiltinWorkers(v)
}

// injections describes what injected makes of this build's variants, ""
// when nothing.
func (o Options) injections() string {
	var in []string
	if f := o.InjectSlowdown; f != 0 && f != 1 {
		in = append(in, fmt.Sprintf("service times ×%g", f))
	}
	for _, role := range InjectRoles() {
		if d := o.InjectCost[role]; d != 0 {
			in = append(in, fmt.Sprintf("%s +%v of CPU per request", role, d))
		}
	}
	return strings.Join(in, ", ")
}

// injected is s with this build's variants (those of no other Build)
// slowed by InjectSlowdown and spending InjectCost more, each role's cost
// in the variants that run the built-in one (the proxy's, say, not in a
// variant without a proxy or with nginx); the baseline's are left as they
// are.
func (o Options) injected(s scenario.Scenario) scenario.Scenario {
	s.Variants = slices.Clone(s.Variants)
	for i := range s.Variants {
		v := &s.Variants[i]
		if v.Build != "" {
			continue
		}
		if f := o.InjectSlowdown; f != 0 {
			v.ServiceScale = f
		}
		if d := o.InjectCost[topologies.RoleProxy]; d != 0 && spends(s, *v, topologies.RoleProxy) {
			v.ProxyCost = d
		}
		if d := o.InjectCost[topologies.RoleWorkers]; d != 0 && spends(s, *v, topologies.RoleWorkers) {
			v.WorkerCost = d
		}
	}
	return s
}

// DefaultMaxRounds is the most rounds UntilDecided makes when
// Options.MaxRounds is zero.
const DefaultMaxRounds = 10

// untilDecided adds the run loop's option that stops when the comparison
// (when one applies: a baseline, or two or more open-loop variants) and
// every statistical claim of the scenario (claims.Statistical, model
// claims included) are decided at the look. A scenario with claims but
// neither a comparison nor a statistical claim (its claims are exact
// counts, or its workload is deterministic and it has no model claim)
// makes its Repeat rounds, with a note on Stderr: more rounds decide
// nothing there. One with neither a comparison nor claims is
// refused.
func (o *Options) untilDecided() error {
	if o.MaxRounds == 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.MaxRounds < compare.MinRounds || o.MaxRounds > scenario.MaxRepeat {
		return &Error{Code: ExitError, Err: fmt.Errorf("--max-rounds: must be between %d (the fewest rounds a paired verdict decides on) and %d, got %d", compare.MinRounds, scenario.MaxRepeat, o.MaxRounds)}
	}
	if o.Budget < 0 {
		return &Error{Code: ExitError, Err: fmt.Errorf("--budget: must not be negative, got %s", o.Budget)}
	}
	if o.Looks < 0 {
		return &Error{Code: ExitError, Err: fmt.Errorf("--looks: must not be negative, got %d", o.Looks)}
	}
	s := o.Scenario
	compared := o.Baseline != "" || (len(s.Variants) >= 2 && !s.Workload.Deterministic())
	stat := claims.Statistical(s)
	// A part of a claims suite: its claims are the question and their
	// family alone the stopping rule; the comparison of its variants is
	// judged at the end, apart, for information (recorded in judging all
	// the same, for lbbench compare to judge it at the same look).
	alone := o.Suite != nil && o.Suite.ClaimsAlone
	comparing := compared && !alone
	if !comparing && len(stat) == 0 {
		if len(s.Claims) == 0 {
			return &Error{Code: ExitError, Err: errors.New("--until-decided stops when a comparison and the scenario's statistical claims are decided: give --baseline REF, or a scenario of two or more open-loop variants or with claims")}
		}
		why := "its claims are exact counts, true or false on every run"
		if s.Workload.Deterministic() {
			why = "its workload is deterministic (" + reports.DeterministicString(s.Workload) + "), each run repeating the last"
		}
		what := "and no comparison"
		if alone {
			what = "and in a suite its comparison of variants does not stop it"
		}
		notef(o.Stderr, "--until-decided: nothing in scenario %s that more rounds decide (%s, %s): it runs its %d rounds", s.Name, why, what, s.Repeat)
		o.UntilDecided = false
		return nil
	}
	judging := &results.Judging{}
	if compared {
		c := o.Compare.WithDefaults()
		judging.Metrics, judging.Tolerances, judging.Alpha = c.Metrics, c.Tolerances, c.Alpha
	}
	if len(stat) > 0 {
		judging.Claims, judging.ClaimsAlpha = stat, o.Compare.WithDefaults().Alpha
	}
	judging.OneFamily = !alone
	decided := "every judged metric"
	switch {
	case comparing && len(stat) > 0:
		decided = "every judged metric and every statistical claim"
	case len(stat) > 0:
		decided = "every statistical claim"
	}
	sched := compare.LookRounds(o.MaxRounds, o.Looks)
	o.Harness = append(o.Harness, harness.WithRounds(harness.Rounds{
		Min: compare.MinRounds, Max: o.MaxRounds, Budget: o.Budget, Judging: judging,
		At: func(round int) bool { return slices.Contains(sched, round) }, Looks: o.Looks,
		Stop: func(res *results.Results, round int) harness.Look {
			return o.lookAfter(res, round, comparing, stat, decided)
		},
	}))
	return nil
}

// lookAfter is the look after round of a run until decided: decided when
// the comparison (when comparing) and the statistical claims stat are
// (what says which, in its reason), or, with a baseline, as soon as a
// verdict fails: a regression is the gate's answer whatever the rest
// would be, and more rounds would only cost the time.
func (o *Options) lookAfter(res *results.Results, round int, comparing bool, stat []string, decided string) harness.Look {
	open, failed := o.undecidedAt(res, round, comparing, stat)
	look, looks := compare.Looks(round, o.MaxRounds, o.Looks)
	if len(failed) > 0 && len(open) > 0 && o.Baseline != "" {
		return harness.Look{Decided: true, Reason: fmt.Sprintf("a regression decided after %d rounds (look %d of at most %d): %s failed; the rest was left undecided",
			round, look, looks, strings.Join(failed, ", "))}
	}
	if len(open) > 0 {
		return harness.Look{Undecided: open}
	}
	return harness.Look{Decided: true, Reason: fmt.Sprintf("%s decided after %d rounds (look %d of at most %d)", decided, round, look, looks)}
}

// undecidedAt is what the look after round leaves undecided of res's
// comparison (when comparing) and its statistical claims (stat), judged
// as one Holm family at that look's share of the level: each inconclusive
// verdict as "METRIC of VARIANT vs BASELINE" (or the comparison as a
// whole when it gave no verdict), each undecided claim as "claim CHECK".
//
// failed names the verdicts that look failed, the same way: with a
// baseline, one is the gate's answer (a regression) whatever the others
// would be, and the run stops there.
func (o *Options) undecidedAt(res *results.Results, round int, comparing bool, stat []string) (open, failed []string) {
	var others []float64 // the comparison's members of the claims' family
	if comparing {
		var claimPs []float64
		if len(res.Scenario.Claims) > 0 {
			claimPs = claims.PValues(res)
		}
		vs, err := o.verdictsAt(res, round, claimPs)
		switch {
		case err != nil:
			open = append(open, "the comparison: "+err.Error())
		case len(vs) == 0:
			open = append(open, "the comparison: no verdict yet")
		}
		for _, v := range vs {
			switch v.Outcome {
			case compare.Inconclusive:
				open = append(open, fmt.Sprintf("%s of %s vs %s", v.Metric, v.Variant, v.Baseline))
			case compare.Fail:
				failed = append(failed, fmt.Sprintf("%s of %s vs %s", v.Metric, v.Variant, v.Baseline))
			}
		}
		others = compare.TestPs(vs)
	}
	if len(stat) > 0 {
		for _, c := range claims.UndecidedAt(res, round, o.MaxRounds, o.Looks, claims.Options{Others: others}) {
			open = append(open, "claim "+c)
		}
	}
	return open, failed
}

// verdictsAt is the comparison of res at the look after round, in one
// family with the claims whose p-values are claimPs.
func (o *Options) verdictsAt(res *results.Results, round int, claimPs []float64) ([]compare.Verdict, error) {
	pairs, _, _, err := pairsFor(res, *o)
	if err != nil {
		return nil, err
	}
	c := o.lookAt(round)
	c.Others = claimPs
	return verdicts(pairs, c)
}

// lookAt is o's comparison at the look after round (until decided), or
// as it is (a fixed number of rounds).
func (o Options) lookAt(round int) compare.Options {
	c := o.Compare
	if o.UntilDecided {
		c.Look, c.MaxLooks = compare.Looks(round, o.MaxRounds, o.Looks)
	}
	return c
}

// run runs the scenario on d, checkpointing results.json and summary.txt
// after every run. saved is how many runs results.json holds: the last
// checkpoint that succeeded (-1: none did).
func run(ctx context.Context, o Options, d harness.Driver, output *reports.Output) (res *results.Results, saved int, err error) {
	saved = -1
	opts := append([]harness.Option{
		harness.WithCheckpoint(func(r *results.Results) error {
			doc, err := Report(r, nil, nil)
			if err == nil {
				err = output.Checkpoint(doc)
			}
			if err != nil {
				output.Saved = false
				return err
			}
			saved, output.Saved = len(r.Runs), true
			return nil
		}),
	}, o.Harness...)
	res, err = harness.Run(ctx, o.Scenario, d, opts...)
	return res, saved, err
}

// outcome is the exit status of a job whose scenario finished: failed
// runs first, then failing claims (with FailOnClaims), then the gate's
// verdict.
func outcome(doc *reports.Doc, cmp *comparison, o Options) error {
	res := doc.Results
	if n := FailedRuns(res); n > 0 {
		return &Error{Code: ExitFailedRuns, Err: fmt.Errorf("%d of %d runs failed (a process died or stopped answering; see \"invalid runs\" above): they are recorded in %s and left out of every comparison",
			n, len(res.Runs), filepath.Join(o.Out, reports.ResultsFileName))}
	}
	if o.FailOnClaims {
		if n := claims.Failed(doc.Claims); n > 0 {
			return &Error{Code: ExitClaims, Err: fmt.Errorf("%d of %d claims fail (see the claims in %s)", n, len(res.Scenario.Claims), o.Out)}
		}
	}
	if cmp == nil || !cmp.gate {
		return nil
	}
	return VerdictExit(cmp.verdicts, o.Inconclusive)
}

// VerdictExit maps the overall verdict to an exit status: nil for pass,
// ExitRegression for a regression, ExitInconclusive for inconclusive
// unless inconclusive ("pass" or "fail") maps it.
func VerdictExit(vs []compare.Verdict, inconclusive string) error {
	switch compare.Overall(vs) {
	case compare.Pass:
		return nil
	case compare.Fail:
		return &Error{Code: ExitRegression, Err: errors.New("verdict: regression")}
	}
	switch inconclusive {
	case "pass":
		return nil
	case "fail":
		return &Error{Code: ExitRegression, Err: errors.New("verdict: inconclusive, counted as a failure (--inconclusive=fail)")}
	}
	return &Error{Code: ExitInconclusive, Err: errors.New("verdict: inconclusive: more runs needed (exit 3; --inconclusive=pass|fail maps it)")}
}

// FailedRuns counts the runs during which a process died.
func FailedRuns(res *results.Results) int {
	n := 0
	for _, r := range res.Runs {
		if len(r.Failed) > 0 {
			n++
		}
	}
	return n
}

// stoppedEarly is the error of a scenario that stopped early: exit status
// 130 after Ctrl-C, and in any case how many runs finished and how many of
// them results.json at path holds (saved; -1 when nothing could be saved).
func stoppedEarly(ctx context.Context, err error, res *results.Results, saved int, path string) error {
	what := fmt.Sprintf("%d of %d runs saved in %s", saved, len(res.Order), path)
	switch {
	case saved < 0:
		what = fmt.Sprintf("%d of %d runs finished, none saved: %s could not be written", len(res.Runs), len(res.Order), path)
	case saved < len(res.Runs):
		what = fmt.Sprintf("%d of %d runs finished, only %d saved in %s", len(res.Runs), len(res.Order), saved, path)
	}
	if ctx.Err() != nil {
		return &Error{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %s", what)}
	}
	return fmt.Errorf("%w (%s)", err, what)
}

// announce says what the scenario will run, for how long, and where its
// results go.
func announce(w io.Writer, o Options) {
	if w == nil {
		return
	}
	s := o.Scenario
	runs := fmt.Sprintf("%d runs", s.Repeat*len(s.Variants))
	if o.Simulate {
		fmt.Fprintf(w, "lbbench: scenario %s: %s, simulated; results in %s\n", s.Name, runs, o.Out)
		return
	}
	rounds := s.Repeat
	if o.UntilDecided {
		runs = fmt.Sprintf("rounds of %d runs until decided (%d to %d rounds", len(s.Variants), compare.MinRounds, o.MaxRounds)
		if o.Budget > 0 {
			runs += fmt.Sprintf(", within %s", o.Budget)
		}
		runs += ")"
		rounds = compare.MinRounds
	}
	if s.Workload.Deterministic() {
		fmt.Fprintf(w, "lbbench: scenario %s: %s (each: %s); results in %s\n", s.Name, runs, reports.DeterministicString(s.Workload), o.Out)
	} else {
		perRun := s.Workload.WarmupTime() + s.Workload.Duration
		fmt.Fprintf(w, "lbbench: scenario %s: %s of about %s each (%sabout %s); results in %s\n",
			s.Name, runs, perRun.Round(time.Second), map[bool]string{true: "at least ", false: ""}[o.UntilDecided],
			(time.Duration(rounds*len(s.Variants)) * (perRun + 2*time.Second)).Round(time.Second), o.Out)
	}
	if in := o.injections(); in != "" && o.Baseline != "" {
		fmt.Fprintf(w, "lbbench: injected into this build's variants, not the baseline's: %s\n", in)
	}
}

// A registration tells the run loop of the other runs on this host.
var _ harness.Neighbours = (*neighbours.Registration)(nil)

// warnBeside says on w that other lbbench runs are running on this host
// as the job starts, and what that does to its runs.
func warnBeside(w io.Writer, others []neighbours.Run, v scenario.Validity) {
	if len(others) == 0 {
		return
	}
	what, it := "another lbbench run is", "it"
	if len(others) > 1 {
		what, it = fmt.Sprintf("%d other lbbench runs are", len(others)), "them"
	}
	names := make([]string, len(others))
	for i, r := range others {
		names[i] = r.String()
	}
	effect := "every run made beside " + it + " is invalid (validity.allow_concurrent keeps them)"
	if v.AllowConcurrent {
		effect = "every run made beside " + it + " records " + it + " (concurrent in results.json) and stays valid (validity.allow_concurrent)"
	}
	notef(w, "WARNING: %s running on this host (%s): both measure a shared machine; %s", what, strings.Join(names, "; "), effect)
}

// notef prints a notice on w, when there is one.
func notef(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "lbbench: "+format+"\n", args...)
	}
}

// comparison is the comparison at the end of a job. A nil *comparison
// compared nothing.
type comparison struct {
	verdicts []compare.Verdict
	table    []byte
	gate     bool
}

// compareRun compares the runs of a finished scenario and writes the
// comparison's files into o.Out: with Gate, every variant against its
// baseline build; otherwise every variant against the first, for
// information. It compares nothing when the scenario did not complete
// (runErr) or has a single variant.
func compareRun(res *results.Results, runErr error, o Options) (*comparison, error) {
	if runErr != nil || !res.Complete || o.Simulate {
		return nil, nil
	}
	c := &comparison{gate: o.Baseline != ""}
	if !c.gate && (len(res.Scenario.Variants) < 2 || res.Scenario.Workload.Deterministic()) {
		// A closed-loop run's latency is response time: comparing
		// variants on it would rank what coordinated omission hides.
		return nil, nil
	}
	pairs, title, head, err := pairsFor(res, o)
	if err != nil {
		return nil, err
	}
	copts := o.Compare
	if res.Stop != nil {
		copts = o.lookAt(res.Stop.Rounds)
	}

	var buf bytes.Buffer
	buf.WriteString(head)
	if st := res.Stop; st != nil {
		buf.WriteString(stopLine(st))
	}
	c.verdicts, err = Comparison{Pairs: pairs, Options: copts, Calibrate: o.Calibrate, Title: title, Scenario: res.Scenario.Name,
		Dir: o.Out, StepSummary: o.StepSummary, Claims: familyOf(res), Remade: harness.Remade(res)}.Write(&buf)
	if errors.Is(err, reports.ErrOneSided) {
		// A run's own comparison says so and goes on: the run's exit
		// status comes from its runs and verdicts. `lbbench compare` is
		// where a one-sided comparison fails.
		fmt.Fprintf(&buf, "\nnote: %v\n", err)
		err = nil
	}
	c.table = buf.Bytes()
	return c, err
}

// stopLine says how a run made until decided stopped: the rounds made,
// the most allowed, and why.
func stopLine(st *results.Stop) string {
	return fmt.Sprintf("rounds: %d of at most %d: %s\n", st.Rounds, st.MaxRounds, st.Reason)
}

// pairsFor pairs the runs of res for the job's comparison: with a
// baseline, every variant against its baseline build; otherwise every
// variant against the first. title and head name the comparison.
func pairsFor(res *results.Results, o Options) (pairs []compare.Pair, title, head string, err error) {
	if o.Baseline != "" {
		title = fmt.Sprintf("%s: baseline %s vs this build", res.Scenario.Name, o.Baseline)
		head = fmt.Sprintf("\ncomparison with the baseline %s (variant vs variant%s%s):\n", o.Baseline, scenario.BuildSeparator, baseline.BuildName)
		return compare.PairBuilds(res), title, head, nil
	}
	first := res.Scenario.Variants[0].Name
	if pairs, err = compare.PairWith(res, first); err != nil {
		return nil, "", "", err
	}
	title = fmt.Sprintf("%s: variants vs %s", res.Scenario.Name, first)
	head = fmt.Sprintf("\ncomparison with the first variant, %s (for information; the exit status does not depend on it):\n", first)
	return pairs, title, head, nil
}

// verdictsOrNil are the verdicts the report shows: nil when nothing was
// compared.
func (c *comparison) verdictsOrNil() []compare.Verdict {
	if c == nil {
		return nil
	}
	return c.verdicts
}

// text is the verdict table, nil when nothing was compared.
func (c *comparison) text() []byte {
	if c == nil {
		return nil
	}
	return c.table
}
