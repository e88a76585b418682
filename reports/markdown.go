package reports

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
)

// writeMarkdown writes a GitHub-flavoured markdown summary that fits a CI
// step summary ($GITHUB_STEP_SUMMARY): the variant table, per-worker
// responses, invalid runs and, when given, the verdicts. Text from the
// results is escaped so that it renders as written.
func writeMarkdown(w io.Writer, d *Doc) error {
	r, sums, verdicts := d.Results, d.Summaries, d.Verdicts
	s := r.Scenario
	wl := s.Workload
	var b bytes.Buffer
	fmt.Fprintf(&b, "### lbbench: %s\n\n", mdEscape(s.Name))
	if s.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(s.Description))
	}
	if wl.Deterministic() {
		fmt.Fprintf(&b, "%d workers (concurrency %d), %s, %s.\n\n**%s.**\n\n",
			s.Workers.Count, s.Workers.Concurrency, mdEscape(DeterministicString(wl)), r.RoundsString(), mdEscape(closedLoopNote))
	} else {
		fmt.Fprintf(&b, "%d workers (concurrency %d), %s %s req/s for %s (+%s warm-up), %s. "+
			"Latency from the intended send time; percentiles of all valid runs merged.\n\n",
			s.Workers.Count, s.Workers.Concurrency, mdEscape(wl.Arrival.Kind), strconv.FormatFloat(wl.Arrival.MeanRate(wl.Duration), 'f', -1, 64),
			wl.Duration, wl.WarmupTime(), r.RoundsString())
	}
	for _, a := range answers(verdicts, s.Verdicts) {
		fmt.Fprintf(&b, "- **%s**\n", mdEscape(a.Text))
	}
	if len(verdicts) > 0 {
		b.WriteString("\n")
		pass, fail, inc := compare.CountOutcomes(verdicts)
		fmt.Fprintf(&b, "**Verdicts: %d fail, %d inconclusive, %d pass.**\n\n", fail, inc, pass)
	}

	b.WriteString("| variant | runs | requests | rate/s | errors | p50 | p90 | p99 | p99.9 | max | p99 by run | skew | send lag p99 |\n")
	b.WriteString("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, v := range sums {
		runs := strconv.Itoa(v.Runs)
		if v.Valid != v.Runs {
			runs = fmt.Sprintf("%d (%d valid)", v.Runs, v.Valid)
		}
		q := func(d time.Duration, name string) string {
			out := mdEscape(lowerBound(v)) + numfmt.Dur(d)
			if c := acrossCell(v, name); c != "" {
				out += " " + c
			}
			return out
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdEscape(v.Name), runs, v.Requests, v.Rate, errorsCell(v.Errors, v.Requests),
			q(v.Latency.P50, results.MetricP50), q(v.Latency.P90, ""), q(v.Latency.P99, results.MetricP99), q(v.Latency.P999, results.MetricP999), q(v.Latency.Max, ""),
			durList(v.RunP99), numfmt.Skew(v.Skew), numfmt.Dur(v.SendLagP99))
	}
	b.WriteString("\nPercentiles of all valid runs merged; in brackets the 95% interval of the runs' own values; `>=` marks a lower bound (a saturated run).\n")
	writeMarkdownWait(&b, sums)
	writeMarkdownWorkers(&b, sums)
	if steals, any := hostSteals(r); any {
		fmt.Fprintf(&b, "\n**Host%s**\n\n| variant | by run |\n|:--|:--|\n", mdEscape(stealHeading(r)))
		for _, row := range stealByVariant(r, steals) {
			fmt.Fprintf(&b, "| %s | %s |\n", mdEscape(row[0]), row[1])
		}
	}

	var invalid []string
	for _, v := range sums {
		invalid = append(invalid, v.Invalid...)
	}
	if len(invalid) > 0 {
		b.WriteString("\n**Invalid runs** (left out of the figures):\n\n")
		for _, why := range invalid {
			fmt.Fprintf(&b, "- %s\n", mdEscape(why))
		}
	}
	if !r.Complete {
		fmt.Fprintf(&b, "\n**Incomplete:** %d of %d runs finished (%s).\n", len(r.Runs), len(r.Order), mdEscape(r.Error))
	}

	for _, bc := range d.Bursts {
		fmt.Fprintf(&b, "\nLargest load per burst, %s: %d bursts of %d over %d workers%s, measured against `model balls` (random dispatch, exact)\n\n| largest load | measured | model |\n|--:|--:|--:|\n",
			mdEscape(bc.Variant), bc.Bursts, bc.Tasks, bc.Workers, bc.LeftOut())
		for _, row := range bc.Rows {
			fmt.Fprintf(&b, "| %d | %.3f | %.3f |\n", row.K, row.Measured, row.Exact)
		}
		fmt.Fprintf(&b, "| mean | %.2f | %.2f |\n", bc.MeasuredMean, bc.ExactMean)
	}
	writeClaimsMarkdown(&b, d.Claims)
	if len(verdicts) > 0 {
		b.WriteString("\n| variant | baseline | metric | verdict | ratio | interval (95% unless said) | tolerance |\n|:--|:--|:--|:--|--:|--:|--:|\n")
		for _, v := range verdicts {
			outcome := string(v.Outcome)
			if v.Outcome == compare.Fail {
				outcome = "**FAIL**"
			}
			ratio, ci, tol, _ := cells(v)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n",
				mdEscape(v.Variant), mdEscape(v.Baseline), mdEscape(v.Metric), outcome, ratio, ci, tol)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdEscape makes s render as literal text in a markdown table cell or
// paragraph: markdown punctuation is backslash-escaped, HTML is turned
// into entities, and line breaks into spaces.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeMarkdownWait writes the wait table when some variant's wait was
// measured.
func writeMarkdownWait(b *bytes.Buffer, sums []VariantSummary) {
	if !slices.ContainsFunc(sums, func(v VariantSummary) bool { return v.Wait != nil }) {
		return
	}
	b.WriteString("\n**Wait before a worker began** (the worker's stamp minus the intended send time; service excluded)\n\n| variant | " + strings.Join(waitHeads, " | ") + " |\n|:--|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, v := range sums {
		cells, ok := waitRow(v)
		if !ok {
			fmt.Fprintf(b, "| %s | not measured |  |  |  |  |  |  |\n", mdEscape(v.Name))
			continue
		}
		fmt.Fprintf(b, "| %s | %s |\n", mdEscape(v.Name), strings.Join(cells, " | "))
	}
}

// writeMarkdownWorkers writes the responses per worker, folded.
func writeMarkdownWorkers(b *bytes.Buffer, sums []VariantSummary) {
	b.WriteString("\n<details><summary>Responses per worker</summary>\n\n| variant | responses per worker (valid runs summed) |\n|:--|:--|\n")
	for _, v := range sums {
		parts := make([]string, len(v.Workers))
		for i, c := range v.Workers {
			parts[i] = strconv.FormatUint(c, 10)
		}
		fmt.Fprintf(b, "| %s | %s |\n", mdEscape(v.Name), strings.Join(parts, " "))
	}
	b.WriteString("\n</details>\n")
}
