package reports

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ComparisonMarkdownFile is the comparison's markdown
// (WriteComparisonMarkdown), a file a comparison writes beside
// verdicts.json.
const ComparisonMarkdownFile = "comparison.md"

// cells returns a verdict's ratio, interval, tolerance and p-value columns.
func cells(v Verdict) (ratio, ci, tol, p string) {
	ratio, ci, tol, p = "-", "-", "-", "-"
	if v.Ratio != 0 {
		ratio = ratioString(v.Ratio)
	}
	if v.CILow != 0 || v.CIHigh != 0 {
		ci = "[" + ratioString(v.CILow) + ", " + ratioString(v.CIHigh) + "]"
	}
	if v.Tolerance != 0 {
		tol = strconv.FormatFloat(100*v.Tolerance, 'g', 4, 64) + "%"
		if m, ok := lookupMetric(v.Metric); ok && m.absolute {
			tol = strconv.FormatFloat(100*v.Tolerance, 'g', 4, 64) + " pt"
		}
	}
	if v.P != 0 {
		p = pString(v.P)
	}
	return ratio, ci, tol, p
}

// WriteVerdictsText writes verdicts as a terminal table, then the overall
// outcome and each verdict's reason.
func WriteVerdictsText(w io.Writer, vs []Verdict) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tbaseline\tmetric\tverdict\tratio\t95% CI\ttolerance\tp (Holm)\t")
	for _, v := range vs {
		ratio, ci, tol, p := cells(v)
		out := string(v.Outcome)
		if v.Outcome == Fail {
			out = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", v.Variant, v.Baseline, v.Metric, out, ratio, ci, tol, p)
	}
	tw.Flush()
	pass, fail, inc := CountOutcomes(vs)
	fmt.Fprintf(&b, "\nverdict: %s (%d fail, %d inconclusive, %d pass)\n", strings.ToUpper(string(Overall(vs))), fail, inc, pass)
	for _, v := range vs {
		if v.Detail != "" {
			fmt.Fprintf(&b, "  %s %s vs %s: %s: %s\n", v.Metric, v.Variant, v.Baseline, v.Outcome, v.Detail)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteComparisonMarkdown writes a comparison as GitHub-flavoured markdown
// for a CI step summary: a title, the overall outcome, the verdict table
// and the reasons in a details block. Text is escaped to render as
// written.
func WriteComparisonMarkdown(w io.Writer, title string, vs []Verdict) error {
	var b bytes.Buffer
	pass, fail, inc := CountOutcomes(vs)
	word := map[Outcome]string{Pass: "pass", Fail: "REGRESSION", Inconclusive: "inconclusive"}[Overall(vs)]
	fmt.Fprintf(&b, "### lbbench compare: %s\n\n**Verdict: %s** (%d fail, %d inconclusive, %d pass)\n\n", mdEscape(title), word, fail, inc, pass)
	b.WriteString("| variant | baseline | metric | verdict | ratio | 95% CI | tolerance | p (Holm) |\n|:--|:--|:--|:--|--:|--:|--:|--:|\n")
	for _, v := range vs {
		ratio, ci, tol, p := cells(v)
		out := string(v.Outcome)
		if v.Outcome == Fail {
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

// WriteCalibrationText writes A/A calibrations as a terminal table: the
// A/A estimate and interval, the noise floor, the run-to-run spread and
// the runs per side needed to call a 20% regression.
func WriteCalibrationText(w io.Writer, cals []Calibration) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tmetric\truns\tA/A estimate\t95% CI\tnoise floor\trun spread\truns/side for 20%\t")
	for _, c := range cals {
		m, _ := lookupMetric(c.Metric)
		est, ci, floor, spread, need := "-", "-", "-", "-", "-"
		if isFinite(c.Estimate) {
			est = ratioString(c.Estimate)
		}
		if isFinite(c.CI.Low) {
			ci = "[" + ratioString(c.CI.Low) + ", " + ratioString(c.CI.High) + "]"
		}
		if isFinite(c.NoiseFloor) {
			floor = "±" + tolString(m, c.NoiseFloor)
		}
		if isFinite(c.Spread) {
			spread = strconv.FormatFloat(100*c.Spread, 'f', 1, 64) + "%"
		}
		switch {
		case c.RunsFor20 > 0:
			need = strconv.Itoa(c.RunsFor20)
		case !m.absolute && isFinite(c.Spread):
			need = ">" + strconv.Itoa(MaxRunsNeeded)
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
