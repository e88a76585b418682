package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// baselineBuild names the baseline build of "run --baseline" among the
// variants (topologies.Variant.Build): variant X runs this binary, variant
// X@base the binary built from the baseline ref.
const baselineBuild = "base"

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
	exe, cleanup, err := buildBaseline(ctx, ".", o.baseline, stderr)
	if err != nil {
		return nil, nothing, err
	}
	*s = withBaseline(*s)
	if err := s.Validate(topologies.Catalog()); err != nil {
		cleanup()
		return nil, nothing, fmt.Errorf("with the baseline variants: %w", err)
	}
	return []harness.Option{harness.WithBuilds(map[string]string{baselineBuild: exe})}, cleanup, nil
}

// withBaseline returns s with every variant followed by its twin that runs
// the baseline build, named NAME@base. The harness interleaves all of them
// in a randomized balanced order, repetition by repetition.
func withBaseline(s scenario.Scenario) scenario.Scenario {
	vs := make([]scenario.Variant, 0, 2*len(s.Variants))
	for _, v := range s.Variants {
		b := v
		b.Name = v.Name + reports.BuildSeparator + baselineBuild
		b.Build = baselineBuild
		vs = append(vs, v, b)
	}
	s.Variants = vs
	return s
}

// buildBaseline builds lbbench as of git ref ref of the repository holding
// dir into a new temporary directory, without touching the repository:
// "git archive" exports the ref's tree, "go build" (CGO_ENABLED=0) builds
// ./cmd/lbbench from it. It returns the binary and a func that removes the
// directory.
func buildBaseline(ctx context.Context, dir, ref string, log io.Writer) (exe string, cleanup func(), err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", nil, errors.New("--baseline: git is not installed")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", nil, errors.New("--baseline builds the baseline from source: the Go toolchain (go) must be in PATH")
	}
	top, err := gitOutput(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, fmt.Errorf("--baseline: %s is not in a git repository: %w", dir, err)
	}
	sha, err := gitOutput(ctx, top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", nil, usageError("--baseline: %q is not a commit of %s (fetch it first; shallow clones lack history)", ref, top)
	}
	tmp, err := os.MkdirTemp("", "lbbench-baseline-")
	if err != nil {
		return "", nil, fmt.Errorf("--baseline: %w", err)
	}
	cleanup = func() { os.RemoveAll(tmp) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", nil, fmt.Errorf("--baseline: %w", err)
	}
	start := time.Now()
	short := sha[:min(12, len(sha))]
	fmt.Fprintf(log, "lbbench: building the baseline %s (%s) in %s\n", ref, short, tmp)

	// git archive REF | tar -x -C src
	archive := exec.CommandContext(ctx, "git", "-C", top, "archive", "--format=tar", sha)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", nil, fmt.Errorf("--baseline: %w", err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return "", nil, fmt.Errorf("--baseline: tar: %w", err)
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return "", nil, fmt.Errorf("--baseline: git archive %s: %w: %s", ref, err, strings.TrimSpace(archiveErr.String()))
	}
	if err := untar.Wait(); err != nil {
		return "", nil, fmt.Errorf("--baseline: extract %s: %w: %s", ref, err, strings.TrimSpace(untarErr.String()))
	}

	exe = filepath.Join(tmp, "lbbench")
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags", "-X main.commit="+short, "-o", exe, "./cmd/lbbench")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("--baseline: build lbbench at %s: %w\n%s", ref, err, strings.TrimSpace(string(out)))
	}
	fmt.Fprintf(log, "lbbench: baseline built in %s\n", time.Since(start).Round(100*time.Millisecond))
	return exe, cleanup, nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// runComparison is the comparison at the end of "lbbench run": with
// --baseline, every variant against its baseline build, which decides the
// exit status; otherwise every variant against the first, for information.
// A nil *runComparison compared nothing.
type runComparison struct {
	verdicts     []reports.Verdict
	text         []byte
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
	var pairs []reports.Pair
	var title string
	if c.gate {
		pairs = reports.PairBuilds(res)
		title = fmt.Sprintf("%s: baseline %s vs this build", res.Scenario.Name, o.baseline)
	} else {
		if len(res.Scenario.Variants) < 2 {
			return nil, nil
		}
		first := res.Scenario.Variants[0].Name
		if pairs, err = reports.PairWith(res, first); err != nil {
			return nil, err
		}
		title = fmt.Sprintf("%s: variants vs %s", res.Scenario.Name, first)
	}
	var buf bytes.Buffer
	if c.gate {
		fmt.Fprintf(&buf, "\ncomparison with the baseline %s (variant vs variant@%s):\n", o.baseline, baselineBuild)
	} else {
		fmt.Fprintf(&buf, "\ncomparison with the first variant, %s (for information; the exit status does not depend on it):\n", pairs[0].Baseline)
	}
	c.verdicts, err = compareAndWrite(&buf, pairs, copts, o.compare.calibrate, title, res.Scenario.Name, out)
	c.text = buf.Bytes()
	return c, err
}

// reportOptions shows the verdicts in the HTML report.
func (c *runComparison) reportOptions() []reports.Option {
	if c == nil {
		return nil
	}
	return []reports.Option{reports.WithVerdicts(c.verdicts)}
}

// print writes the verdict table.
func (c *runComparison) print(w io.Writer) {
	if c != nil {
		w.Write(c.text)
	}
}

// exit is the run's result: the verdict's exit status with --baseline,
// nil otherwise.
func (c *runComparison) exit() error {
	if c == nil || !c.gate {
		return nil
	}
	return verdictExit(c.verdicts, c.inconclusive)
}
