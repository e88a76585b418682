package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/results"
)

// compareFlags are the comparison settings "compare" and "run" share.
type compareFlags struct {
	metrics      []string
	tolerances   []string
	alpha        float64
	inconclusive string
	calibrate    bool
	resamples    int
	seed         uint64
	interval     string
}

func (c *compareFlags) register(f *pflag.FlagSet) {
	f.StringSliceVar(&c.metrics, "metric", nil, "metric to compare, repeatable: "+strings.Join(results.ComparisonMetrics(), ", ")+" (default: "+strings.Join(results.VerdictMetrics(), ", ")+")")
	f.StringArrayVar(&c.tolerances, "tolerance", nil, "accepted change, repeatable: `METRIC=PCT` (p99=10%) or 10% for every relative metric; error_rate=1% is in percentage points (defaults: 10%, error_rate 1 point)")
	f.Float64Var(&c.alpha, "alpha", compare.DefaultAlpha, "family-wise significance level (Holm over metrics and variants)")
	f.StringVar(&c.inconclusive, "inconclusive", "", "exit status for an inconclusive verdict: pass (0) or fail (1); default 3")
	f.BoolVar(&c.calibrate, "calibrate", false, "A/A calibration: measure the noise floor from the baseline's runs split in two interleaved halves; tolerances below it are too tight to decide")
	f.StringVar(&c.interval, "interval", compare.DefaultInterval, "confidence interval of the ratio: "+compare.IntervalShift+" (Hodges-Lehmann, inverts Mann-Whitney) or "+compare.IntervalBootstrap+" (percentile bootstrap of the ratio of medians)")
	f.IntVar(&c.resamples, "resamples", compare.DefaultResamples, "bootstrap resamples (--interval bootstrap)")
	f.Uint64Var(&c.seed, "seed", compare.DefaultSeed, "bootstrap seed")
}

// options turns the flags into compare.Options, validated.
func (c *compareFlags) options() (compare.Options, error) {
	o := compare.Options{Metrics: c.metrics, Alpha: c.alpha, Resamples: c.resamples, Seed: c.seed, Interval: c.interval}
	tols, err := compare.Tolerances(c.tolerances)
	if err != nil {
		return o, fmt.Errorf("--%w", err)
	}
	o.Tolerances = tols
	switch c.inconclusive {
	case "", "pass", "fail":
	default:
		return o, fmt.Errorf("--inconclusive: want pass or fail, got %q", c.inconclusive)
	}
	if err := o.WithDefaults().Validate(); err != nil {
		return o, fmt.Errorf("%w (see lbbench compare --help)", err)
	}
	return o, nil
}

type compareOptions struct {
	compareFlags
	baselineVariant string
	out             string
}

