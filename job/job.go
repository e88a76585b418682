// Package job is lbbench's main job, behind "lbbench run" and "make
// bench-compare": one scenario run into an output directory. It checks
// every output before the first run, runs the scenario (package harness)
// saving results.json and summary.txt after every run, compares the
// variants (package compare: with each one's baseline build when gating
// a change, or with the first variant for information), judges the
// scenario's claims (package claims), writes the report and its exports
// (package reports), and ends with the exit status CI acts on.
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
	"path/filepath"
	"time"

	"github.com/lbbench/lbbench/baseline"
	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/harness"
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
	// function it returns releases the driver.
	Driver func(ctx context.Context) (harness.Driver, func(), error)
	// Harness are the run loop's options: progress, version, builds.
	Harness []harness.Option
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
	// Inconclusive maps an inconclusive gate: "pass", "fail", or "" for
	// ExitInconclusive.
	Inconclusive string
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
}

// Run runs the job. It returns nil for ExitPass, an *Error for any other
// exit status (a plain error is ExitError), and the results it gathered
// (nil when none: the outputs or the driver were refused).
func Run(ctx context.Context, o Options) (*results.Results, error) {
	output := reports.Output{Dir: o.Out, Saved: true}
	// Every file and folder the scenario will write, checked before the
	// first run.
	if err := output.Preflight(o.Dirs...); err != nil {
		return nil, err
	}
	if o.Baseline != "" {
		cleanup, err := withBaseline(ctx, &o)
		if err != nil {
			return nil, err
		}
		defer cleanup()
	}
	d, release, err := o.Driver(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	announce(o.Stderr, o.Scenario, o.Out)
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
	output.Options = cmp.reportOptions()
	err = output.Write(o.Stdout, res)
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
	return res, outcome(res, cmp, o)
}

// withBaseline builds lbbench at o.Baseline and adds its twin to every
// variant of o.Scenario, with the harness option that runs the build. The
// returned func removes the build.
func withBaseline(ctx context.Context, o *Options) (func(), error) {
	exe, cleanup, err := baseline.Build(ctx, ".", o.Baseline, o.Stderr)
	if errors.Is(err, baseline.ErrNotACommit) {
		return nil, &Error{Code: ExitError, Err: fmt.Errorf("--%w", err)}
	}
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	o.Scenario = baseline.Twins(o.Scenario)
	if err := o.Scenario.Validate(topologies.Catalog()); err != nil {
		cleanup()
		return nil, fmt.Errorf("with the baseline variants: %w", err)
	}
	o.Harness = append(o.Harness, harness.WithBuilds(map[string]string{baseline.BuildName: exe}))
	return cleanup, nil
}

// run runs the scenario on d, checkpointing results.json and summary.txt
// after every run. saved is how many runs results.json holds: the last
// checkpoint that succeeded (-1: none did).
func run(ctx context.Context, o Options, d harness.Driver, output *reports.Output) (res *results.Results, saved int, err error) {
	saved = -1
	opts := append([]harness.Option{
		harness.WithCheckpoint(func(r *results.Results) error {
			if err := output.Checkpoint(r); err != nil {
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
func outcome(res *results.Results, cmp *comparison, o Options) error {
	if n := FailedRuns(res); n > 0 {
		return &Error{Code: ExitFailedRuns, Err: fmt.Errorf("%d of %d runs failed (a process died or stopped answering; see \"invalid runs\" above): they are recorded in %s and left out of every comparison",
			n, len(res.Runs), filepath.Join(o.Out, reports.ResultsFileName))}
	}
	if o.FailOnClaims {
		if n := claims.Failed(claims.Judge(res)); n > 0 {
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

// StoppedEarly is stoppedEarly for another loop that saves results the
// same way ("lbbench model sim").
func StoppedEarly(ctx context.Context, err error, res *results.Results, saved int, path string) error {
	return stoppedEarly(ctx, err, res, saved, path)
}

// announce says what the scenario will run, for how long, and where its
// results go.
func announce(w io.Writer, s scenario.Scenario, out string) {
	if w == nil {
		return
	}
	runs := s.Repeat * len(s.Variants)
	if s.Workload.Deterministic() {
		fmt.Fprintf(w, "lbbench: scenario %s: %d runs (each: %s); results in %s\n",
			s.Name, runs, reports.DeterministicString(s.Workload), out)
		return
	}
	perRun := s.Workload.WarmupTime() + s.Workload.Duration
	fmt.Fprintf(w, "lbbench: scenario %s: %d runs of about %s each (about %s); results in %s\n",
		s.Name, runs, perRun.Round(time.Second), (time.Duration(runs) * (perRun + 2*time.Second)).Round(time.Second), out)
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
	if runErr != nil || !res.Complete {
		return nil, nil
	}
	c := &comparison{gate: o.Baseline != ""}
	var pairs []compare.Pair
	var title, head string
	if c.gate {
		pairs = compare.PairBuilds(res)
		title = fmt.Sprintf("%s: baseline %s vs this build", res.Scenario.Name, o.Baseline)
		head = fmt.Sprintf("\ncomparison with the baseline %s (variant vs variant%s%s):\n", o.Baseline, scenario.BuildSeparator, baseline.BuildName)
	} else {
		if len(res.Scenario.Variants) < 2 || res.Scenario.Workload.Deterministic() {
			// A closed-loop run's latency is response time: comparing
			// variants on it would rank what coordinated omission hides.
			return nil, nil
		}
		first := res.Scenario.Variants[0].Name
		var err error
		if pairs, err = compare.PairWith(res, first); err != nil {
			return nil, err
		}
		title = fmt.Sprintf("%s: variants vs %s", res.Scenario.Name, first)
		head = fmt.Sprintf("\ncomparison with the first variant, %s (for information; the exit status does not depend on it):\n", first)
	}
	var buf bytes.Buffer
	buf.WriteString(head)
	var err error
	c.verdicts, err = reports.Comparison{Pairs: pairs, Options: o.Compare, Calibrate: o.Calibrate, Title: title, Scenario: res.Scenario.Name,
		Dir: o.Out, StepSummary: o.StepSummary}.Write(&buf)
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

// reportOptions shows the verdicts in the HTML report.
func (c *comparison) reportOptions() []reports.Option {
	if c == nil {
		return nil
	}
	return []reports.Option{reports.WithVerdicts(c.verdicts)}
}

// text is the verdict table, nil when nothing was compared.
func (c *comparison) text() []byte {
	if c == nil {
		return nil
	}
	return c.table
}
