package reports

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/workloads"
)

// writeBurstsText writes every variant's largest load per burst beside
// the model.
func writeBurstsText(w io.Writer, bursts []claims.VariantMaxLoad) {
	for _, b := range bursts {
		fmt.Fprintf(w, "\nlargest load per burst, %s (%d bursts of %d over %d workers%s): share of bursts, measured vs model balls (random dispatch, exact)\n",
			b.Variant, b.Bursts, b.Tasks, b.Workers, b.LeftOut())
		for _, row := range b.Rows {
			fmt.Fprintf(w, "  %2d: %.3f  %.3f\n", row.K, row.Measured, row.Exact)
		}
		fmt.Fprintf(w, "  mean: %.2f  %.2f\n", b.MeasuredMean, b.ExactMean)
	}
}

// writeClaimsText writes the claims and their evidence as plain text.
func writeClaimsText(w io.Writer, cs []claims.Result) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nclaims\n")
	for _, c := range cs {
		fmt.Fprintf(w, "  %-12s %s\n               check: %s\n               evidence: %s\n", strings.ToUpper(string(c.Outcome)), c.Say, c.Check, c.Evidence)
		if m := c.MaxLoad; m != nil {
			fmt.Fprintf(w, "               largest load per burst (%d bursts of %d over %d workers): measured vs model exact\n", m.Bursts, m.Tasks, m.Workers)
			for _, row := range m.Rows() {
				fmt.Fprintf(w, "                 %2d: %.3f  %.3f\n", row.K, row.Measured, row.Exact)
			}
			fmt.Fprintf(w, "                 mean: %.2f  %.2f\n", m.MeasuredMean, m.ExactMean)
		}
	}
}

// closedLoopNote is what every report says about a closed-loop (or
// burst) scenario's latency.
const closedLoopNote = "CLOSED LOOP: latency is response time (from sending a request to its answer), not from an intended send time; " +
	"it hides queueing (coordinated omission), so these figures are not comparable with open-loop ones: read the counts, not the tail"

// DeterministicString describes a closed-loop or burst workload in one
// phrase.
func DeterministicString(wl workloads.Spec) string {
	switch {
	case wl.Closed != nil:
		s := fmt.Sprintf("closed loop, %d named clients %s, %d requests in all", len(wl.Clients.Named), wl.Closed.Order, wl.TotalRequests())
		if len(wl.Closed.Pattern) > 0 {
			s += ", classes by pattern " + strings.Join(wl.Closed.Pattern, ",")
		}
		if wl.Closed.Think > 0 {
			s += ", think " + wl.Closed.Think.String()
		}
		return s
	case wl.Bursts != nil:
		return fmt.Sprintf("%d bursts of %d simultaneous new connections", wl.Bursts.Count, wl.Bursts.Size)
	}
	return ""
}

// writeClaimsMarkdown writes the claims as a markdown table.
func writeClaimsMarkdown(b *bytes.Buffer, cs []claims.Result) {
	if len(cs) == 0 {
		return
	}
	h, f, u := claims.Counts(cs)
	fmt.Fprintf(b, "\n**Claims: %d hold, %d fail, %d inconclusive.**\n\n| claim | check | outcome | evidence |\n|:--|:--|:--|:--|\n", h, f, u)
	for _, c := range cs {
		out := string(c.Outcome)
		if c.Outcome == claims.Fails {
			out = "**FAILS**"
		}
		fmt.Fprintf(b, "| %s | `%s` | %s | %s |\n", mdEscape(c.Say), strings.ReplaceAll(c.Check, "`", "'"), out, mdEscape(c.Evidence))
	}
	for _, c := range cs {
		if m := c.MaxLoad; m != nil {
			fmt.Fprintf(b, "\nLargest load per burst, %s: %d bursts of %d over %d workers, measured against `model balls` (random dispatch, exact)\n\n| largest load | measured | model |\n|--:|--:|--:|\n",
				mdEscape(c.Check), m.Bursts, m.Tasks, m.Workers)
			for _, row := range m.Rows() {
				fmt.Fprintf(b, "| %d | %.3f | %.3f |\n", row.K, row.Measured, row.Exact)
			}
			fmt.Fprintf(b, "| mean | %.2f | %.2f |\n", m.MeasuredMean, m.ExactMean)
		}
	}
}

// claimView is one claim row of the HTML report.
type claimView struct {
	claims.Result
	Class   string
	MaxLoad *maxLoadView
}

type maxLoadView struct {
	*claims.MaxLoadComparison
	Rows []claims.MaxLoadRow
}

// buildClaims builds the claim table and its count by outcome.
func buildClaims(cs []claims.Result) (rows []claimView, sum string) {
	if len(cs) == 0 {
		return nil, ""
	}
	for _, c := range cs {
		cv := claimView{Result: c, Class: string(compare.Inconclusive)}
		switch c.Outcome {
		case claims.Holds:
			cv.Class = string(compare.Pass)
		case claims.Fails:
			cv.Class = string(compare.Fail)
		}
		if c.MaxLoad != nil {
			cv.MaxLoad = &maxLoadView{MaxLoadComparison: c.MaxLoad, Rows: c.MaxLoad.Rows()}
		}
		rows = append(rows, cv)
	}
	h, f, u := claims.Counts(cs)
	return rows, fmt.Sprintf("%d hold, %d fail, %d inconclusive", h, f, u)
}
