package reports

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// Metric names Compare knows.
const (
	MetricP50        = "p50"
	MetricP99        = "p99"
	MetricP999       = "p99.9"
	MetricThroughput = "throughput"
	MetricErrorRate  = "error_rate"
)

// Defaults of CompareOptions, exported so that flags reuse them.
const (
	// DefaultAlpha is the family-wise significance level.
	DefaultAlpha = 0.05
	// DefaultTolerance is the accepted relative change of the latency
	// percentiles and of throughput (0.10: 10%).
	DefaultTolerance = 0.10
	// DefaultErrorRateTolerance is the accepted absolute rise of the error
	// rate (0.01: one percentage point).
	DefaultErrorRateTolerance = 0.01
	// DefaultResamples is the number of bootstrap resamples.
	DefaultResamples = 2000
	// DefaultSeed seeds the bootstrap, so a comparison is reproducible.
	DefaultSeed = 1
	// ConfidenceLevel is the level of the intervals.
	ConfidenceLevel = 0.95
)

// Interval methods of CompareOptions.
const (
	// IntervalShift is the Hodges-Lehmann interval of the ratio (of the
	// difference, for error_rate), the one that inverts the Mann-Whitney
	// test (ShiftInterval on logarithms): exact for any number of runs,
	// and one far-off run moves it by one order statistic. 3 runs a side
	// are too few for a 95% interval; 4 are enough.
	IntervalShift = "shift"
	// IntervalBootstrap is the percentile bootstrap interval of the ratio
	// of medians (BootstrapMedians). With few runs its bounds are close to
	// the extreme runs, so one starved run can stretch it past the
	// tolerance.
	IntervalBootstrap = "bootstrap"
	// DefaultInterval is the method CompareOptions uses by default.
	DefaultInterval = IntervalShift
)

// MinRuns is the fewest valid runs per side a comparison decides on. With
// fewer, a verdict is always inconclusive, never pass: two runs cannot
// show that a change is small.
const MinRuns = 3

// BuildSeparator joins a variant's name and its build in the name of a
// variant that runs another build of lbbench ("least_conn@base", see
// topologies.Variant.Build).
const BuildSeparator = "@"

// metric describes how a per-run figure is compared.
type metric struct {
	name string
	// higherIsWorse: latency and error rate; throughput is the other way.
	higherIsWorse bool
	// absolute compares the difference of medians (error rate, often 0)
	// rather than their ratio; the tolerance is then absolute too.
	absolute bool
	// benchUnit is the unit of the metric in Go benchmark lines.
	benchUnit string
	value     func(r *results.Run) (float64, bool)
}

func quantileMetric(name string, q float64, unit string) metric {
	return metric{name: name, higherIsWorse: true, benchUnit: unit, value: func(r *results.Run) (float64, bool) {
		if r.Latency == nil || r.Latency.Histogram == nil || r.Latency.TotalCount() == 0 {
			return 0, false
		}
		return float64(r.Latency.Quantile(q)), true
	}}
}

var metrics = []metric{
	quantileMetric(MetricP50, 0.50, "p50-ns"),
	quantileMetric(MetricP99, 0.99, "p99-ns"),
	quantileMetric(MetricP999, 0.999, "p99.9-ns"),
	{name: MetricThroughput, benchUnit: "req/s", value: func(r *results.Run) (float64, bool) {
		if r.Duration <= 0 || r.Errors > r.Requests {
			return 0, false
		}
		return float64(r.Requests-r.Errors) / r.Duration.Seconds(), true
	}},
	{name: MetricErrorRate, higherIsWorse: true, absolute: true, benchUnit: "error-ratio", value: func(r *results.Run) (float64, bool) {
		if r.Requests == 0 {
			return 0, false
		}
		return float64(r.Errors) / float64(r.Requests), true
	}},
}

