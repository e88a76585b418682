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
	return intervalAt(m, base, cand, method, resamples, seed, ConfidenceLevel)
}

// intervalAt is intervalOf at a two-sided level.
func intervalAt(m results.Metric, base, cand []float64, method string, resamples int, seed uint64, level float64) stats.Interval {
	nan := stats.Interval{Low: math.NaN(), High: math.NaN()}
	if method == IntervalBootstrap {
		f := stats.Ratio
		if m.Absolute {
			f = stats.Difference
		}
		return stats.BootstrapMedians(base, cand, f, resamples, level, seed)
	}
	if m.Absolute {
		_, ci := stats.ShiftInterval(base, cand, level)
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
	_, ci := stats.ShiftInterval(lb, lc, level)
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

// unpairedP returns the one-sided Mann-Whitney p-values of "worse than the
// tolerance" (fail) and "within it" (pass) for two independent samples:
// the candidate's values moved by the tolerance's bound on the scale of
// badness (logarithms for a relative metric) against the baseline's. ok is
// false when a relative metric has a value that is not positive.
func unpairedP(m results.Metric, base, cand []float64, tol float64) (pFail, pPass float64, ok bool) {
	sign, bound := badScale(m, tol)
	xb, xc := make([]float64, len(base)), make([]float64, len(cand))
	for i, x := range base {
		if !m.Absolute && !(x > 0) {
			return 1, 1, false
		}
		xb[i] = x
		if !m.Absolute {
			xb[i] = sign * math.Log(x)
		}
	}
	for i, x := range cand {
		if !m.Absolute && !(x > 0) {
			return 1, 1, false
		}
		xc[i] = x - bound
		if !m.Absolute {
			xc[i] = sign*math.Log(x) - bound
		}
	}
	return stats.MannWhitneyGreater(xc, xb), stats.MannWhitneyGreater(xb, xc), true
}

// unpairedDecided says why an unpaired test was decided.
func unpairedDecided(m results.Metric, out Outcome, tol, level, p float64, step, steps int, ci stats.Interval) string {
	t := m.FormatTolerance(tol)
	lv := levelString(level)
	if out == Fail {
		return fmt.Sprintf("worse than the tolerance %s: Mann-Whitney of the candidate moved by the tolerance, one-sided p %s < %s (Holm step %d of %d); the whole %s interval is beyond it", t, numfmt.P(p), numfmt.P(level), step, steps, lv)
	}
	why := fmt.Sprintf("within the tolerance %s: Mann-Whitney of the candidate moved by the tolerance, one-sided p %s < %s (Holm step %d of %d); the whole %s interval is within it", t, numfmt.P(p), numfmt.P(level), step, steps, lv)
	if bad := badInterval(m, ci); bad.High < 0 {
		why = "an improvement: " + why
	}
	return why
}

// unpairedUndecided says why an unpaired test was not decided.
func unpairedUndecided(m results.Metric, tol, level float64, ci stats.Interval) string {
	bad := badInterval(m, ci)
	t := m.FormatTolerance(tol)
	switch {
	case !isFinite(bad.Low) || !isFinite(bad.High) || bad.Low <= -1:
		return fmt.Sprintf("too few runs for a %s interval: more runs needed", levelString(level))
	case bad.Low > tol:
		return fmt.Sprintf("worse than the tolerance %s, but not yet significant at this step's level %s (Holm): more runs needed", t, numfmt.P(level))
	case bad.High < tol:
		return fmt.Sprintf("within the tolerance %s, but not yet at this step's level %s (Holm): more runs needed", t, numfmt.P(level))
	}
	return fmt.Sprintf("the %s interval straddles the tolerance %s: more runs needed", levelString(level), t)
}

// evidenceString lists the figures behind a verdict.
func evidenceString(m results.Metric, s sides, e estimate) string {
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
	fmt.Fprintf(&b, "; Mann-Whitney p %s (no difference, two-sided)", numfmt.P(e.mwuP))
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
