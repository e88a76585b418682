package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
)

// ComparisonMarkdownFile is the comparison's markdown
// (writeComparisonMarkdown), a file a comparison writes beside
// verdicts.json.
const ComparisonMarkdownFile = "comparison.md"

// cells returns a verdict's ratio, interval, tolerance and p-value columns.
func cells(v compare.Verdict) (ratio, ci, tol, p string) {
	ratio, ci, tol, p = "-", "-", "-", "-"
	if v.Ratio != 0 {
		ratio = numfmt.Ratio(v.Ratio)
	}
	if v.CILow != 0 || v.CIHigh != 0 {
		ci = "[" + numfmt.Ratio(v.CILow) + ", " + numfmt.Ratio(v.CIHigh) + "]"
		if v.Level != 0 && v.Level != compare.ConfidenceLevel {
			ci += " " + numfmt.Pct4(v.Level)
		}
	}
	if v.Tolerance != 0 {
		m, _ := results.ComparisonMetric(v.Metric)
		tol = m.FormatTolerance(v.Tolerance)
	}
	if v.P != 0 {
		p = numfmt.P(v.P)
	}
	return ratio, ci, tol, p
}

// remadeNote says how many runs were made again and why (remade counts
// them by cause; Comparison.Remade), the most frequent cause first: "2
// runs re-made: generator fell behind ×2". Empty when none was.
func remadeNote(remade map[string]int) string {
	total := 0
	for _, n := range remade {
		total += n
	}
	if total == 0 {
		return ""
	}
	causes := slices.SortedFunc(maps.Keys(remade), func(a, b string) int {
		if c := cmp.Compare(remade[b], remade[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(causes))
	for _, c := range causes {
		if remade[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", c, remade[c]))
		}
	}
	runs := "runs"
	if total == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%d %s re-made: %s", total, runs, strings.Join(parts, ", "))
}

// outcomeCounts is the parenthesis after the overall verdict: the count
// of each outcome, then remade's note when runs were made again.
func outcomeCounts(vs []compare.Verdict, remade map[string]int) string {
	pass, fail, inc := compare.CountOutcomes(vs)
	s := fmt.Sprintf("%d fail, %d inconclusive, %d pass", fail, inc, pass)
	if note := remadeNote(remade); note != "" {
		s += "; " + note
	}
	return "(" + s + ")"
}

// writeVerdictsText writes verdicts as a terminal table, then the overall
// outcome (with the runs made again, remade, when any) and each verdict's
// reason.
func writeVerdictsText(w io.Writer, vs []compare.Verdict, remade map[string]int) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tbaseline\tmetric\tverdict\tratio\tinterval (95% unless said)\ttolerance\tp (Holm)\t")
	for _, v := range vs {
		ratio, ci, tol, p := cells(v)
		out := string(v.Outcome)
		if v.Outcome == compare.Fail {
			out = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", v.Variant, v.Baseline, v.Metric, out, ratio, ci, tol, p)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nverdict: %s %s\n", strings.ToUpper(string(compare.Overall(vs))), outcomeCounts(vs, remade))
	for _, v := range vs {
		if v.Detail != "" {
			fmt.Fprintf(&b, "  %s %s vs %s: %s: %s\n", v.Metric, v.Variant, v.Baseline, v.Outcome, v.Detail)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeComparisonMarkdown writes a comparison as GitHub-flavoured markdown
// for a CI step summary: a title, the overall outcome (with the runs made
// again, remade, when any), the verdict table and the reasons in a
// details block. Text is escaped to render as written.
func writeComparisonMarkdown(w io.Writer, title string, vs []compare.Verdict, remade map[string]int) error {
	var b bytes.Buffer
	word := map[compare.Outcome]string{compare.Pass: "pass", compare.Fail: "REGRESSION", compare.Inconclusive: "inconclusive"}[compare.Overall(vs)]
	fmt.Fprintf(&b, "### lbbench compare: %s\n\n**Verdict: %s** %s\n\n", mdEscape(title), word, mdEscape(outcomeCounts(vs, remade)))
	b.WriteString("| variant | baseline | metric | verdict | ratio | interval (95% unless said) | tolerance | p (Holm) |\n|:--|:--|:--|:--|--:|--:|--:|--:|\n")
	for _, v := range vs {
		ratio, ci, tol, p := cells(v)
		out := string(v.Outcome)
		if v.Outcome == compare.Fail {
			out = "**FAIL**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdEscape(v.Variant), mdEscape(v.Baseline), mdEscape(v.Metric), out, ratio, ci, tol, p)
	}
	b.WriteString("\n<details><summary>Why</summary>\n\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "- %s of %s vs %s: %s. %s\n", mdEscape(v.Metric), mdEscape(v.Variant), mdEscape(v.Baseline), v.Outcome, mdEscape(v.Detail))
	}
	b.WriteString("\n</details>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeCalibrationText writes A/A calibrations as a terminal table: the
// A/A estimate and interval, the noise floor, the run-to-run spread and
// the runs per side needed to call a 20% regression.
func writeCalibrationText(w io.Writer, cals []compare.Calibration) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tmetric\truns\tA/A estimate\t95% CI\tnoise floor\trun spread\truns/side for 20%\t")
	for _, c := range cals {
		m, _ := results.ComparisonMetric(c.Metric)
		est, ci, floor, spread, need := "-", "-", "-", "-", "-"
		if isFinite(c.Estimate) {
			est = numfmt.Ratio(c.Estimate)
		}
		if isFinite(c.CI.Low) {
			ci = "[" + numfmt.Ratio(c.CI.Low) + ", " + numfmt.Ratio(c.CI.High) + "]"
		}
		if isFinite(c.NoiseFloor) {
			floor = "±" + m.FormatTolerance(c.NoiseFloor)
		}
		if isFinite(c.Spread) {
			spread = strconv.FormatFloat(100*c.Spread, 'f', 1, 64) + "%"
		}
		switch {
		case c.RunsFor20 > 0:
			need = strconv.Itoa(c.RunsFor20)
		case !m.Absolute && isFinite(c.Spread):
			need = ">" + strconv.Itoa(compare.MaxRunsNeeded)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d+%d\t%s\t%s\t%s\t%s\t%s\t\n", c.Variant, c.Metric, c.RunsA, c.RunsB, est, ci, floor, spread, need)
	}
	tw.Flush()
	b.WriteString("\nnoise floor: how far from no change the A/A interval reaches; a tolerance below it is too tight to decide.\n" +
		"run spread: standard deviation of log(value) from run to run. runs/side for 20%: simulated runs per side\n" +
		"for a 20% regression to fail with 80% power at the metric's tolerance, with Holm over the metrics and variants compared.\n")
	_, err := w.Write(b.Bytes())
	return err
}

// CalibrationRounds and CalibrationTrials are the sequential design and
// the trials of the paired calibration "compare --calibrate" prints: the
// design of "run --until-decided --max-rounds 10".
const (
	CalibrationRounds = 10
	CalibrationTrials = 2000
)

// writePairedCalibrationText writes the paired calibration of cals as a
// table, with what its columns mean.
func writePairedCalibrationText(w io.Writer, cals []compare.PairedCalibration) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant	baseline	metric	rounds	sd of log ratio	A/A false-fail (95% CI)	fail at the tolerance	rounds to fail 10% / 20% / 40%	")
	for _, c := range cals {
		sd, ff, bf, need := "-", "-", "-", "-"
		if isFinite(c.SD) {
			sd = strconv.FormatFloat(c.SD, 'f', 3, 64)
			ff = fmt.Sprintf("%.4f [%.4f, %.4f]", c.FalseFail, c.FalseFailLow, c.FalseFailHigh)
			bf = fmt.Sprintf("%.4f", c.BoundaryFail)
			parts := make([]string, len(c.RoundsFor))
			for i, n := range c.RoundsFor {
				parts[i] = ">" + strconv.Itoa(c.MaxRounds)
				if n > 0 {
					parts[i] = strconv.Itoa(n)
				}
			}
			need = strings.Join(parts, " / ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", c.Variant, c.Baseline, c.Metric, c.Rounds, sd, ff, bf, need)
	}
	tw.Flush()
	if len(cals) > 0 {
		c := cals[0]
		fmt.Fprintf(&b, "\nsd of log ratio: how much the per-round ratio varies here (from your rounds). The rates and rounds are\n"+
			"simulated at that sd (%d trials each): a sequential comparison looking after rounds %d to %d, alpha %.3g per test\n"+
			"(%.3g shared by %d tests), the metric's tolerance; rounds to fail: by which round 80%% of the trials had failed.\n",
			CalibrationTrials, compare.MinRounds, c.MaxRounds, c.Alpha, c.Alpha*float64(c.Tests), c.Tests)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// verdictSentence says a verdict in one line: "p99 of least_conn vs
// reuseport: ratio 0.620 [0.550, 0.700], tolerance 10%".
func verdictSentence(v compare.Verdict) string {
	s := v.Metric + " of " + v.Variant
	if v.Baseline != "" {
		s += " vs " + v.Baseline
	}
	if v.Ratio != 0 {
		s += ": ratio " + numfmt.Ratio(v.Ratio)
		if v.CILow != 0 || v.CIHigh != 0 {
			s += " [" + numfmt.Ratio(v.CILow) + ", " + numfmt.Ratio(v.CIHigh) + "]"
		}
	}
	if v.Tolerance != 0 {
		m, _ := results.ComparisonMetric(v.Metric)
		s += ", tolerance " + m.FormatTolerance(v.Tolerance)
	}
	return s
}

// isFinite reports whether x is neither NaN nor infinite.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
