package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/results"
)

// CalibrateVariants writes the A/A calibration of every variant of r to w,
// each variant's valid runs split in two interleaved halves: the noise
// floor of results that have no baseline to compare with.
func CalibrateVariants(w io.Writer, r *results.Results, o compare.Options) error {
	var pairs []compare.Pair
	for _, v := range r.Scenario.Variants {
		pairs = append(pairs, compare.Pair{Variant: v.Name, Baseline: v.Name, Base: r.RunsOf(v.Name)})
	}
	// Runs-needed estimates assume a comparison of every other variant
	// with one of them on the chosen metrics.
	tests := len(o.WithDefaults().Metrics) * max(len(pairs)-1, 1)
	cals, err := compare.Calibrate(compare.HalvesOf(pairs), o, tests)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "A/A calibration: each variant's valid runs split in two interleaved halves\n\n")
	if err := WriteCalibrationText(w, cals); err != nil {
		return err
	}
	// The variants were made in the same rounds: how their round-by-round
	// comparison with the first variant behaves at this noise.
	if len(r.Scenario.Variants) < 2 {
		return nil
	}
	paired, err := compare.PairWith(r, r.Scenario.Variants[0].Name)
	if err != nil {
		return err
	}
	return writePairedCalibration(w, paired, o)
}

// writePairedCalibration prints the paired calibration of pairs.
func writePairedCalibration(w io.Writer, pairs []compare.Pair, o compare.Options) error {
	pcs, err := compare.CalibratePaired(pairs, o, CalibrationRounds, CalibrationTrials)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nPaired calibration: the round-to-round noise of each comparison, and what a round-by-round comparison decides at it\n\n")
	return WritePairedCalibrationText(w, pcs)
}

// Comparison is one comparison with everything it writes: the verdicts of
// Pairs under Options, printed, and the files of a comparison.
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
}

// Write compares, prints the verdicts (after the calibration, with
// compare.Calibrate) to w and writes the files c names. It returns the verdicts
// even when writing a file failed.
func (c Comparison) Write(w io.Writer) ([]compare.Verdict, error) {
	pairs, o, title, scenario, out := c.Pairs, c.Options, c.Title, c.Scenario, c.Dir
	if c.Calibrate {
		tests := len(o.WithDefaults().Metrics) * len(pairs)
		cals, err := compare.Calibrate(compare.HalvesOf(pairs), o, tests)
		if err != nil {
			return nil, err
		}
		o.Calibration = cals
		fmt.Fprintf(w, "A/A calibration: each baseline's valid runs split in two interleaved halves\n\n")
		if err := WriteCalibrationText(w, cals); err != nil {
			return nil, err
		}
		if compare.AllPaired(pairs) {
			if err := writePairedCalibration(w, pairs, o); err != nil {
				return nil, err
			}
		}
		fmt.Fprintln(w)
	}
	vs, err := compare.Compare(pairs, o)
	if err != nil {
		return nil, err
	}
	if err := WriteVerdictsText(w, vs); err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := WriteComparisonMarkdown(&md, title, vs); err != nil {
		return nil, err
	}
	var errs []error
	if c.StepSummary != "" {
		errs = append(errs, appendFile(c.StepSummary, append(md.Bytes(), '\n')))
	}
	if out != "" {
		errs = append(errs, writeComparisonFiles(out, pairs, vs, md.Bytes(), scenario))
	}
	return vs, errors.Join(errs...)
}

func appendFile(path string, data []byte) error {
	if err := files.Append(path, data); err != nil {
		return fmt.Errorf("reports: step summary: %w", err)
	}
	return nil
}

// writeComparisonFiles writes verdicts.json, junit.xml, comparison.md and
// the two benchmark files into dir. A pair with no valid run on a side is
// left out of the benchmark files, and said in the error after the rest is
// written; with no complete pair there are no benchmark files (old ones
// are removed). Both sides' lines of a pair have one name (BenchName), so
// that benchstat pairs them as compare.Compare did.
func writeComparisonFiles(dir string, pairs []compare.Pair, vs []compare.Verdict, md []byte, scenario string) error {
	var js, junit, base, cand bytes.Buffer
	if err := compare.WriteVerdicts(&js, vs); err != nil {
		return err
	}
	// Each verdict carries its pair's measured time (Verdict.RunTime).
	if err := WriteJUnit(&junit, scenario, vs, JUnitTimes{}); err != nil {
		return err
	}
	complete, oneSided := twoSided(pairs)
	out := map[string][]byte{
		compare.VerdictsFileName: js.Bytes(),
		JUnitFile:                junit.Bytes(),
		ComparisonMarkdownFile:   md,
	}
	if len(complete) > 0 {
		for _, p := range complete {
			if err := WriteBench(&base, BenchName(p), p.Base); err != nil {
				return err
			}
			if err := WriteBench(&cand, BenchName(p), p.Cand); err != nil {
				return err
			}
		}
		out[BaseBenchFile], out[CandBenchFile] = base.Bytes(), cand.Bytes()
	} else {
		// Files of an earlier comparison in dir would be read as this one's.
		for _, name := range []string{BaseBenchFile, CandBenchFile} {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	for name, data := range out {
		if err := files.Write(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return oneSided
}
