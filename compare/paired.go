package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// The paired method (measurement.md, "Across runs"): variants run in the
// same rounds are compared round by round. Each round is a block in which
// whatever drifts on a shared machine (a slower phase, a noisy neighbour)
// hits both sides alike, so the per-round log ratio cand/base cancels it:
// on the project's 2-CPU machines a paired comparison resolves about ±4%
// where unpaired runs need ±10 to ±30%.
//
// For each metric the per-round values d (log ratios; differences for an
// absolute metric) are put on the scale of badness b (how much worse the
// candidate is: d, or -d for a metric where higher is better) against the
// tolerance's bound B (log(1+tol), -log(1-tol), or tol). Two one-sided
// skew-safe t tests on the mean of b (stats.SkewSafeP: the least
// favourable p-value over normal and skewed round-to-round noise of
// either sign) ask "worse than the tolerance" (fail) and "within it"
// (pass); the standard deviation is taken as at least the metric's
// resolution, so equal rounds decide nothing by construction. The
// p-values are corrected together with Holm over every metric and pair
// compared, at the level a sequential look is given (SpendAlpha). A
// verdict is then decided only if the median round agrees with the mean:
// one bad round can move a mean far, but not a median past the bound. The
// interval shown is the mean ± the skew-safe critical value at the level
// of the test's Holm step, so "the whole interval is beyond the tolerance"
// and "the test rejects" are the same statement.

// MethodPaired and MethodUnpaired name how a verdict was reached
// (Verdict.Method).
const (
	MethodPaired   = "paired: mean of per-round log ratios, skew-safe t interval, Holm, median check"
	MethodUnpaired = "unpaired: one-sided Mann-Whitney against the tolerance, Hodges-Lehmann interval, Holm"
)

// MinRounds is the fewest paired rounds the paired method decides on.
const MinRounds = 3

// rounds are one pair's per-round values of one metric: the rounds in
// which both sides have a valid run with a value, in round order.
type rounds struct {
	round      []int
	base, cand []float64
	// left counts the rounds with a run on one side only, or an invalid
	// one, or no value.
	left int
}

func collectRounds(m results.Metric, p Pair) rounds {
	byRound := func(runs []results.Run) map[int]float64 {
		out := map[int]float64{}
		for i := range runs {
			r := &runs[i]
			if v, ok := m.Value(r); r.Valid && ok && !math.IsNaN(v) {
				out[r.Rep] = v
			}
		}
		return out
	}
	b, c := byRound(p.Base), byRound(p.Cand)
	all := map[int]bool{}
	for _, r := range p.Base {
		all[r.Rep] = true
	}
	for _, r := range p.Cand {
		all[r.Rep] = true
	}
	var rs rounds
	keys := make([]int, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		bv, okb := b[k]
		cv, okc := c[k]
		if !okb || !okc || (!m.Absolute && !(bv > 0 && cv > 0)) {
			rs.left++
			continue
		}
		rs.round = append(rs.round, k)
		rs.base, rs.cand = append(rs.base, bv), append(rs.cand, cv)
	}
	return rs
}

// pairedTest is one metric of one pair, on the badness scale.
type pairedTest struct {
	rs     rounds
	bad    []float64 // per-round badness (log ratio, sign by direction)
	bound  float64   // the tolerance on the badness scale
	mean   float64
	se     float64
	median float64
	// pFail and pPass are the one-sided p-values of "worse than the
	// tolerance" and "within it".
	pFail, pPass float64
}

// badScale maps a per-round log ratio (or difference) to badness and the
// tolerance to its bound.
func badScale(m results.Metric, tol float64) (sign, bound float64) {
	switch {
	case m.Absolute:
		return 1, tol
	case m.HigherIsWorse:
		return 1, math.Log1p(tol)
	}
	return -1, -math.Log1p(-min(tol, 0.999999))
}

