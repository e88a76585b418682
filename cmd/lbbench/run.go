package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/driver/docker"
	"github.com/lbbench/lbbench/driver/local"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/neighbours"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/loadgen"
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
	untilDecided bool
	retryInvalid int
	maxRounds    int
	looks        int
	budget       time.Duration
	slowdown     float64
	injectCost   map[string]time.Duration // role → CPU per request; see injectCostFlag
	kube         kubeFlags                // see kube.go
	suite        string                   // a directory of scenarios; see suiteShare
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
1 regression, 3 inconclusive, 2 error. The line that states the verdict
says how many runs --retry-invalid made again, and why. For CI,
scripts/gate builds bin/lbbench and runs the gate scenario this way, its
exit status lbbench's; "make bench-compare BASE=REF" calls it, but make
exits 2 whenever the gate does not pass, a regression as well as an error
(README, "CI").

A scenario's claims are judged and shown in every report; with
--fail-on-claims, run exits with status 4 when one fails (after writing
everything).

Results are saved after every run, so an interrupted scenario keeps what it
finished. "lbbench scenarios" lists the built-in scenarios.

` + exitStatuses,
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
	f.StringVar(&o.driver, "driver", "local", "where the targets run: local (child processes on loopback), docker (containers on a network per run; see lbbench clean) or kubernetes (pods on a cluster, the generators on other nodes; see --kubeconfig)")
	f.StringToStringVar(&o.engineImages, "engine-image", nil, "with --driver docker or kubernetes, the image a proxy engine runs from, as `ENGINE=IMAGE` (nginx=nginx:1.22); IMAGE \"host\" builds one FROM scratch from this machine's engine (kubernetes: and pushes it to --image-repo). The docker driver pulls nothing; a cluster's nodes pull as they do")
	f.Int64Var(&o.limits.Pids, "container-pids", docker.DefaultPidsLimit, "with --driver docker, the most processes and threads each container may have")
	f.Var(mibValue{&o.limits.Memory}, "container-memory-mib", fmt.Sprintf("with --driver docker, the most memory (and swap) each container may use, in MiB (default %d)", docker.DefaultMemory>>20))
	f.StringVar(&o.pin, "pin", "auto", "CPU placement: auto puts the generator on one CPU and the targets on the others (local: from 4 CPUs; docker: from 2, below that a CPU limit of half the machine per container); cpusets does so on any 2 or more CPUs; none leaves placement to the kernel; limits (docker) gives each container a CPU limit of half the machine")
	f.BoolVar(&o.raw, "raw", false, "also stream one CSV line per measured request into raw/<run>.csv")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines")
	f.StringVar(&o.baseline, "baseline", "", "git ref to build the baseline lbbench from; compare and exit with the verdict")
	f.BoolVar(&o.failOnClaims, "fail-on-claims", false, "exit with status 4 when one of the scenario's claims fails")
	f.BoolVar(&o.untilDecided, "until-decided", false, "run round after round until every judged metric is pass or fail and every statistical claim holds or fails (from 3 rounds to --max-rounds, within --budget), instead of --repeat; a scenario whose claims more rounds cannot decide (exact counts, a closed-loop or burst workload without a model claim) and that compares nothing runs its --repeat rounds")
	f.IntVar(&o.maxRounds, "max-rounds", job.DefaultMaxRounds, "with --until-decided, the most rounds made")
	f.IntVar(&o.looks, "looks", 0, "with --until-decided, judge only this many times, after rounds spread evenly up to --max-rounds (3 of 12: after rounds 4, 8 and 12; the budget's last round is judged too): fewer looks each get a larger share of alpha; 0 judges after every round from the third")
	f.DurationVar(&o.budget, "budget", 0, "with --until-decided, do not start a round that would end past this time (0: no bound)")
	f.IntVar(&o.retryInvalid, "retry-invalid", 0, "make a run the generator fell behind in again, up to this many times, in the same round (the invalid attempts are kept, and left out); for a machine whose host takes its CPUs at times")
	f.Float64Var(&o.slowdown, "inject-slowdown", 0, "with --baseline, make this build's variants this many times slower (their service times scaled), to check that the gate fails a known regression")
	f.Var(injectCostFlag{&o.injectCost}, "inject-cost", "with --baseline, make this build's built-in proxy or workers spend this much more CPU per request (busy work; the proxy's: per client connection in l4), to check that the gate fails a known cost regression;\n"+
		"ROLE is proxy or workers (repeatable or comma-separated, e.g. proxy=40us,workers=100us)")
	f.StringVar(&o.suite, "suite", "", "run the scenario as one part of the claims suite of the scenario files in `DIR` (make claims gives scenarios/claims): its statistical claims are judged as a family of their own at its share of the suite's 5%, split evenly among the suite's scenarios with statistical claims, so that the suite's report judges each claim as this run did (instead of --alpha); with --until-decided they alone stop it, and its comparison of variants is judged apart at the same level, for information")
	o.compare.register(f)
	o.kube.register(f)
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

// suiteShare is s's share of the claims suite of the scenario files
// (*.yaml) in dir (claims.SuiteShare), and the level it gives s's run (0:
// none, s has no statistical claim). A file of the suite that does not
// load is an error: the shares depend on every scenario.
func suiteShare(dir string, s scenario.Scenario) (*results.Suite, float64, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, 0, err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("no scenario file (*.yaml) in %s", dir)
	}
	all := make([]scenario.Scenario, 0, len(paths))
	for _, p := range paths {
		o, err := scenario.Load(p, topologies.Catalog())
		if err != nil {
			return nil, 0, err
		}
		all = append(all, o)
	}
	return claims.SuiteShare(filepath.ToSlash(filepath.Clean(dir)), all, s)
}

// prepareScenario loads the scenario named (a file or a built-in one),
// applies the command line's overrides and validates the result: what
// run and model sim do before their job.
func prepareScenario(name string, apply func(*scenario.Scenario) error) (scenario.Scenario, error) {
	s, err := loadScenario(name)
	if err != nil {
		return s, err
	}
	if err := apply(&s); err != nil {
		return s, err
	}
	if err := s.Validate(topologies.Catalog()); err != nil {
		return s, fmt.Errorf("after command-line overrides: %w", err)
	}
	return s, nil
}

// outDir is the output directory out, or by default
// reports/out/<time>-<scenario><suffix>.
func outDir(out, scenarioName, suffix string) string {
	if out != "" {
		return out
	}
	return filepath.Join("reports", "out", time.Now().Format("20060102-150405")+"-"+scenarioName+suffix)
}

func runScenario(ctx context.Context, o runOptions, changed func(string) bool, stdout, stderr io.Writer) error {
	s, err := prepareScenario(o.scenario, func(s *scenario.Scenario) error { return o.overrides.apply(s, changed) })
	if err != nil {
		return err
	}
	copts, err := o.compare.options()
	if err != nil {
		return usageError("%w", err)
	}
	if len(copts.Metrics) == 0 {
		copts.Metrics = s.Verdicts
	}
	var suite *results.Suite
	if o.suite != "" {
		if changed("alpha") {
			return usageError("--alpha and --suite: the suite's share sets the level; give one of them")
		}
		if o.baseline != "" {
			return usageError("--baseline and --suite: a suite judges its scenarios' claims, a gate a build against its baseline; give one of them")
		}
		var alpha float64
		if suite, alpha, err = suiteShare(o.suite, s); err != nil {
			return usageError("--suite: %w", err)
		}
		if alpha > 0 {
			copts.Alpha = alpha
		}
	}
	out := outDir(o.out, s.Name, "")
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the lbbench binary: %w", err)
	}
	if o.retryInvalid < 0 {
		return usageError("--retry-invalid %d: want 0 or more", o.retryInvalid)
	}
	hopts := []harness.Option{harness.WithVersion(version, commit), harness.WithRetries(o.retryInvalid)}
	endProgress := func() {}
	var live func(loadgen.LiveStats)
	if !o.quiet {
		var popts []harness.Option
		popts, live, endProgress = progressOptions(stderr, s)
		hopts = append(hopts, popts...)
	}
	// Local processes and the docker daemon's containers measure this
	// host: runs of other lbbench processes here disturb them. A cluster's
	// pods run on its nodes.
	var beside string
	if o.driver == "local" || o.driver == "docker" {
		beside = neighbours.Dir()
	}
	_, err = job.Run(ctx, job.Options{
		Scenario: s, Out: out, Dirs: []string{"logs", "raw", "generators"},
		Driver: func(ctx context.Context) (harness.Driver, func(), error) {
			return newDriver(ctx, o, exe, out, live, stderr)
		},
		Harness: hopts, Compare: copts, Calibrate: o.compare.calibrate, Inconclusive: o.compare.inconclusive,
		Baseline: o.baseline, InjectSlowdown: o.slowdown, InjectCost: o.injectCost, FailOnClaims: o.failOnClaims, StepSummary: os.Getenv("GITHUB_STEP_SUMMARY"),
		UntilDecided: o.untilDecided, MaxRounds: o.maxRounds, Looks: o.looks, Budget: o.budget,
		Stdout: stdout, Stderr: stderr, AfterRuns: endProgress, Neighbours: beside, Suite: suite,
	})
	return err
}

// newDriver returns the driver o names, writing under the output
// directory out, and a function that releases it. live, if not nil, gets
// the generator's live figures. Each driver validates the options it is
// given.
func newDriver(ctx context.Context, o runOptions, exe, out string, live func(loadgen.LiveStats), stderr io.Writer) (harness.Driver, func(), error) {
	logDir := filepath.Join(out, "logs")
	var raw string
	if o.raw {
		raw = filepath.Join(out, "raw")
	}
	switch o.driver {
	case "local":
		d, err := local.New(exe, logDir, local.WithPlacement(o.pin), local.WithGenerators(o.generators, filepath.Join(out, "generators")),
			local.WithRaw(raw), local.WithLive(live), local.WithEngineImages(o.engineImages))
		return d, func() {}, err
	case "docker":
		c, err := docker.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		d, err := docker.New(ctx, c, exe, logDir, docker.WithPlacement(o.pin), docker.WithGenerators(o.generators), docker.WithRaw(raw),
			docker.WithLive(live), docker.WithEngineImages(o.engineImages), docker.WithLimits(o.limits), docker.WithLog(driverLog(stderr, "docker")))
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "lbbench: docker: image %s, session %s; %s\n", d.Image(), d.Session(), d.Pinning())
		return d, func() { c.Close() }, nil
	case "kubernetes":
		return newKubeDriver(ctx, o, exe, logDir, raw, live, stderr)
	}
	return nil, nil, fmt.Errorf("--driver must be local, docker or kubernetes, got %q", o.driver)
}

// driverLog prints a driver's notices on stderr, prefixed with its name.
func driverLog(stderr io.Writer, name string) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(stderr, "lbbench: "+name+": "+format+"\n", args...) }
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

// injectCostFlag parses --inject-cost ROLE=DURATION, repeated or
// comma-separated, into a map from role to duration; a role given twice,
// an unknown role and a bad, negative or too long duration are refused
// (job.CheckInjectCost).
type injectCostFlag struct{ m *map[string]time.Duration }

func (f injectCostFlag) String() string {
	if f.m == nil || len(*f.m) == 0 {
		return ""
	}
	var parts []string
	for _, role := range slices.Sorted(maps.Keys(*f.m)) {
		parts = append(parts, role+"="+(*f.m)[role].String())
	}
	return strings.Join(parts, ",")
}

func (f injectCostFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		role, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || role == "" || value == "" {
			return fmt.Errorf("want ROLE=DURATION with ROLE %s, for example proxy=40us, got %q", strings.Join(job.InjectRoles(), " or "), part)
		}
		if err := job.CheckInjectCost(role, 0); err != nil {
			return err
		}
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration (for example 40us or 1ms)", role, value)
		}
		if err := job.CheckInjectCost(role, d); err != nil {
			return err
		}
		if _, dup := (*f.m)[role]; dup {
			return fmt.Errorf("%s given twice", role)
		}
		if *f.m == nil {
			*f.m = map[string]time.Duration{}
		}
		(*f.m)[role] = d
	}
	return nil
}

func (injectCostFlag) Type() string { return "ROLE=DURATION" }