func newCompareCmd() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare BASE CAND | compare RESULTS [--baseline-variant NAME]",
		Short: "Compare results and give a verdict with an exit code for CI",
		Long: `Compare compares per-run values of a baseline and a candidate and says, per
variant and metric, pass, fail or inconclusive.

  lbbench compare BASE CAND                       same-named variants of two results
  lbbench compare RESULTS --baseline-variant NAME every other variant vs NAME
  lbbench compare RESULTS                         results of "run --baseline": each
                                                  variant vs its baseline build, or,
                                                  with --calibrate alone, A/A halves

BASE, CAND and RESULTS are results.json files or the run directories holding
them. Metrics (per valid run): p50, p99, p99.9 of the corrected latency,
throughput (successful requests per second), error_rate. Invalid runs are
left out.

Two methods; each verdict names the one it used.

Paired, for sides run in the same rounds of one scenario (the second and
third forms): per round, the log of the candidate/baseline ratio; a t
interval on their mean, Holm over all metrics and variants, and a verdict
only if the median round agrees with the mean, so one bad round cannot
swing it. At least 3 paired rounds.

Unpaired, for two results made apart (the first form): Mann-Whitney U on
the per-run values (exact for small samples), Holm correction over all
metrics and variants, the ratio of medians (candidate/baseline; the
difference for error_rate) with a 95% interval (by default the
Hodges-Lehmann interval that inverts the Mann-Whitney test, exact for few
runs and hardly moved by one starved run; --interval bootstrap for the
percentile bootstrap of the ratio of medians), and Kolmogorov-Smirnov for
changes of spread, reported in the detail. 3 runs against 3 are too few
for it to decide after Holm: give 4 or more a side.

Verdicts:

  fail          significant, and the whole interval is worse than the tolerance
  pass          the whole interval is within the tolerance on the bad side
                (an improvement passes)
  inconclusive  neither; always with fewer than 3 valid runs (or rounds) on a side

Exit status: 0 pass, 1 regression, 2 usage or infrastructure error,
3 inconclusive (--inconclusive pass|fail maps it to 0 or 1).

Output: the verdict table on stdout; markdown appended to
$GITHUB_STEP_SUMMARY when set; with -o DIR also verdicts.json (which
"lbbench report" shows), junit.xml, comparison.md, and base.bench.txt and
cand.bench.txt in Go benchmark format, so that
"benchstat DIR/base.bench.txt DIR/cand.bench.txt" reads them too.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(o, args, cmd.Flags().Changed, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.register(f)
	f.StringVar(&o.baselineVariant, "baseline-variant", "", "with one RESULTS: compare every other variant with this one")
	f.StringVarP(&o.out, "out", "o", "", "write verdicts.json, junit.xml, comparison.md and *.bench.txt into this directory")
	return cmd
}

// usageError marks a mistake of the user's: exit status 2.
func usageError(format string, args ...any) error {
	return &exitError{code: job.ExitError, err: fmt.Errorf(format, args...)}
}

func readResultsArg(arg string) (*results.Results, error) {
	path, err := resultsPath(arg)
	if err != nil {
		return nil, err
	}
	return results.ReadFile(path)
}

func runCompare(o compareOptions, args []string, changed func(string) bool, stdout io.Writer) error {
	copts, err := o.options()
	if err != nil {
		return usageError("%w", err)
	}
	var pairs []compare.Pair
	var family *results.Results // the results whose claims share the comparison's family
	var remade map[string]int   // one results' runs made again, for the verdict line
	var title, scenario string
	switch {
	case len(args) == 2:
		if o.baselineVariant != "" {
			return usageError("--baseline-variant compares variants of one RESULTS; give one, not two")
		}
		base, err := readResultsArg(args[0])
		if err != nil {
			return err
		}
		cand, err := readResultsArg(args[1])
		if err != nil {
			return err
		}
		if pairs, err = compare.PairVariants(base, cand); err != nil {
			return err
		}
		title, scenario = args[0]+" vs "+args[1], cand.Scenario.Name
		if len(copts.Metrics) == 0 {
			copts.Metrics = cand.Scenario.Verdicts
		}
	default:
		r, err := readResultsArg(args[0])
		if err != nil {
			return err
		}
		title, scenario, remade = args[0], r.Scenario.Name, harness.Remade(r)
		if len(copts.Metrics) == 0 {
			copts.Metrics = r.Scenario.Verdicts // what the run judged
		}
		copts = untilDecidedLook(copts, r, changed)
		// The run's own comparison (of its builds, or of its variants with
		// the first) was judged with its claims as one family.
		if job.SharesFamily(r) && (o.baselineVariant == "" || o.baselineVariant == r.Scenario.Variants[0].Name) {
			family = r
		}
		switch {
		case o.baselineVariant != "":
			if pairs, err = compare.PairWith(r, o.baselineVariant); err != nil {
				return usageError("%w", err)
			}
		default:
			pairs = compare.PairBuilds(r)
		}
		if len(pairs) == 0 {
			if o.calibrate {
				return job.CalibrateVariants(stdout, r, copts)
			}
			return usageError("%s has no baseline build (it is not from \"lbbench run --baseline\"): "+
				"give two results, or --baseline-variant NAME (variants: %s), or --calibrate for an A/A calibration", args[0], variantList(r))
		}
	}
	vs, err := job.Comparison{Pairs: pairs, Options: copts, Calibrate: o.calibrate, Title: title, Scenario: scenario,
		Dir: o.out, StepSummary: os.Getenv("GITHUB_STEP_SUMMARY"), Claims: family, Remade: remade}.Write(stdout)
	if err != nil {
		return err
	}
	return job.VerdictExit(vs, o.inconclusive)
}

func variantList(r *results.Results) string {
	names := make([]string, len(r.Scenario.Variants))
	for i, v := range r.Scenario.Variants {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// untilDecidedLook judges results made until decided (run
// --until-decided) as the run's last look did: at the level that look was
// given (the looks share the family's alpha, stats.SpendAlpha), on the
// metrics, tolerances and alpha the run judged unless --metric,
// --tolerance or --alpha say otherwise. Judging such results at the full
// level would spend it again (2.6% false fails became 6.3%, measured by
// issue 42's review at 2c414e8).
func untilDecidedLook(o compare.Options, r *results.Results, changed func(string) bool) compare.Options {
	st := r.Stop
	if st == nil || st.Rounds < compare.MinRounds {
		return o
	}
	if j := st.Judging; j != nil && len(j.Metrics) > 0 { // none when the looks judged claims only
		if !changed("metric") {
			o.Metrics = j.Metrics
		}
		if !changed("tolerance") {
			o.Tolerances = j.Tolerances
		}
		if !changed("alpha") {
			o.Alpha = j.Alpha
		}
	}
	o.Look, o.MaxLooks = compare.Looks(st.Rounds, st.MaxRounds, st.Looks)
	return o
}