func newPairedTest(m results.Metric, rs rounds, tol float64) pairedTest {
	t := pairedTest{rs: rs}
	sign, bound := badScale(m, tol)
	t.bound = bound
	for i := range t.rs.base {
		d := t.rs.cand[i] - t.rs.base[i]
		if !m.Absolute {
			d = math.Log(t.rs.cand[i] / t.rs.base[i])
		}
		t.bad = append(t.bad, sign*d)
	}
	n := len(t.bad)
	t.pFail, t.pPass = 1, 1
	if n < MinRounds {
		return t
	}
	t.mean, _ = stats.MeanInterval(t.bad, 0.5)
	t.se = stats.FlooredSE(t.bad, resolution(m))
	t.median = stats.Median(t.bad)
	z := (t.mean - bound) / t.se
	t.pFail, t.pPass = stats.SkewSafeP(n, z), stats.SkewSafeP(n, -z)
	return t
}

// Resolutions of a per-round difference: rounds that agree closer than
// this are not known to agree any closer, so the spread the test uses is
// at least this. An HDR histogram keeps 3 significant digits, so two runs'
// percentiles are not known to be closer than about 0.1% (0.001 in log);
// an error rate, not closer than one failure in 10,000 requests (a run of
// the default scenario makes about 7,700). Without a floor three equal
// rounds would decide at any level.
const (
	relativeResolution = 0.001
	absoluteResolution = 1e-4
)

func resolution(m results.Metric) float64 {
	if m.Absolute {
		return absoluteResolution
	}
	return relativeResolution
}

// interval is the two-sided interval of the mean badness at one-sided
// level alpha each way: the interval whose lying wholly beyond (or within)
// the bound is the test rejecting at alpha.
func (t pairedTest) interval(alpha float64) stats.Interval {
	n := len(t.bad)
	if n < MinRounds {
		return stats.Interval{Low: math.Inf(-1), High: math.Inf(1)}
	}
	q := stats.SkewSafeQuantile(n, alpha)
	return stats.Interval{Low: t.mean - q*t.se, High: t.mean + q*t.se}
}

// pairedItem is one test of a paired family.
type pairedItem struct {
	pair Pair
	m    results.Metric
	tol  float64
	t    pairedTest
}

// decidePaired decides every item of a paired family at family level
// alpha (already spent for this look), with Holm's step-down over the
// decision p-values and others, the p-values of the family's members
// another package decides (Options.Others), and returns their verdicts in
// order.
func decidePaired(items []pairedItem, alpha float64, others []float64) []Verdict {
	ps := make([]float64, len(items), len(items)+len(others))
	for i, it := range items {
		ps[i] = min(it.t.pFail, it.t.pPass)
	}
	steps := stats.HolmSteps(append(ps, others...), len(items), alpha)
	out := make([]Verdict, len(items))
	for i, it := range items {
		st := steps[i]
		level, p := st.StepLevel, ps[i] // its interval is shown at its own step's level
		v := Verdict{Variant: it.pair.Variant, Baseline: it.pair.Baseline, Metric: it.m.Name, Tolerance: it.tol,
			Method: MethodPaired, Rounds: len(it.t.bad), Outcome: Inconclusive}
		ci := it.t.interval(level)
		v.Level = 1 - 2*level
		sign, _ := badScale(it.m, it.tol)
		v.TestP = p
		if len(it.t.bad) >= MinRounds {
			v.P = st.Adjusted
			if !it.m.Absolute {
				v.Ratio = math.Exp(sign * it.t.mean)
				lo, hi := math.Exp(sign*ci.Low), math.Exp(sign*ci.High)
				v.CILow, v.CIHigh = min(lo, hi), max(lo, hi)
			}
		}
		var why string
		switch {
		case len(it.t.bad) < MinRounds:
			why = fmt.Sprintf("too few paired rounds to decide (%d; at least %d)", len(it.t.bad), MinRounds)
		case !st.Reached || p > level: // Holm stops at the first test it cannot reject
			why = pairedUndecided(it, ci, level)
		case it.t.pFail < it.t.pPass && it.t.median > it.t.bound:
			v.Outcome = Fail
			why = fmt.Sprintf("worse than the tolerance %s: the whole %s interval is beyond it (Holm step %d of %d, one-sided p %s < %s), and so is the median round",
				it.m.FormatTolerance(it.tol), levelString(level), st.Step, st.Of, numfmt.P(p), numfmt.P(level))
		case it.t.pPass <= it.t.pFail && it.t.median < it.t.bound:
			v.Outcome = Pass
			why = fmt.Sprintf("within the tolerance %s: the whole %s interval is (Holm step %d of %d, one-sided p %s < %s), and so is the median round",
				it.m.FormatTolerance(it.tol), levelString(level), st.Step, st.Of, numfmt.P(p), numfmt.P(level))
			if ci.High < 0 {
				why = "an improvement: " + why
			}
		default:
			// Holm rejected: its step-down goes on; only this verdict waits.
			why = "the median round disagrees with the mean (one round swings it): more rounds needed"
		}
		v.Detail = why + "; " + pairedEvidence(it)
		out[i] = v
	}
	return out
}