func lookupMetric(name string) (metric, bool) {
	for _, m := range metrics {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// Metrics returns the names of every metric Compare knows, in report
// order.
func Metrics() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return names
}

// MetricValue returns run r's value of the named metric: latency
// percentiles (from the run's corrected-latency histogram) in nanoseconds,
// throughput in successful requests per second of the measured window, the
// error rate as a fraction of requests. ok is false for an unknown metric
// or a run without the data.
func MetricValue(r *results.Run, name string) (v float64, ok bool) {
	m, found := lookupMetric(name)
	if !found {
		return 0, false
	}
	return m.value(r)
}

// Pair is one candidate and the baseline it is compared with.
type Pair struct {
	// Variant labels the candidate; Baseline the baseline.
	Variant, Baseline string
	// Base and Cand are the runs of each side, invalid ones included:
	// Compare leaves those out and says how many it left out.
	Base, Cand []results.Run
}

// runsOf returns r's runs of the named variant, in run order.
func runsOf(r *results.Results, name string) []results.Run {
	var out []results.Run
	for _, run := range r.Runs {
		if run.Variant == name {
			out = append(out, run)
		}
	}
	return out
}

// PairVariants pairs the same-named variants of two results, in cand's
// scenario order; the baseline is labelled name@base. Variants found in
// only one of them are not compared. It fails when none is shared.
func PairVariants(base, cand *results.Results) ([]Pair, error) {
	var pairs []Pair
	for _, v := range cand.Scenario.Variants {
		if !slices.ContainsFunc(base.Scenario.Variants, func(b scenario.Variant) bool { return b.Name == v.Name }) {
			continue
		}
		pairs = append(pairs, Pair{Variant: v.Name, Baseline: v.Name + BuildSeparator + "base",
			Base: runsOf(base, v.Name), Cand: runsOf(cand, v.Name)})
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("reports: compare: the results share no variant name (baseline %s, candidate %s)",
			variantNames(base), variantNames(cand))
	}
	return pairs, nil
}

// PairWith pairs every other variant of r with its variant named baseline,
// in scenario order.
func PairWith(r *results.Results, baseline string) ([]Pair, error) {
	if !slices.ContainsFunc(r.Scenario.Variants, func(v scenario.Variant) bool { return v.Name == baseline }) {
		return nil, fmt.Errorf("reports: compare: no baseline variant %q (variants: %s)", baseline, variantNames(r))
	}
	base := runsOf(r, baseline)
	var pairs []Pair
	for _, v := range r.Scenario.Variants {
		if v.Name != baseline {
			pairs = append(pairs, Pair{Variant: v.Name, Baseline: baseline, Base: base, Cand: runsOf(r, v.Name)})
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("reports: compare: %q is the only variant; nothing to compare it with", baseline)
	}
	return pairs, nil
}

// PairBuilds pairs every variant that runs another build of lbbench
// (topologies.Variant.Build, named name@build by lbbench run --baseline)
// with the variant of that name that runs this build, in scenario order.
// It returns nil when r has no such variants.
func PairBuilds(r *results.Results) []Pair {
	var pairs []Pair
	for _, b := range r.Scenario.Variants {
		if b.Build == "" {
			continue
		}
		name, ok := strings.CutSuffix(b.Name, BuildSeparator+b.Build)
		if !ok {
			continue
		}
		for _, c := range r.Scenario.Variants {
			if c.Name == name && c.Build == "" {
				pairs = append(pairs, Pair{Variant: c.Name, Baseline: b.Name, Base: runsOf(r, b.Name), Cand: runsOf(r, c.Name)})
			}
		}
	}
	return pairs
}

func variantNames(r *results.Results) string {
	names := make([]string, len(r.Scenario.Variants))
	for i, v := range r.Scenario.Variants {
		names[i] = v.Name
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// CompareOptions configures Compare. The zero value compares every metric
// with the default tolerances.
type CompareOptions struct {
	// Metrics are the metrics compared, from Metrics(); empty means all.
	Metrics []string
	// Tolerances maps a metric to its accepted change: relative for
	// latency and throughput (0.1 for 10%), absolute for error_rate (0.01
	// for one percentage point). A metric not in the map gets
	// DefaultTolerance or DefaultErrorRateTolerance.
	Tolerances map[string]float64
	// Alpha is the family-wise significance level over every metric and
	// pair of one comparison (Holm); zero means DefaultAlpha.
	Alpha float64
	// Resamples is the number of bootstrap resamples; zero means
	// DefaultResamples.
	Resamples int
	// Seed seeds the bootstrap; zero means DefaultSeed.
	Seed uint64
	// Interval is how the confidence interval of the ratio is computed:
	// IntervalShift or IntervalBootstrap; empty means DefaultInterval.
	Interval string
	// Calibration holds A/A noise floors (see Calibrate); a verdict whose
	// tolerance is below the noise floor of its baseline (or candidate)
	// and metric is inconclusive, as too tight to decide. Nil means none.
	Calibration []Calibration
}

// WithDefaults returns a copy of o with zero values filled in.
func (o CompareOptions) WithDefaults() CompareOptions {
	if len(o.Metrics) == 0 {
		o.Metrics = Metrics()
	}
	tol := make(map[string]float64, len(metrics))
	for _, m := range metrics {
		tol[m.name] = DefaultTolerance
		if m.absolute {
			tol[m.name] = DefaultErrorRateTolerance
		}
	}
	for k, v := range o.Tolerances {
		tol[k] = v
	}
	o.Tolerances = tol
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Interval == "" {
		o.Interval = DefaultInterval
	}
	return o
}

// Validate reports the first problem in o, naming the field. Call it on
// the result of WithDefaults.
func (o CompareOptions) Validate() error {
	known := Metrics()
	seen := map[string]bool{}
	for _, m := range o.Metrics {
		if !slices.Contains(known, m) {
			return fmt.Errorf("reports: compare: metrics: unknown metric %q (known: %s)", m, strings.Join(known, ", "))
		}
		if seen[m] {
			return fmt.Errorf("reports: compare: metrics: %q given twice", m)
		}
		seen[m] = true
	}
	for k, v := range o.Tolerances {
		m, ok := lookupMetric(k)
		if !ok {
			return fmt.Errorf("reports: compare: tolerances: unknown metric %q (known: %s)", k, strings.Join(known, ", "))
		}
		if !(v > 0) || (m.absolute && v > 1) || v > 10 {
			return fmt.Errorf("reports: compare: tolerances[%s]: must be in (0, %d], got %g", k, map[bool]int{true: 1, false: 10}[m.absolute], v)
		}
	}
	if !(o.Alpha > 0 && o.Alpha <= 0.5) {
		return fmt.Errorf("reports: compare: alpha: must be in (0, 0.5], got %g", o.Alpha)
	}
	if o.Resamples < 100 {
		return fmt.Errorf("reports: compare: resamples: must be >= 100, got %d", o.Resamples)
	}
	if o.Interval != IntervalShift && o.Interval != IntervalBootstrap {
		return fmt.Errorf("reports: compare: interval: want %s or %s, got %q", IntervalShift, IntervalBootstrap, o.Interval)
	}
	return nil
}

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

// badness maps a ratio or difference to how much worse the candidate is:
// +0.2 is 20% worse (or 0.2 more error rate), negative is better.
func (m metric) badness(x float64) float64 {
	switch {
	case m.absolute:
		return x
	case m.higherIsWorse:
		return x - 1
	default:
		return 1 - x
	}
}

// badInterval is the interval of badness for an interval of the estimate.
func (m metric) badInterval(ci Interval) Interval {
	a, b := m.badness(ci.Low), m.badness(ci.High)
	return Interval{min(a, b), max(a, b)}
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

// Compare compares every pair on every metric of o and returns one
// verdict per pair and metric, pair by pair. Per metric it takes each
// valid run's value, tests the two sides with Mann-Whitney U (and
// Kolmogorov-Smirnov, reported in the detail), corrects the U tests'
// p-values with Holm over all pairs and metrics, and gives the ratio of
// medians (candidate/baseline; the difference for error_rate) with a 95%
// interval by o.Interval. A side with fewer than MinRuns valid runs makes
// the verdict inconclusive. It fails only on invalid options or no pairs.
// It is deterministic: the bootstrap is seeded.
func Compare(pairs []Pair, o CompareOptions) ([]Verdict, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, errors.New("reports: compare: nothing to compare")
	}
	type item struct {
		pair Pair
		m    metric
		s    sides
		e    estimate
	}
	var items []item
	var ps []float64
	for pi, p := range pairs {
		for mi, name := range o.Metrics {
			m, _ := lookupMetric(name)
			s := collectSides(m, p)
			seed := o.Seed + uint64(pi*len(metrics)+mi)
			items = append(items, item{pair: p, m: m, s: s, e: estimateOf(m, s.base, s.cand, o, seed)})
			ps = append(ps, items[len(items)-1].e.mwuP)
		}
	}
	adjusted := Holm(ps)
	verdicts := make([]Verdict, len(items))
	for i, it := range items {
		tol := o.Tolerances[it.m.name]
		v := Verdict{Variant: it.pair.Variant, Baseline: it.pair.Baseline, Metric: it.m.name, Tolerance: tol}
		if !it.m.absolute && isFinite(it.e.point) {
			v.Ratio = it.e.point
			if isFinite(it.e.ci.Low) && isFinite(it.e.ci.High) {
				v.CILow, v.CIHigh = it.e.ci.Low, it.e.ci.High
			}
		}
		p := adjusted[i]
		if !math.IsNaN(p) {
			v.P = p
		}
		nb, nc := len(it.s.base), len(it.s.cand)
		var why string
		switch {
		case nb < MinRuns || nc < MinRuns:
			v.Outcome = Inconclusive
			why = fmt.Sprintf("too few valid runs to decide (at least %d per side)", MinRuns)
		case !isFinite(it.e.point) || math.IsNaN(it.e.ci.Low):
			v.Outcome = Inconclusive
			why = "no ratio: some runs' values are zero"
		default:
			v.Outcome = decide(it.m, tol, o.Alpha, p, it.e.ci)
			if floor, ok := noiseFloor(o.Calibration, it.pair, it.m.name); ok && floor > tol {
				why = fmt.Sprintf("tolerance %s is below the A/A noise floor %s: too tight to decide (would be %s)",
					tolString(it.m, tol), tolString(it.m, floor), v.Outcome)
				v.Outcome = Inconclusive
			} else {
				why = reason(it.m, v.Outcome, tol, o.Alpha, p, it.e.ci)
			}
		}
		v.Detail = why + "; " + evidenceString(it.m, it.s, it.e, p)
		verdicts[i] = v
	}
	return verdicts, nil
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// noiseFloor finds the calibration of the pair's baseline or candidate for
// a metric.
func noiseFloor(cals []Calibration, p Pair, metric string) (float64, bool) {
	for _, c := range cals {
		if c.Metric == metric && (c.Variant == p.Baseline || c.Variant == p.Variant) && isFinite(c.NoiseFloor) {
			return c.NoiseFloor, true
		}
	}
	return 0, false
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

func tolString(m metric, tol float64) string {
	if m.absolute {
		return strconv.FormatFloat(100*tol, 'g', 3, 64) + " pt"
	}
	return strconv.FormatFloat(100*tol, 'g', 3, 64) + "%"
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

func metricString(m metric, v float64) string {
	switch {
	case m.absolute:
		return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
	case m.name == MetricThroughput:
		return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
	}
	return Dur(time.Duration(v))
}

// Overall folds verdicts into one outcome: fail when any failed, else
// inconclusive when any was, else pass. No verdicts are inconclusive.
func Overall(vs []Verdict) Outcome {
	if len(vs) == 0 {
		return Inconclusive
	}
	pass, fail, _ := CountOutcomes(vs)
	switch {
	case fail > 0:
		return Fail
	case pass == len(vs):
		return Pass
	}
	return Inconclusive
}

// Calibration is the A/A noise of one variant and metric: two samples of
// runs of the same thing compared as if they were baseline and candidate.
type Calibration struct {
	// Variant names what was run twice; Metric the metric.
	Variant string
	Metric  string
	// RunsA and RunsB count the valid runs of each sample.
	RunsA int
	RunsB int
	// Estimate is B/A of the medians (B-A for error_rate) and CI its
	// bootstrap interval.
	Estimate float64
	CI       Interval
	// NoiseFloor is how far from "no change" the A/A interval reaches
	// (a relative change, or absolute for error_rate): a tolerance below
	// it cannot be decided with this many runs. The interval is always the
	// percentile bootstrap, which exists for two runs a side, where the
	// shift interval of halves of a few runs is infinite; with so few runs
	// it is narrower than the truth, so the floor errs low: a tolerance
	// below it is surely too tight. NaN when unknown.
	NoiseFloor float64
	// Spread is the standard deviation of the log of the per-run values
	// within each sample, pooled (for relative metrics; NaN for
	// error_rate): the run-to-run noise of this machine.
	Spread float64
	// RunsFor20 is the runs per side a comparison needs to call a 20%
	// regression of this metric with 80% power, by simulation from Spread
	// (see RunsNeeded, with the family of tests given to Calibrate); 0
	// when not estimated or more than MaxRunsNeeded.
	RunsFor20 int
}

// SplitHalves splits the valid runs of runs, in run order, into two
// interleaved samples (1st, 3rd, ... and 2nd, 4th, ...), so that slow
// drift of the machine falls on both alike.
func SplitHalves(runs []results.Run) (a, b []results.Run) {
	i := 0
	for _, r := range runs {
		if !r.Valid {
			continue
		}
		if i%2 == 0 {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
		i++
	}
	return a, b
}

// HalvesOf returns, for every pair, an A/A pair of its baseline's valid
// runs split by SplitHalves, labelled with the baseline's name.
func HalvesOf(pairs []Pair) []Pair {
	var out []Pair
	seen := map[string]bool{}
	for _, p := range pairs {
		if seen[p.Baseline] {
			continue
		}
		seen[p.Baseline] = true
		a, b := SplitHalves(p.Base)
		out = append(out, Pair{Variant: p.Baseline, Baseline: p.Baseline, Base: a, Cand: b})
	}
	return out
}

// Calibrate measures the A/A noise of each pair (two samples of the same
// variant, for example from HalvesOf or PairVariants on two results of the
// same build) on every metric of o. With tests > 0 it also estimates, for
// each relative metric, the runs per side needed to call a 20% regression
// in a comparison of that many tests (RunsFor20, see RunsNeeded, with o's
// interval), which takes up to a second per metric.
func Calibrate(pairs []Pair, o CompareOptions, tests int) ([]Calibration, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	floor := o
	floor.Interval = IntervalBootstrap // see Calibration.NoiseFloor
	var out []Calibration
	for pi, p := range pairs {
		for mi, name := range o.Metrics {
			m, _ := lookupMetric(name)
			s := collectSides(m, p)
			e := estimateOf(m, s.base, s.cand, floor, o.Seed+uint64(pi*len(metrics)+mi))
			c := Calibration{Variant: p.Variant, Metric: name, RunsA: len(s.base), RunsB: len(s.cand),
				Estimate: e.point, CI: e.ci, NoiseFloor: math.NaN(), Spread: math.NaN()}
			if isFinite(e.ci.Low) && isFinite(e.ci.High) && len(s.base) >= 2 && len(s.cand) >= 2 {
				bad := m.badInterval(e.ci)
				c.NoiseFloor = max(bad.High, -bad.Low, 0)
			}
			if !m.absolute {
				c.Spread = pooledLogSD(s.base, s.cand)
				if tests > 0 && isFinite(c.Spread) {
					c.RunsFor20 = RunsNeeded(name, c.Spread, 0.20, 0.80, tests, o)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// pooledLogSD is the pooled within-sample standard deviation of the logs
// of positive values; NaN with fewer than two values in both samples
// together beyond their means, or a non-positive value.
func pooledLogSD(samples ...[]float64) float64 {
	var ss float64
	df := 0
	for _, s := range samples {
		if len(s) < 2 {
			continue
		}
		mean := 0.0
		for _, x := range s {
			if !(x > 0) {
				return math.NaN()
			}
			mean += math.Log(x)
		}
		mean /= float64(len(s))
		for _, x := range s {
			d := math.Log(x) - mean
			ss += d * d
		}
		df += len(s) - 1
	}
	if df == 0 {
		return math.NaN()
	}
	return math.Sqrt(ss / float64(df))
}

// Settings of RunsNeeded's simulation.
const (
	// MaxRunsNeeded is the most runs per side RunsNeeded considers.
	MaxRunsNeeded = 100
	simTrials     = 100
	simResamples  = 300
)

// RunsNeeded estimates, by simulation, how many runs per side a comparison
// of the named metric needs so that a true regression of size change (0.2:
// 20% worse) gets a fail verdict with the given power (0.8), when per-run
// values are log-normal with the log standard deviation spread (as
// Calibration.Spread measures). tests is the number of tests Holm corrects
// together in the comparison (metrics times pairs; at least 1): the
// simulation holds the Mann-Whitney p-value to o.Alpha/tests, Holm's first
// step, which is what the most significant test of a family must pass.
// Each trial draws both sides and applies Compare's rule: that p-value and
// a bootstrap interval wholly beyond the metric's tolerance. It returns 0
// when even MaxRunsNeeded runs are not enough, or for a metric that is not
// relative. Deterministic for a given o.Seed; the power is estimated from
// a few hundred trials, so the answer is good to a run or two.
func RunsNeeded(name string, spread, change, power float64, tests int, o CompareOptions) int {
	o = o.WithDefaults()
	m, ok := lookupMetric(name)
	if !ok || m.absolute || !(spread >= 0) || !(change > 0) {
		return 0
	}
	tol := o.Tolerances[name]
	alpha := o.Alpha / float64(max(tests, 1))
	shift := 1 + change
	if !m.higherIsWorse {
		shift = 1 - change
	}
	if !(shift > 0) {
		return 0
	}
	powerAt := func(n int) float64 {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(n)))
		base, cand := make([]float64, n), make([]float64, n)
		fails := 0
		for t := range simTrials {
			for i := range n {
				base[i] = math.Exp(spread * rng.NormFloat64())
				cand[i] = shift * math.Exp(spread*rng.NormFloat64())
			}
			if _, p := MannWhitney(cand, base); p >= alpha {
				continue
			}
			ci := intervalOf(m, base, cand, o.Interval, simResamples, o.Seed+uint64(t))
			if decide(m, tol, alpha, 0, ci) == Fail {
				fails++
			}
		}
		return float64(fails) / simTrials
	}
	// Power grows with n: find the first n that reaches it by doubling,
	// then bisect.
	lo, hi := MinRuns-1, MinRuns
	for powerAt(hi) < power {
		lo = hi
		if hi >= MaxRunsNeeded {
			return 0
		}
		hi = min(2*hi, MaxRunsNeeded)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if powerAt(mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
