package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lbbench/lbbench/baseline"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// prepareCompare checks the comparison flags of "run" before anything runs
// and, with --baseline, builds the baseline binary and adds a twin of every
// variant that runs it. It returns the harness options that map the build
// to its binary and a cleanup that removes the build.
func prepareCompare(ctx context.Context, s *scenario.Scenario, o runOptions, stderr io.Writer) ([]harness.Option, func(), error) {
	nothing := func() {}
	if _, err := o.compare.options(); err != nil {
		return nil, nothing, usageError("%w", err)
	}
	if o.baseline == "" {
		return nil, nothing, nil
	}
	exe, cleanup, err := baseline.Build(ctx, ".", o.baseline, stderr)
	if errors.Is(err, baseline.ErrNotACommit) {
		return nil, nothing, usageError("--%w", err)
	}
	if err != nil {
		return nil, nothing, fmt.Errorf("--%w", err)
	}
	*s = baseline.Twins(*s)
	if err := s.Validate(topologies.Catalog()); err != nil {
		cleanup()
		return nil, nothing, fmt.Errorf("with the baseline variants: %w", err)
	}
	return []harness.Option{harness.WithBuilds(map[string]string{baseline.BuildName: exe})}, cleanup, nil
}

// runComparison is the comparison at the end of "lbbench run": with
// --baseline, every variant against its baseline build, which decides the
// exit status; otherwise every variant against the first, for information.
// A nil *runComparison compared nothing.
type runComparison struct {
	verdicts     []compare.Verdict
	table        []byte
	gate         bool
	inconclusive string
}

// compareRun compares the runs of a finished scenario and writes the
// comparison's files into out. It compares nothing when the scenario did
// not complete (runErr) or has a single variant.
func compareRun(res *results.Results, runErr error, o runOptions, out string) (*runComparison, error) {
	if runErr != nil || !res.Complete {
		return nil, nil
	}
	copts, err := o.compare.options()
	if err != nil {
		return nil, err
	}
	c := &runComparison{gate: o.baseline != "", inconclusive: o.compare.inconclusive}
	var pairs []compare.Pair
	var title string
	if c.gate {
		pairs = compare.PairBuilds(res)
		title = fmt.Sprintf("%s: baseline %s vs this build", res.Scenario.Name, o.baseline)
	} else {
		if len(res.Scenario.Variants) < 2 || res.Scenario.Workload.Deterministic() {
			// A closed-loop run's latency is response time: comparing
			// variants on it would rank what coordinated omission hides.
			return nil, nil
		}
		first := res.Scenario.Variants[0].Name
		if pairs, err = compare.PairWith(res, first); err != nil {
			return nil, err
		}
		title = fmt.Sprintf("%s: variants vs %s", res.Scenario.Name, first)
	}
	var buf bytes.Buffer
	if c.gate {
		fmt.Fprintf(&buf, "\ncomparison with the baseline %s (variant vs variant@%s):\n", o.baseline, baseline.BuildName)
	} else {
		fmt.Fprintf(&buf, "\ncomparison with the first variant, %s (for information; the exit status does not depend on it):\n", pairs[0].Baseline)
	}
	c.verdicts, err = reports.Comparison{Pairs: pairs, Options: copts, Calibrate: o.compare.calibrate, Title: title, Scenario: res.Scenario.Name,
		Dir: out, StepSummary: os.Getenv("GITHUB_STEP_SUMMARY")}.Run(&buf)
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
func (c *runComparison) reportOptions() []reports.Option {
	if c == nil {
		return nil
	}
	return []reports.Option{reports.WithVerdicts(c.verdicts)}
}

// text is the verdict table, nil when nothing was compared.
func (c *runComparison) text() []byte {
	if c == nil {
		return nil
	}
	return c.table
}

// exit is the run's result: the verdict's exit status with --baseline,
// nil otherwise.
func (c *runComparison) exit() error {
	if c == nil || !c.gate {
		return nil
	}
	return verdictExit(c.verdicts, c.inconclusive)
}
