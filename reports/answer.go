package reports

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// answer is what a comparison of one variant with its baseline came to,
// in one line: the line a reader looks for first.
type answer struct {
	// Text is the line: "least_conn: p99 0.590× reuseport's [0.460,
	// 0.770], better (decided after 3 rounds)".
	Text string
	// Class is how it reads: "good" (better, or no worse within the
	// tolerance), "bad" (worse) or "" (undecided).
	Class string
}

// answers are the answers of a comparison's verdicts, one per variant
// and baseline in the verdicts' order. Each says the headline metrics:
// those the scenario names (scenario.Scenario.Verdicts), else p99, else
// the pair's first verdict.
func answers(vs []compare.Verdict, headline []string) []answer {
	type pair struct{ variant, baseline string }
	var order []pair
	by := map[pair][]compare.Verdict{}
	for _, v := range vs {
		p := pair{v.Variant, v.Baseline}
		if _, ok := by[p]; !ok {
			order = append(order, p)
		}
		by[p] = append(by[p], v)
	}
	out := make([]answer, 0, len(order))
	for _, p := range order {
		var parts []string
		class := ""
		for i, v := range headlineVerdicts(by[p], headline) {
			text, c := answerPart(v)
			parts = append(parts, text)
			// The line reads as its worst part: bad beats undecided
			// beats good.
			if i == 0 || c == "bad" || (c == "" && class == "good") {
				class = c
			}
		}
		out = append(out, answer{Text: p.variant + ": " + strings.Join(parts, "; "), Class: class})
	}
	return out
}

// headlineVerdicts picks from one pair's verdicts those of the headline
// metrics, else p99's, else the first.
func headlineVerdicts(vs []compare.Verdict, headline []string) []compare.Verdict {
	for _, names := range [][]string{headline, {results.MetricP99}} {
		var out []compare.Verdict
		for _, v := range vs {
			if slices.Contains(names, v.Metric) {
				out = append(out, v)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return vs[:1]
}

// answerPart says one verdict as a part of an answer, and its class: the
// ratio and its interval (a metric compared as a ratio), then better,
// no worse (within the tolerance), worse or undecided, and the rounds.
func answerPart(v compare.Verdict) (text, class string) {
	m, _ := results.ComparisonMetric(v.Metric)
	base := v.Baseline
	if base == "" {
		base = "the baseline"
	}
	ratio, ci, tol, _ := cells(v)
	var b strings.Builder
	b.WriteString(v.Metric)
	if v.Ratio != 0 && !m.Absolute {
		b.WriteString(" " + ratio + "× " + base + "'s")
		if ci != "-" {
			b.WriteString(" " + ci)
		}
	} else {
		b.WriteString(" against " + base + "'s")
	}
	// The tolerance, when there is one, in words.
	tolerance := func(words string) string {
		if tol == "-" {
			return ""
		}
		return " (" + words + " " + tol + ")"
	}
	switch v.Outcome {
	case compare.Fail:
		class = "bad"
		b.WriteString(", worse" + tolerance("by more than"))
	case compare.Pass:
		class = "good"
		if better(v, m) {
			b.WriteString(", better")
		} else {
			b.WriteString(", no worse" + tolerance("within"))
		}
	default:
		b.WriteString(", undecided")
	}
	if v.Rounds > 0 {
		rounds := strconv.Itoa(v.Rounds) + " round"
		if v.Rounds > 1 {
			rounds += "s"
		}
		if v.Outcome == compare.Inconclusive {
			b.WriteString(" after " + rounds)
		} else {
			b.WriteString(" (decided after " + rounds + ")")
		}
	}
	return b.String(), class
}

// better reports whether v's whole interval lies on the better side of
// no change: below 1 for a metric where higher is worse, above 1 for one
// where higher is better. A metric compared as a difference (error rate)
// is never called better: its pass says within the tolerance.
func better(v compare.Verdict, m results.Metric) bool {
	if m.Absolute || v.Ratio == 0 || (v.CILow == 0 && v.CIHigh == 0) {
		return false
	}
	if m.HigherIsWorse {
		return v.CIHigh < 1
	}
	return v.CILow > 1
}