// levelString says a two-sided interval's level for one-sided alpha each
// way: "95%", "99.5%".
func levelString(alpha float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", 100*(1-2*alpha)), "0"), ".") + "%"
}

// pairedUndecided says why a paired test was not decided.
func pairedUndecided(it pairedItem, ci stats.Interval, level float64) string {
	t := it.m.FormatTolerance(it.tol)
	switch {
	case ci.Low > it.t.bound:
		return fmt.Sprintf("worse than the tolerance %s, but not yet significant at this look's level %s (Holm): more rounds needed", t, numfmt.P(level))
	case ci.High < it.t.bound:
		return fmt.Sprintf("within the tolerance %s, but not yet at this look's level %s (Holm): more rounds needed", t, numfmt.P(level))
	}
	return fmt.Sprintf("the %s interval straddles the tolerance %s: more rounds needed", levelString(level), t)
}

// pairedEvidence lists the per-round figures behind a paired verdict.
func pairedEvidence(it pairedItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d paired rounds", len(it.t.bad))
	if it.t.rs.left > 0 {
		fmt.Fprintf(&b, " (%d rounds left out: a side missing, invalid or without the figure)", it.t.rs.left)
	}
	if len(it.t.bad) == 0 {
		return b.String()
	}
	parts := make([]string, len(it.t.rs.base))
	for i := range it.t.rs.base {
		if it.m.Absolute {
			parts[i] = fmt.Sprintf("r%d %+.2f pt", it.t.rs.round[i], 100*(it.t.rs.cand[i]-it.t.rs.base[i]))
		} else {
			parts[i] = fmt.Sprintf("r%d %s", it.t.rs.round[i], numfmt.Ratio(it.t.rs.cand[i]/it.t.rs.base[i]))
		}
	}
	fmt.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	fmt.Fprintf(&b, "; median %s -> %s", it.m.Format(stats.Median(it.t.rs.base)), it.m.Format(stats.Median(it.t.rs.cand)))
	if len(it.t.bad) >= MinRounds {
		fmt.Fprintf(&b, "; round-to-round sd of the log ratio %.3f", stats.SD(it.t.bad))
	}
	return b.String()
}

// AllPaired reports whether every pair was made in the same rounds, so
// that Compare judges them round by round.
func AllPaired(pairs []Pair) bool { return paired(pairs) }

// paired reports whether every pair was made in the same rounds.
func paired(pairs []Pair) bool {
	return len(pairs) > 0 && !slices.ContainsFunc(pairs, func(p Pair) bool { return !p.Paired })
}

// RoundRatio is the paired comparison of one figure of two variants run
// in the same rounds: the mean of the per-round ratios a/b (geometric: a
// t interval on their logarithms) with its two-sided interval at one-sided
// level alpha each way, the median per-round ratio, and the rounds it
// rests on (those with a positive value on both sides). Claims judge
// their ratios with it. With fewer than MinRounds rounds the interval is
// infinite.
func RoundRatio(a, b map[int]float64, alpha float64) (ratio float64, ci stats.Interval, median float64, rounds []int) {
	var logs []float64
	for r, av := range a {
		if bv, ok := b[r]; ok && av > 0 && bv > 0 {
			rounds = append(rounds, r)
		}
	}
	sort.Ints(rounds)
	for _, r := range rounds {
		logs = append(logs, math.Log(a[r]/b[r]))
	}
	if len(logs) == 0 {
		return math.NaN(), stats.Interval{Low: math.NaN(), High: math.NaN()}, math.NaN(), nil
	}
	mean, iv := stats.SkewSafeMean(logs, relativeResolution, alpha)
	return math.Exp(mean), stats.Interval{Low: math.Exp(iv.Low), High: math.Exp(iv.High)}, math.Exp(stats.Median(logs)), rounds
}
