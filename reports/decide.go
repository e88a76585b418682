package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/results"
)

// sides are one pair's per-run values of one metric, valid runs only.
type sides struct {
	base, cand []float64
	// invalidBase and invalidCand count runs left out.
	invalidBase, invalidCand int
}

func collectSides(m metric, p Pair) sides {
	var s sides
	take := func(runs []results.Run, dst *[]float64, invalid *int) {
		for i := range runs {
			if v, ok := m.value(&runs[i]); runs[i].Valid && ok && !math.IsNaN(v) {
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
	ci    Interval
	mwuP  float64
	ksD   float64
	ksP   float64
}

// intervalOf is the confidence interval of the ratio (or difference) by
// method: NaN when there is none (a ratio of values that are not all
// positive), infinite when there are too few values for the level.
func intervalOf(m metric, base, cand []float64, method string, resamples int, seed uint64) Interval {
	nan := Interval{math.NaN(), math.NaN()}
	if method == IntervalBootstrap {
		f := Ratio
		if m.absolute {
			f = Difference
		}
		return BootstrapMedians(base, cand, f, resamples, ConfidenceLevel, seed)
	}
	if m.absolute {
		_, ci := ShiftInterval(base, cand, ConfidenceLevel)
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
	_, ci := ShiftInterval(lb, lc, ConfidenceLevel)
	return Interval{math.Exp(ci.Low), math.Exp(ci.High)}
}

func estimateOf(m metric, base, cand []float64, o CompareOptions, seed uint64) estimate {
	f := Ratio
	if m.absolute {
		f = Difference
	}
	e := estimate{point: f(Median(cand), Median(base)), mwuP: math.NaN(), ksP: math.NaN()}
	e.ci = intervalOf(m, base, cand, o.Interval, o.Resamples, seed)
	if len(base) > 0 && len(cand) > 0 {
		_, e.mwuP = MannWhitney(cand, base)
		e.ksD, e.ksP = KolmogorovSmirnov(cand, base)
	}
	return e
}

// decide applies the verdict rule to an estimate, given enough runs:
// fail when the corrected p-value is below alpha and the whole interval is
// worse than the tolerance; pass when the whole interval is better than
// the tolerance on the bad side; inconclusive otherwise.
func decide(m metric, tol, alpha, p float64, ci Interval) Outcome {
	if math.IsNaN(ci.Low) || math.IsNaN(ci.High) {
		return Inconclusive
	}
	bad := m.badInterval(ci)
	switch {
	case p < alpha && bad.Low > tol:
		return Fail
	case bad.High <= tol:
		return Pass
	}
	return Inconclusive
}

// reason says in a clause why a decided verdict came out as it did.
func reason(m metric, out Outcome, tol, alpha, p float64, ci Interval) string {
	bad := m.badInterval(ci)
	t := tolString(m, tol)
	switch out {
	case Fail:
		return fmt.Sprintf("significant (Holm p %s < %g) and the whole interval is worse than the tolerance %s", pString(p), alpha, t)
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
		return fmt.Sprintf("the interval is worse than the tolerance %s but the change is not significant (Holm p %s >= %g): more runs needed", t, pString(p), alpha)
	case bad.High > tol && bad.Low < -tol:
		return "the interval is wider than the tolerance on both sides: more runs needed"
	}
	return "the interval straddles the tolerance " + t + ": more runs needed"
}

func pString(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	if p < 0.001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// evidenceString lists the figures behind a verdict.
func evidenceString(m metric, s sides, e estimate, pAdj float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d vs %d valid runs", len(s.base), len(s.cand))
	if s.invalidBase+s.invalidCand > 0 {
		fmt.Fprintf(&b, " (%d and %d left out as invalid)", s.invalidBase, s.invalidCand)
	}
	if len(s.base) == 0 || len(s.cand) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "; median %s -> %s", metricString(m, Median(s.base)), metricString(m, Median(s.cand)))
	if m.absolute {
		fmt.Fprintf(&b, ", difference %+.2f pt", 100*e.point)
		if isFinite(e.ci.Low) {
			fmt.Fprintf(&b, " [%+.2f, %+.2f]", 100*e.ci.Low, 100*e.ci.High)
		}
	}
	fmt.Fprintf(&b, "; Mann-Whitney p %s (Holm %s)", pString(e.mwuP), pString(pAdj))
	fmt.Fprintf(&b, "; Kolmogorov-Smirnov D %.2f p %s", e.ksD, pString(e.ksP))
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
	s := slices.Clone(x)
	slices.Sort(s)
	return (quantileSorted(s, 0.75) - quantileSorted(s, 0.25)) / sortedMedian(s)
}
