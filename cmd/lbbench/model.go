package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Exact balls-into-bins figures and a simulator of scenarios",
		Long: `Model answers without running anything: "balls" computes exactly how tasks
that arrive together spread over workers; "sim" simulates a scenario's
variants and workload event by event, at scales one machine cannot run.`,
	}
	cmd.AddCommand(newModelBallsCmd(), newModelSimCmd())
	return cmd
}

type ballsOptions struct {
	spec    model.BallsSpec
	jsonOut bool
}

func newModelBallsCmd() *cobra.Command {
	var o ballsOptions
	cmd := &cobra.Command{
		Use:   "balls --tasks M --workers N [--at-least K]",
		Short: "Exact probabilities of uneven load when tasks arrive together",
		Long: `Balls answers: M tasks arrive together at N single-task workers; how
likely is it that a given worker gets at least K of them, that some worker
does, and how is the largest load distributed?

  random         each task to a uniformly random worker (SO_REUSEPORT's hash,
                 the random policy): exact, computed with big integers; "some
                 worker" comes from the joint distribution of the loads
  least_loaded   each task to a least loaded worker: exact, every worker gets
                 floor or ceil of M/N
  p2c            each task to the less loaded of two random workers (the
                 balancer's p2c policy): SIMULATED over --trials seeded runs,
                 with 95% confidence intervals

K defaults to twice the fair share, 2*ceil(M/N).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBalls(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.spec.Tasks, "tasks", 0, fmt.Sprintf("number of tasks arriving together (1 to %d)", model.MaxBallsTasks))
	f.IntVar(&o.spec.Workers, "workers", 0, "number of single-task workers")
	f.IntVar(&o.spec.AtLeast, "at-least", 0, "the load K asked about (default 2*ceil(tasks/workers))")
	f.IntVar(&o.spec.Trials, "trials", model.DefaultTrials, "simulated runs of the p2c dispatcher")
	f.Uint64Var(&o.spec.Seed, "seed", model.DefaultSeed, "seed of the simulated dispatcher")
	f.BoolVar(&o.jsonOut, "json", false, "write the figures as JSON (exact values as fractions)")
	cmd.MarkFlagRequired("tasks")
	cmd.MarkFlagRequired("workers")
	return cmd
}

func runBalls(ctx context.Context, o ballsOptions, stdout io.Writer) error {
	r, err := model.Balls(ctx, o.spec)
	if err != nil {
		return err
	}
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return model.WriteBallsText(stdout, r)
}

type simOptions struct {
	scenario string
	out      string
	overrides
	workers     int
	concurrency int
	connections int
	variants    []string
	quiet       bool
}

func newModelSimCmd() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "sim [SCENARIO]",
		Short: "Simulate a scenario's variants and workload",
		Long: `Sim runs a discrete-event simulation of every variant of a scenario
against its workload and writes results.json in the schema of "lbbench run"
(marked "simulated": true, driver "sim"), summary.txt and the report files,
so "lbbench report" reads them and shows them beside measured results:

  lbbench report reports/out/latest DIR -o both

The model: arrivals from the workload's own schedule and seed; classes and
service times drawn as the generator draws them; the client's connection cap
with keep-alive (a request waits for a free connection); SO_REUSEPORT as a
uniform random choice per connection; proxies (l4, l7, l7-pools, proxy with
any engine) as the built-in balancer's own policy code deciding per
connection (l4) or per request; workers with workers.concurrency slots and
a FIFO queue, and their slowdowns. The proxy hop and connection setup cost
nothing, and upstream keep-alive does not change a policy's choices, so
variants that differ only there simulate alike. Workers never share a CPU.

Repetition 1 uses the workload's seed; later ones derived seeds, as "lbbench
run" does. Every variant of a repetition sees the same requests. Results are
saved after every run, as by "lbbench run": Ctrl-C stops the simulation
(exit status 130) and keeps the runs it finished.

SCENARIO is a YAML file or a built-in scenario (default: "default"). The
flags scale it, for example to 1000 workers:

  lbbench model sim --workers 1000 --connections 8000 --rate 120000 --duration 60s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scenario = scenarios.Default
			if len(args) == 1 {
				o.scenario = args[0]
			}
			return runSim(cmd.Context(), o, cmd.Flags().Changed, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "output directory (default reports/out/<time>-<scenario>-sim)")
	o.overrides.bind(f, ", in simulated time")
	f.IntVar(&o.workers, "workers", 0, "number of workers (overrides workers.count)")
	f.IntVar(&o.concurrency, "concurrency", 0, "requests one worker serves at a time (overrides workers.concurrency)")
	f.IntVar(&o.connections, "connections", 0, "client connection cap (overrides clients.connections)")
	f.StringSliceVar(&o.variants, "variant", nil, "simulate only these variants (repeat or comma-separate)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines")
	return cmd
}

func runSim(ctx context.Context, o simOptions, changed func(string) bool, stdout, stderr io.Writer) error {
	s, err := prepareScenario(o.scenario, func(s *scenario.Scenario) error { return o.apply(s, changed) })
	if err != nil {
		return err
	}
	opts := []harness.Option{harness.WithVersion(version, commit)}
	if !o.quiet {
		opts = append(opts, harness.WithProgress(simProgress(stderr)))
	}
	_, err = job.Run(ctx, job.Options{Scenario: s, Out: outDir(o.out, s.Name, "-sim"), Simulate: true, Harness: opts, Stdout: stdout, Stderr: stderr})
	if errors.Is(err, model.ErrUnsupported) {
		return fmt.Errorf("%w (choose others with --variant)", err)
	}
	return err
}

// apply sets the flags the user gave on s: the overrides run has too,
// and the scale and the variants of model sim (scenario.Overrides).
func (o simOptions) apply(s *scenario.Scenario, changed func(string) bool) error {
	ov := o.overrides.of(changed)
	if changed("workers") {
		ov.Workers = &o.workers
	}
	if changed("concurrency") {
		ov.Concurrency = &o.concurrency
	}
	if changed("connections") {
		ov.Workload.Connections = &o.connections
	}
	if len(o.variants) > 0 {
		ov.Variants = o.variants
	}
	return ov.Apply(s)
}

// simProgress prints a line for every simulated run.
func simProgress(stderr io.Writer) func(harness.Progress) {
	start := time.Now()
	var runStart time.Time
	return func(p harness.Progress) {
		if !p.Done {
			runStart = time.Now()
			return
		}
		r := p.Run
		fmt.Fprintf(stderr, "[%d/%d] %s rep %d: %d requests, p99 %s, skew %s (simulated in %s, elapsed %s)\n",
			p.Index, p.Total, p.Variant, p.Rep, r.Requests, numfmt.Dur(r.Summary.P99), numfmt.Skew(r.Skew()),
			time.Since(runStart).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
}
