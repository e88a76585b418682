package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// sides are one pair's per-run values of one metric, valid runs only.
type sides struct {
	base, cand []float64
	// invalidBase and invalidCand count runs left out.
	invalidBase, invalidCand int
}

func collectSides(m results.Metric, p Pair) sides {
	var s sides
	take := func(runs []results.Run, dst *[]float64, invalid *int) {
		for i := range runs {
			if v, ok := m.Value(&runs[i]); runs[i].Valid && ok && !math.IsNaN(v) {
				*dst = append(*dst, v)
			} else {
				*invalid++
			}
		}
	}
	take(p.Base, &s.base, &s.invalidBase)
	take(p.Cand, &s.cand, &s.invalidCand)
	return s
}

// estimate is the effect of one metric: the candidate against the
// baseline as a ratio of medians (or a difference, for absolute metrics)
// with its interval, and the tests' raw p-values.
type estimate struct {
	point float64
	ci    stats.Interval
	mwuP  float64
	ksD   float64
	ksP   float64
}

// intervalOf is the confidence interval of the ratio (or difference) by
// method: NaN when there is none (a ratio of values that are not all
// positive), infinite when there are too few values for the level.
func intervalOf(m results.Metric, base, cand []float64, method string, resamples int, seed uint64) stats.Interval {
	nan := stats.Interval{Low: math.NaN(), High: math.NaN()}
	if method == IntervalBootstrap {
		f := stats.Ratio
		if m.Absolute {
			f = stats.Difference
		}
		return stats.BootstrapMedians(base, cand, f, resamples, ConfidenceLevel, seed)
	}
	if m.Absolute {
		_, ci := stats.ShiftInterval(base, cand, ConfidenceLevel)
		return ci
	}
	lb, lc := make([]float64, len(base)), make([]float64, len(cand))
	for i, x := range base {
		if !(x > 0) {
			return nan
		}
		lb[i] = math.Log(x)
	}
	for i, x := range cand {
		if !(x > 0) {
			return nan
		}
		lc[i] = math.Log(x)
	}
	_, ci := stats.ShiftInterval(lb, lc, ConfidenceLevel)
	return stats.Interval{Low: math.Exp(ci.Low), High: math.Exp(ci.High)}
}

// RatioInterval is the 95% confidence interval of median(cand) /
// median(base) that verdicts of relative metrics use by default
// (IntervalShift: the Hodges-Lehmann interval of the ratio, which inverts
// the Mann-Whitney test); claims judge their ratios with it too. It is
// NaN when a value is not positive, infinite with too few values.
func RatioInterval(base, cand []float64) stats.Interval {
	return intervalOf(results.Metric{HigherIsWorse: true}, base, cand, IntervalShift, 0, DefaultSeed)
}

// RunsInterval is the 95% interval of a figure across runs (a latency
// percentile of each run, say): a t interval on the logarithms of the
// values, so a geometric mean's, mapped back. NaN without at least two
// positive values.
func RunsInterval(values []float64) stats.Interval {
	logs := make([]float64, 0, len(values))
	for _, v := range values {
		if !(v > 0) {
			return stats.Interval{Low: math.NaN(), High: math.NaN()}
		}
		logs = append(logs, math.Log(v))
	}
	if len(logs) < 2 {
		return stats.Interval{Low: math.NaN(), High: math.NaN()}
	}
	_, ci := stats.MeanInterval(logs, ConfidenceLevel)
	return stats.Interval{Low: math.Exp(ci.Low), High: math.Exp(ci.High)}
}

func estimateOf(m results.Metric, base, cand []float64, o Options, seed uint64) estimate {
	f := stats.Ratio
	if m.Absolute {
		f = stats.Difference
	}
	e := estimate{point: f(stats.Median(cand), stats.Median(base)), mwuP: math.NaN(), ksP: math.NaN()}
	e.ci = intervalOf(m, base, cand, o.Interval, o.Resamples, seed)
	if len(base) > 0 && len(cand) > 0 {
		_, e.mwuP = stats.MannWhitney(cand, base)
		e.ksD, e.ksP = stats.KolmogorovSmirnov(cand, base)
	}
	return e
}

