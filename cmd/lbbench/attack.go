package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

type attackOptions struct {
	target   string
	spec     string
	scenario string
	out      string
	raw      string
	rate     float64
	duration time.Duration
	warmup   time.Duration
	quiet    bool
	live     bool
	inFlight int
}

func newAttackCmd() *cobra.Command {
	var o attackOptions
	cmd := &cobra.Command{
		Use:   "attack --target URL [SCENARIO | --spec FILE]",
		Short: "Offer a workload open-loop to one URL and write the histograms",
		Long: `Attack is the load generator on its own: it offers a workload to --target,
open loop, measuring latency from each request's intended send time, and
writes what it recorded (HDR histograms, counts, intervals) as JSON to --out.
"lbbench run --generators K" starts K of these and merges their histograms.

The workload comes from a scenario (a file or a built-in name; its workload
section) or from --spec, a workload spec in YAML or JSON.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.scenario = args[0]
			}
			return runAttack(cmd.Context(), o, cmd.Flags().Changed, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, harness.FlagTarget, "", "base URL to attack, for example http://127.0.0.1:8080 (required)")
	f.StringVar(&o.spec, harness.FlagSpec, "", "workload spec file (YAML or JSON) instead of a scenario")
	f.StringVarP(&o.out, harness.FlagOut, "o", "", "write the measurement JSON here (default: standard output)")
	f.StringVar(&o.raw, "raw", "", "also write one CSV line per measured request to this file")
	f.Float64Var(&o.rate, "rate", 0, "intended rate per second (overrides the workload's constant or poisson rate)")
	f.DurationVar(&o.duration, "duration", 0, "measured duration (overrides the workload)")
	f.DurationVar(&o.warmup, "warmup", 0, "warm-up, not recorded; 0 for none (overrides the workload)")
	f.IntVar(&o.inFlight, "max-in-flight", 0, "most requests outstanding at once; requests due beyond it leave late (send lag) (default: derived from the workload, see clients.max_in_flight)")
	f.BoolVarP(&o.quiet, harness.FlagQuiet, "q", false, "no summary on standard error")
	f.BoolVar(&o.live, harness.FlagLive, false, "print the live figures (harness.LiveStats) as a JSON line per second on standard error")
	cmd.MarkFlagRequired(harness.FlagTarget)
	return cmd
}

func runAttack(ctx context.Context, o attackOptions, changed func(string) bool, stdout, stderr io.Writer) error {
	var spec workloads.Spec
	switch {
	case o.spec != "" && o.scenario != "":
		return errors.New("attack: give a scenario or --spec, not both")
	case o.spec != "":
		s, err := scenario.LoadWorkload(o.spec)
		if err != nil {
			return err
		}
		spec = s
	default:
		name := o.scenario
		if name == "" {
			name = "default"
		}
		s, err := loadScenario(name)
		if err != nil {
			return err
		}
		spec = s.Workload
	}
	if changed("rate") {
		spec.Arrival.RatePerSec = o.rate
	}
	if changed("duration") {
		spec.Duration = o.duration
	}
	if changed("warmup") {
		spec.Warmup = noneIfZero(o.warmup)
	}
	if changed("max-in-flight") {
		if o.inFlight < 1 {
			return fmt.Errorf("attack: --max-in-flight must be at least 1, got %d", o.inFlight)
		}
		spec.Clients.MaxInFlight = o.inFlight
	}
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("attack: workload: %w", err)
	}

	var raw io.Writer
	if o.raw != "" {
		f, err := os.Create(o.raw)
		if err != nil {
			return fmt.Errorf("attack: %w", err)
		}
		defer f.Close()
		raw = f
	}
	if o.live {
		enc := json.NewEncoder(stderr)
		ctx = harness.LiveContext(ctx, func(ls harness.LiveStats) { enc.Encode(ls) })
	}
	m, attackErr := harness.Attack(ctx, o.target, spec, raw)
	if m == nil {
		return attackErr
	}
	if o.out != "" {
		if err := m.WriteFile(o.out); err != nil {
			return errors.Join(attackErr, err)
		}
	} else {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(m); err != nil {
			return errors.Join(attackErr, err)
		}
	}
	if !o.quiet {
		s := m.Latency.Summarize()
		fmt.Fprintf(stderr, "attack: %d requests at %.1f/s (intended %.1f/s), %d errors; p50 %s p99 %s p99.9 %s max %s; send lag p99 %s; generator CPU %s, max RSS %.1f MiB; in flight peak %d of %d, %d held\n",
			m.Requests, m.AchievedRate, m.IntendedRate, m.Errors, reports.Dur(s.P50), reports.Dur(s.P99), reports.Dur(s.P999), reports.Dur(s.Max),
			reports.Dur(m.SendLag.Quantile(0.99)), m.Generator.CPU.Round(time.Millisecond), float64(m.Generator.MaxRSS)/(1<<20), m.Generator.PeakInFlight, m.Generator.MaxInFlight, m.Generator.Held)
	}
	if attackErr != nil && ctx.Err() != nil {
		return &exitError{code: 130, err: fmt.Errorf("interrupted: partial measurement written")}
	}
	return attackErr
}
