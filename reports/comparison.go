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
)

// Calibration is an A/A calibration as a comparison prints it: the noise
// floor of each pair's baseline (its valid runs split in two interleaved
// halves) and, when the pairs were made in the same rounds, how a
// round-by-round comparison behaves at that noise.
type Calibration struct {
	// Of names what was split: "baseline" or "variant".
	Of string
	// Halves is the calibration of every baseline's halves.
	Halves []compare.Calibration
	// Paired says the runs were made in the same rounds: PairedCals,
	// their paired calibration, is printed after Halves.
	Paired     bool
	PairedCals []compare.PairedCalibration
}

// WriteCalibration writes c as text.
func WriteCalibration(w io.Writer, c *Calibration) error {
	fmt.Fprintf(w, "A/A calibration: each %s's valid runs split in two interleaved halves\n\n", c.Of)
	if err := writeCalibrationText(w, c.Halves); err != nil {
		return err
	}
	if !c.Paired {
		return nil
	}
	fmt.Fprintf(w, "\nPaired calibration: the round-to-round noise of each comparison, and what a round-by-round comparison decides at it\n\n")
	return writePairedCalibrationText(w, c.PairedCals)
}

// Comparison is one comparison, judged (job.Comparison judges it), with
// everything it writes: the verdicts printed, and the files of a
// comparison.
type Comparison struct {
	Pairs []compare.Pair
	// Verdicts are the pairs' verdicts.
	Verdicts []compare.Verdict
	// Calibration, when set, is printed before the verdicts.
	Calibration *Calibration
	// Title heads the markdown; Scenario names the JUnit test suite.
	Title, Scenario string
	// Dir, when set, receives verdicts.json, junit.xml, comparison.md and
	// the two benchstat files.
	Dir string
	// StepSummary, when set, is a file the markdown is appended to (a CI
	// job summary such as GitHub's $GITHUB_STEP_SUMMARY).
	StepSummary string
	// Remade counts, by cause, the runs made again because they came out
	// invalid (run --retry-invalid; harness.Remade): the line that states
	// the verdict says how many and why, in the text and the markdown.
	// Nil or empty: none was, and the line says nothing of it.
	Remade map[string]int
}

// Write prints the verdicts (after the calibration, when there is one) to
// w and writes the files c names. When one file fails the others are
// still written, and the error says which.
func (c Comparison) Write(w io.Writer) error {
	pairs, vs, title, scenario, out := c.Pairs, c.Verdicts, c.Title, c.Scenario, c.Dir
	if c.Calibration != nil {
		if err := WriteCalibration(w, c.Calibration); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if err := writeVerdictsText(w, vs, c.Remade); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := writeComparisonMarkdown(&md, title, vs, c.Remade); err != nil {
		return err
	}
	var errs []error
	if c.StepSummary != "" {
		errs = append(errs, appendFile(c.StepSummary, append(md.Bytes(), '\n')))
	}
	if out != "" {
		errs = append(errs, writeComparisonFiles(out, pairs, vs, md.Bytes(), scenario))
	}
	return errors.Join(errs...)
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
// are removed). Both sides' lines of a pair have one name (benchName), so
// that benchstat pairs them as compare.Compare did.
func writeComparisonFiles(dir string, pairs []compare.Pair, vs []compare.Verdict, md []byte, scenario string) error {
	var js, junit, base, cand bytes.Buffer
	if err := compare.WriteVerdicts(&js, vs); err != nil {
		return err
	}
	// Each verdict carries its pair's measured time (Verdict.RunTime).
	if err := writeJUnit(&junit, scenario, vs, junitTimes{}); err != nil {
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
			if err := writeBench(&base, benchName(p), p.Base); err != nil {
				return err
			}
			if err := writeBench(&cand, benchName(p), p.Cand); err != nil {
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