// decide applies the verdict rule to an estimate, given enough runs:
// fail when the corrected p-value is below alpha and the whole interval is
// worse than the tolerance; pass when the whole interval is better than
// the tolerance on the bad side; inconclusive otherwise.
func decide(m results.Metric, tol, alpha, p float64, ci stats.Interval) Outcome {
	if math.IsNaN(ci.Low) || math.IsNaN(ci.High) {
		return Inconclusive
	}
	bad := badInterval(m, ci)
	switch {
	case p < alpha && bad.Low > tol:
		return Fail
	case bad.High <= tol:
		return Pass
	}
	return Inconclusive
}

// reason says in a clause why a decided verdict came out as it did.
func reason(m results.Metric, out Outcome, tol, alpha, p float64, ci stats.Interval) string {
	bad := badInterval(m, ci)
	t := m.FormatTolerance(tol)
	switch out {
	case Fail:
		return fmt.Sprintf("significant (Holm p %s < %g) and the whole interval is worse than the tolerance %s", numfmt.P(p), alpha, t)
	case Pass:
		if bad.High < 0 {
			return "an improvement: the whole interval is better"
		}
		return "the whole interval is within the tolerance " + t
	}
	switch {
	case !isFinite(bad.Low) || !isFinite(bad.High) || bad.Low <= -1:
		return "too few runs for a 95% interval (4 a side are enough): more runs needed"
	case bad.Low > tol:
		return fmt.Sprintf("the interval is worse than the tolerance %s but the change is not significant (Holm p %s >= %g): more runs needed", t, numfmt.P(p), alpha)
	case bad.High > tol && bad.Low < -tol:
		return "the interval is wider than the tolerance on both sides: more runs needed"
	}
	return "the interval straddles the tolerance " + t + ": more runs needed"
}

// evidenceString lists the figures behind a verdict.
func evidenceString(m results.Metric, s sides, e estimate, pAdj float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d vs %d valid runs", len(s.base), len(s.cand))
	if s.invalidBase+s.invalidCand > 0 {
		fmt.Fprintf(&b, " (%d and %d left out as invalid)", s.invalidBase, s.invalidCand)
	}
	if len(s.base) == 0 || len(s.cand) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "; median %s -> %s", m.Format(stats.Median(s.base)), m.Format(stats.Median(s.cand)))
	if m.Absolute {
		fmt.Fprintf(&b, ", difference %+.2f pt", 100*e.point)
		if isFinite(e.ci.Low) {
			fmt.Fprintf(&b, " [%+.2f, %+.2f]", 100*e.ci.Low, 100*e.ci.High)
		}
	}
	fmt.Fprintf(&b, "; Mann-Whitney p %s (Holm %s)", numfmt.P(e.mwuP), numfmt.P(pAdj))
	fmt.Fprintf(&b, "; Kolmogorov-Smirnov D %.2f p %s", e.ksD, numfmt.P(e.ksP))
	if e.ksP < DefaultAlpha {
		b.WriteString(" (the distributions differ")
		if sb, sc := spreadOf(s.base), spreadOf(s.cand); isFinite(sb) && isFinite(sc) && sb > 0 {
			fmt.Fprintf(&b, "; run-to-run spread x%.2f", sc/sb)
		}
		b.WriteString(")")
	}
	return b.String()
}

// spreadOf is the interquartile range of x relative to its median.
func spreadOf(x []float64) float64 {
	return (stats.Quantile(x, 0.75) - stats.Quantile(x, 0.25)) / stats.Median(x)
}

// isFinite reports whether x is neither NaN nor infinite.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// badness maps a ratio or difference of m to how much worse the candidate
// is: +0.2 is 20% worse (or 0.2 more error rate), negative is better.
func badness(m results.Metric, x float64) float64 {
	switch {
	case m.Absolute:
		return x
	case m.HigherIsWorse:
		return x - 1
	default:
		return 1 - x
	}
}

// badInterval is the interval of badness for an interval of the estimate.
func badInterval(m results.Metric, ci stats.Interval) stats.Interval {
	a, b := badness(m, ci.Low), badness(m, ci.High)
	return stats.Interval{Low: min(a, b), High: max(a, b)}
}
