package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/driver/docker"
	"github.com/lbbench/lbbench/driver/local"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
)

type runOptions struct {
	scenario string
	out      string
	overrides
	generators   int
	driver       string
	engineImages map[string]string
	limits       docker.Limits // per container; see --container-pids, --container-memory-mib
	pin          string
	raw          bool
	quiet        bool
	baseline     string       // git ref; see baseline.go
	compare      compareFlags // see compare.go
	failOnClaims bool
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [SCENARIO]",
		Short: "Run a scenario and write its results",
		Long: `Run brings every variant of a scenario up on local processes, offers the
workload open-loop, and writes results.json (HDR histograms, counters,
environment), summary.txt, report.html with its exports (see "lbbench report")
and each process's log into the output directory.

SCENARIO is a YAML file or the name of a built-in scenario (default: "default").

With two or more variants, run compares every variant with the first and
prints the verdicts for information (see "lbbench compare"). With
--baseline REF it builds lbbench at git ref REF, runs every variant with
both builds (variant and variant@base) interleaved in a randomized balanced
order, compares each with its baseline, and exits with the verdict: 0 pass,
1 regression, 3 inconclusive, 2 error.

A scenario's claims are judged and shown in every report; with
--fail-on-claims, run exits with status 4 when one fails (after writing
everything).

Results are saved after every run, so an interrupted scenario keeps what it
finished.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scenario = scenarios.Default
			if len(args) == 1 {
				o.scenario = args[0]
			}
			return runScenario(cmd.Context(), o, cmd.Flags().Changed, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "output directory (default reports/out/<time>-<scenario>)")
	o.overrides.bind(f, "")
	f.IntVar(&o.generators, "generators", 1, "split the load across this many \"lbbench attack\" processes and merge their histograms")
	f.StringVar(&o.driver, "driver", "local", "where the targets run: local (child processes on loopback) or docker (containers on a network per run; see lbbench clean)")
	f.StringToStringVar(&o.engineImages, "engine-image", nil, "with --driver docker, the image a proxy engine runs from, as `ENGINE=IMAGE` (nginx=nginx:1.22); IMAGE \"host\" builds one FROM scratch from this machine's engine. lbbench pulls nothing")
	f.Int64Var(&o.limits.Pids, "container-pids", docker.DefaultPidsLimit, "with --driver docker, the most processes and threads each container may have")
	f.Var(mibValue{&o.limits.Memory}, "container-memory-mib", fmt.Sprintf("with --driver docker, the most memory (and swap) each container may use, in MiB (default %d)", docker.DefaultMemory>>20))
	f.StringVar(&o.pin, "pin", "auto", "CPU placement: auto puts the generator on one CPU and the targets on the others (local: from 4 CPUs; docker: from 2, below that a CPU limit of half the machine per container); cpusets does so on any 2 or more CPUs; none leaves placement to the kernel; limits (docker) gives each container a CPU limit of half the machine")
	f.BoolVar(&o.raw, "raw", false, "also stream one CSV line per measured request into raw/<run>.csv")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines")
	f.StringVar(&o.baseline, "baseline", "", "git ref to build the baseline lbbench from; compare and exit with the verdict")
	f.BoolVar(&o.failOnClaims, "fail-on-claims", false, "exit with status 4 when one of the scenario's claims fails")
	o.compare.register(f)
	return cmd
}

// loadScenario reads a scenario file, or a built-in scenario by name.
func loadScenario(arg string) (scenario.Scenario, error) {
	// A directory is not a scenario file: "engines" is both a built-in
	// scenario and a folder of the source tree.
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		return scenario.Load(arg, topologies.Catalog())
	}
	data, err := scenarios.Get(arg)
	if err != nil {
		return scenario.Scenario{}, fmt.Errorf("no scenario file %q and no built-in scenario of that name (built-in: %v)", arg, scenarios.Names())
	}
	return scenario.Parse("scenarios/"+arg+".yaml", data, topologies.Catalog())
}

func runScenario(ctx context.Context, o runOptions, changed func(string) bool, stdout, stderr io.Writer) error {
	s, err := loadScenario(o.scenario)
	if err != nil {
		return err
	}
	if err := o.overrides.apply(&s, changed); err != nil {
		return err
	}
	if err := s.Validate(topologies.Catalog()); err != nil {
		return fmt.Errorf("after command-line overrides: %w", err)
	}
	baseOpts, cleanup, err := prepareCompare(ctx, &s, o, stderr)
	if err != nil {
		return err
	}
	defer cleanup()

	out := o.out
	if out == "" {
		out = filepath.Join("reports", "out", time.Now().Format("20060102-150405")+"-"+s.Name)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the lbbench binary: %w", err)
	}
	output := reports.Output{Dir: out, Saved: true}
	// Every file and folder the scenario will write, checked before the
	// first run.
	if err := output.Check("logs", "raw", "generators"); err != nil {
		return err
	}
	endProgress := func() {}
	var live func(loadgen.LiveStats)
	var popts []harness.Option
	if !o.quiet {
		popts, live, endProgress = progressOptions(stderr, s)
	}
	driver, closeDriver, err := newDriver(ctx, o, exe, out, live, stderr)
	if err != nil {
		return err
	}
	defer closeDriver()
	resultsPath := output.ResultsPath()

	// saved is how many runs results.json holds: the last checkpoint that
	// succeeded (-1: none did).
	saved := -1
	opts := []harness.Option{
		harness.WithVersion(version, commit),
		harness.WithCheckpoint(func(r *results.Results) error {
			if err := output.Checkpoint(r); err != nil {
				output.Saved = false
				return err
			}
			saved, output.Saved = len(r.Runs), true
			return nil
		}),
	}
	opts = append(opts, baseOpts...)
	opts = append(opts, popts...)
	announce(stderr, s, out)

	res, runErr := harness.Run(ctx, s, driver, opts...)
	endProgress()
	if res == nil {
		return runErr
	}
	cmp, err := compareRun(res, runErr, o, out)
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	output.Comparison, output.Options = cmp.text(), cmp.reportOptions()
	err = output.Write(stdout, res)
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err == nil && !output.Saved {
		// Write saved results.json after all (the checkpoint's failure
		// passed).
		saved = len(res.Runs)
	}
	if runErr != nil {
		return runsSaved(ctx, runErr, res, saved, resultsPath)
	}
	if failed := failedRuns(res); failed > 0 {
		fmt.Fprintf(stderr, "lbbench: %d of %d runs failed (a process died; see \"invalid runs\" above): they are recorded in %s and left out of every comparison\n", failed, len(res.Runs), resultsPath)
	}
	if o.failOnClaims {
		if n := claims.Failed(claims.Judge(res)); n > 0 {
			return &exitError{code: 4, err: fmt.Errorf("%d of %d claims fail (see the claims in %s)", n, len(res.Scenario.Claims), out)}
		}
	}
	return cmp.exit()
}

// announce says what the scenario will run, for how long, and where its
// results go.
func announce(w io.Writer, s scenario.Scenario, out string) {
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

// failedRuns counts the runs during which a process died.
func failedRuns(res *results.Results) int {
	n := 0
	for _, r := range res.Runs {
		if len(r.Failed) > 0 {
			n++
		}
	}
	return n
}

// progressPrinter prints one line when a run starts and one when it ends.
func progressPrinter(w io.Writer, s scenario.Scenario) func(harness.Progress) {
	start := time.Now()
	return func(p harness.Progress) {
		if !p.Done {
			fmt.Fprintf(w, "[%d/%d] %s rep %d ...\n", p.Index, p.Total, p.Variant, p.Rep)
			return
		}
		r := p.Run
		status := "valid"
		if !r.Valid {
			status = "INVALID: " + r.Invalid[0]
		}
		elapsed := time.Since(start)
		left := time.Duration(float64(elapsed) / float64(p.Index) * float64(p.Total-p.Index))
		fmt.Fprintf(w, "[%d/%d] %s rep %d: %.0f req/s, p99 %s, errors %d, skew %s, %s (elapsed %s, about %s left)\n",
			p.Index, p.Total, p.Variant, p.Rep, r.AchievedRate, numfmt.Dur(r.Summary.P99), r.Errors,
			numfmt.Skew(r.Skew()), status, elapsed.Round(time.Second), left.Round(time.Second))
	}
}

// noneIfZero maps a --warmup of 0 to the spec's "no warm-up" (a negative
// value; zero in a spec means the default).
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// newDriver returns the driver o names, writing under the output
// directory out, and a function that releases it. live, if not nil, gets
// the generator's live figures.
func newDriver(ctx context.Context, o runOptions, exe, out string, live func(loadgen.LiveStats), stderr io.Writer) (harness.Driver, func(), error) {
	if o.generators < 1 || o.generators > local.MaxGenerators {
		return nil, nil, fmt.Errorf("--generators must be between 1 and %d (each is a process on this machine; more only compete for its CPUs), got %d", local.MaxGenerators, o.generators)
	}
	logDir := filepath.Join(out, "logs")
	switch o.driver {
	case "local":
		if len(o.engineImages) > 0 {
			return nil, nil, fmt.Errorf("--engine-image is for --driver docker; --driver local runs this machine's nginx and HAProxy")
		}
		dopts := []local.Option{local.WithLive(live)}
		switch o.pin {
		case "auto":
			if p, ok := local.AutoPinning(); ok {
				dopts = append(dopts, local.WithPinning(p))
			}
		case "cpusets":
			p, ok := local.SplitPinning(2)
			if !ok {
				return nil, nil, fmt.Errorf("--pin cpusets needs at least 2 CPUs")
			}
			dopts = append(dopts, local.WithPinning(p))
		case "none":
		default:
			return nil, nil, fmt.Errorf("--pin must be auto, cpusets or none with --driver local (limits is for --driver docker), got %q", o.pin)
		}
		if o.generators > 1 {
			dopts = append(dopts, local.WithGenerators(o.generators, filepath.Join(out, "generators")))
		}
		if o.raw {
			dopts = append(dopts, local.WithRaw(filepath.Join(out, "raw")))
		}
		d, err := local.New(exe, logDir, dopts...)
		return d, func() {}, err
	case "docker":
		if o.raw {
			return nil, nil, fmt.Errorf("--raw needs --driver local (the docker driver's generator writes histograms only)")
		}
		c, err := docker.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		d, err := docker.NewDriver(ctx, c, exe, logDir, docker.WithEngineImages(o.engineImages), docker.WithPlacement(o.pin), docker.WithLimits(o.limits),
			docker.WithGenerators(o.generators), docker.WithLive(live),
			docker.WithLog(func(format string, args ...any) {
				fmt.Fprintf(stderr, "lbbench: docker: "+format+"\n", args...)
			}))
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "lbbench: docker: image %s, session %s; %s\n", d.Image(), d.Session(), d.Pinning())
		return d, func() { c.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--driver must be local or docker, got %q", o.driver)
}

// runsSaved is the error of a scenario that stopped early: exit status 130
// after Ctrl-C, and in any case how many runs finished and how many of
// them results.json at path holds (saved; -1 when nothing could be saved).
func runsSaved(ctx context.Context, err error, res *results.Results, saved int, path string) error {
	what := fmt.Sprintf("%d of %d runs saved in %s", saved, len(res.Order), path)
	switch {
	case saved < 0:
		what = fmt.Sprintf("%d of %d runs finished, none saved: %s could not be written", len(res.Runs), len(res.Order), path)
	case saved < len(res.Runs):
		what = fmt.Sprintf("%d of %d runs finished, only %d saved in %s", len(res.Runs), len(res.Order), saved, path)
	}
	if ctx.Err() != nil {
		return &exitError{code: 130, err: fmt.Errorf("interrupted: %s", what)}
	}
	return fmt.Errorf("%w (%s)", err, what)
}

// mibValue is a flag of a size in MiB stored in bytes.
type mibValue struct{ bytes *int64 }

func (v mibValue) String() string {
	if v.bytes == nil || *v.bytes == 0 {
		return ""
	}
	return strconv.FormatInt(*v.bytes>>20, 10)
}

func (v mibValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 1<<30 {
		return fmt.Errorf("want a whole number of MiB from 1 to %d", 1<<30)
	}
	*v.bytes = n << 20
	return nil
}

func (v mibValue) Type() string { return "MiB" }
