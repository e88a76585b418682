package job

import (
	"io"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

// Comparison is one comparison: the verdicts of Pairs under Options,
// judged here and written by reports.Comparison (printed, and the files of
// a comparison).
type Comparison struct {
	Pairs   []compare.Pair
	Options compare.Options
	// Calibrate runs an A/A calibration of the baselines first, prints it
	// and uses it as the noise floor of the verdicts.
	Calibrate bool
	// Title heads the markdown; Scenario names the JUnit test suite.
	Title, Scenario string
	// Dir, when set, receives verdicts.json, junit.xml, comparison.md and
	// the two benchstat files.
	Dir string
	// StepSummary, when set, is a file the markdown is appended to (a CI
	// job summary such as GitHub's $GITHUB_STEP_SUMMARY).
	StepSummary string
	// Claims, when set, are the results whose statistical claims share
	// the comparison's Holm family: the run's own, when Pairs are its
	// comparison (SharesFamily). Nil: the comparison is a family alone.
	Claims *results.Results
	// Remade counts by cause the runs of the results compared that were
	// made again (harness.Remade): the verdict line says so. Nil: none.
	Remade map[string]int
}

// SharesFamily reports whether r's comparison was judged with its claims
// as one Holm family, so that judging it again must rank the claims too:
// not in a part of a claims suite whose claims are a family alone
// (results.Suite.ClaimsAlone); results made until decided say so
// (results.Judging.OneFamily; earlier ones judged two families); and a run
// of fixed rounds judges one.
func SharesFamily(r *results.Results) bool {
	if r.Suite != nil && r.Suite.ClaimsAlone {
		return false
	}
	st := r.Stop
	return st == nil || (st.Judging != nil && st.Judging.OneFamily)
}

// familyOf is r when its comparison shares its claims' family
// (SharesFamily), nil when the comparison is a family alone.
func familyOf(r *results.Results) *results.Results {
	if SharesFamily(r) {
		return r
	}
	return nil
}

// Write compares, prints the verdicts (after the calibration, with
// Calibrate) to w and writes the files c names. It returns the verdicts
// even when writing a file failed.
func (c Comparison) Write(w io.Writer) ([]compare.Verdict, error) {
	o := c.Options
	if c.Claims != nil && len(c.Claims.Scenario.Claims) > 0 {
		o.Others = claims.PValues(c.Claims)
	}
	out := reports.Comparison{Pairs: c.Pairs, Title: c.Title, Scenario: c.Scenario, Dir: c.Dir, StepSummary: c.StepSummary, Remade: c.Remade}
	if c.Calibrate {
		tests := len(o.WithDefaults().Metrics) * len(c.Pairs)
		cal, err := calibrate("baseline", c.Pairs, compare.AllPaired(c.Pairs), c.Pairs, o, tests)
		if err != nil {
			return nil, err
		}
		o.Calibration = cal.Halves
		out.Calibration = cal
	}
	vs, err := verdicts(c.Pairs, o)
	if err != nil {
		return nil, err
	}
	out.Verdicts = vs
	return vs, out.Write(w)
}

// CalibrateVariants writes the A/A calibration of every variant of r to w,
// each variant's valid runs split in two interleaved halves: the noise
// floor of results that have no baseline to compare with. When r has two
// or more variants, made in the same rounds, it adds how their
// round-by-round comparison with the first variant behaves at this noise.
func CalibrateVariants(w io.Writer, r *results.Results, o compare.Options) error {
	var pairs []compare.Pair
	for _, v := range r.Scenario.Variants {
		pairs = append(pairs, compare.Pair{Variant: v.Name, Baseline: v.Name, Base: r.RunsOf(v.Name)})
	}
	// Runs-needed estimates assume a comparison of every other variant
	// with one of them on the chosen metrics.
	tests := len(o.WithDefaults().Metrics) * max(len(pairs)-1, 1)
	var paired []compare.Pair
	if len(r.Scenario.Variants) >= 2 {
		var err error
		if paired, err = compare.PairWith(r, r.Scenario.Variants[0].Name); err != nil {
			return err
		}
	}
	cal, err := calibrate("variant", pairs, len(r.Scenario.Variants) >= 2, paired, o, tests)
	if err != nil {
		return err
	}
	return reports.WriteCalibration(w, cal)
}

// calibrate is the A/A calibration of pairs' baselines, split in halves
// (of names what was split: "baseline" or "variant"), and with paired the
// paired calibration of rounds, pairs made in the same rounds. tests is
// the number of comparisons the runs-needed estimates assume.
func calibrate(of string, pairs []compare.Pair, paired bool, rounds []compare.Pair, o compare.Options, tests int) (*reports.Calibration, error) {
	halves, err := compare.Calibrate(compare.HalvesOf(pairs), o, tests)
	if err != nil {
		return nil, err
	}
	cal := &reports.Calibration{Of: of, Halves: halves, Paired: paired}
	if paired {
		if cal.PairedCals, err = compare.CalibratePaired(rounds, o, reports.CalibrationRounds, reports.CalibrationTrials); err != nil {
			return nil, err
		}
	}
	return cal, nil
}

// verdicts judges pairs under o: the one place a job's comparison is
// judged (at the end, and at each look of UntilDecided).
func verdicts(pairs []compare.Pair, o compare.Options) ([]compare.Verdict, error) {
	return compare.Compare(pairs, o)
}
