package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// Defaults of Options, exported so that flags reuse them.
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

// Interval methods of Options.
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
	// DefaultInterval is the method Options uses by default.
	DefaultInterval = IntervalShift
)

// MinRuns is the fewest valid runs per side a comparison decides on. With
// fewer, a verdict is always inconclusive, never pass: two runs cannot
// show that a change is small.
const MinRuns = 3

// Options configures Compare. The zero value compares every metric
// with the default tolerances.
type Options struct {
	// Metrics are the metrics compared, from results.VerdictMetrics(); empty
	// means all of them.
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
	// Look is the number of this look of a sequential comparison (run
	// --until-decided judges after every round: look 1, 2, ...), and
	// MaxLooks the most looks it may make (0: no bound). The family's
	// level at a look is stats.SpendAlpha(Alpha, Look, MaxLooks), so that
	// looking after every round keeps the false-alarm rate at Alpha. Zero
	// Look is a comparison made once, at level Alpha.
	Look, MaxLooks int
	// Others are the p-values of the other tests of this comparison's
	// family, which another package decides (a run's statistical claims,
	// judged with its comparison as one family: claims.PValues), on the
	// scale of this comparison's own (compared with the same look's share
	// of Alpha). They take their ranks in Holm's step-down
	// (stats.HolmSteps), so that the comparison and the claims share one
	// false-alarm rate. Nil: the comparison is a family alone.
	Others []float64
	// Calibration holds A/A noise floors (see Calibrate); a verdict whose
	// tolerance is below the noise floor of its baseline (or candidate)
	// and metric is inconclusive, as too tight to decide. Nil means none.
	Calibration []Calibration
}

// WithDefaults returns a copy of o with zero values filled in.
func (o Options) WithDefaults() Options {
	if len(o.Metrics) == 0 {
		o.Metrics = results.VerdictMetrics()
	}
	tol := map[string]float64{}
	for _, name := range append(results.VerdictMetrics(), o.Metrics...) {
		m, ok := results.ComparisonMetric(name)
		if !ok {
			continue // Validate names it
		}
		tol[m.Name] = DefaultTolerance
		if m.Absolute {
			tol[m.Name] = DefaultErrorRateTolerance
		}
	}
	for k, v := range o.Tolerances {
		tol[k] = v
	}
	// A tolerance given for every relative metric (key "") covers the
	// metrics compared only when asked for, unless they have their own.
	if g, ok := o.Tolerances[""]; ok {
		for _, name := range o.Metrics {
			if m, known := results.ComparisonMetric(name); known && !m.Absolute {
				if _, own := o.Tolerances[name]; !own {
					tol[name] = g
				}
			}
		}
		delete(tol, "")
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

// MaxResamples bounds Options.Resamples: a million resamples
// already take minutes per metric and variant.
const MaxResamples = 1000000

// Validate reports the first problem in o, naming the field. Call it on
// the result of WithDefaults.
func (o Options) Validate() error {
	known := results.ComparisonMetrics()
	seen := map[string]bool{}
	for _, m := range o.Metrics {
		if _, ok := results.ComparisonMetric(m); !ok {
			return fmt.Errorf("compare: metrics: unknown metric %q (known: %s)", m, strings.Join(known, ", "))
		}
		if seen[m] {
			return fmt.Errorf("compare: metrics: %q given twice", m)
		}
		seen[m] = true
	}
	for k, v := range o.Tolerances {
		m, ok := results.ComparisonMetric(k)
		if !ok {
			return fmt.Errorf("compare: tolerances: unknown metric %q (known: %s)", k, strings.Join(known, ", "))
		}
		if !(v > 0) || (m.Absolute && v > 1) || v > 10 {
			return fmt.Errorf("compare: tolerances[%s]: must be in (0, %d], got %g", k, map[bool]int{true: 1, false: 10}[m.Absolute], v)
		}
	}
	if !(o.Alpha > 0 && o.Alpha <= 0.5) {
		return fmt.Errorf("compare: alpha: must be in (0, 0.5], got %g", o.Alpha)
	}
	if o.Resamples < 100 || o.Resamples > MaxResamples {
		return fmt.Errorf("compare: resamples: must be >= 100 and at most %d (the bootstrap's time grows with it), got %d", MaxResamples, o.Resamples)
	}
	if o.Look < 0 || o.MaxLooks < 0 || (o.MaxLooks > 0 && o.Look > o.MaxLooks) {
		return fmt.Errorf("compare: look: %d of at most %d: want 0 <= look and, with a bound, look <= max looks", o.Look, o.MaxLooks)
	}
	if o.Interval != IntervalShift && o.Interval != IntervalBootstrap {
		return fmt.Errorf("compare: interval: want %s or %s, got %q", IntervalShift, IntervalBootstrap, o.Interval)
	}
	return nil
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
func Compare(pairs []Pair, o Options) ([]Verdict, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, errors.New("compare: nothing to compare")
	}
	if paired(pairs) {
		vs := comparePaired(pairs, o)
		stampRunTime(vs, pairs)
		return vs, nil
	}
	type item struct {
		pair         Pair
		m            results.Metric
		s            sides
		e            estimate
		tol          float64
		pFail, pPass float64
		ok           bool
		seed         uint64
	}
	var items []item
	for pi, p := range pairs {
		for mi, name := range o.Metrics {
			m, _ := results.ComparisonMetric(name)
			s := collectSides(m, p)
			seed := o.Seed + uint64(pi*len(results.VerdictMetrics())+mi)
			it := item{pair: p, m: m, s: s, e: estimateOf(m, s.base, s.cand, o, seed), tol: o.Tolerances[name], seed: seed}
			it.pFail, it.pPass, it.ok = unpairedP(m, s.base, s.cand, it.tol)
			items = append(items, it)
		}
	}
	// Holm's step-down over the decision p-values: each test's smaller
	// one-sided p of "worse than the tolerance" and "within it", so that
	// a pass is corrected as a fail is; o.Others take their ranks too.
	ps := make([]float64, len(items), len(items)+len(o.Others))
	for i, it := range items {
		ps[i] = min(it.pFail, it.pPass)
	}
	steps := stats.HolmSteps(append(ps, o.Others...), len(items), o.Alpha)
	verdicts := make([]Verdict, len(items))
	for i, it := range items {
		st := steps[i]
		level, p := st.StepLevel, ps[i] // its interval is shown at its own step's level
		ci := intervalAt(it.m, it.s.base, it.s.cand, o.Interval, o.Resamples, it.seed, 1-2*level)
		v := Verdict{Variant: it.pair.Variant, Baseline: it.pair.Baseline, Metric: it.m.Name, Tolerance: it.tol, Method: MethodUnpaired, Level: 1 - 2*level, P: st.Adjusted, TestP: p}
		if !it.m.Absolute && isFinite(it.e.point) {
			v.Ratio = it.e.point
			if isFinite(ci.Low) && isFinite(ci.High) {
				v.CILow, v.CIHigh = ci.Low, ci.High
			}
		}
		nb, nc := len(it.s.base), len(it.s.cand)
		var why string
		switch {
		case nb < MinRuns || nc < MinRuns:
			v.Outcome = Inconclusive
			why = fmt.Sprintf("too few valid runs to decide (at least %d per side)", MinRuns)
		case !it.ok || !isFinite(it.e.point):
			v.Outcome = Inconclusive
			why = "no ratio: some runs' values are zero"
		case !st.Reached || p > level: // Holm stops at the first test it cannot reject
			v.Outcome = Inconclusive
			why = unpairedUndecided(it.m, it.tol, level, ci)
		default:
			v.Outcome = Pass
			if it.pFail < it.pPass {
				v.Outcome = Fail
			}
			why = unpairedDecided(it.m, v.Outcome, it.tol, level, p, st.Step, st.Of, ci)
		}
		if floor, ok := noiseFloor(o.Calibration, it.pair, it.m.Name); ok && floor > it.tol && nb >= MinRuns && nc >= MinRuns {
			why = fmt.Sprintf("tolerance %s is below the A/A noise floor %s: too tight to decide (would be %s)",
				it.m.FormatTolerance(it.tol), it.m.FormatTolerance(floor), v.Outcome)
			v.Outcome = Inconclusive
		}
		v.Detail = why + "; " + evidenceString(it.m, it.s, it.e)
		verdicts[i] = v
	}
	stampRunTime(verdicts, pairs)
	return verdicts, nil
}

// LookRounds is the schedule of a sequential comparison that may go on
// to maxRounds rounds: the rounds after which it looks. With looks <= 0
// (or more than there are rounds from MinRounds) it looks after every
// round from MinRounds on; with looks > 0, after rounds spread evenly up
// to maxRounds, the last at maxRounds (looks 3 of 12 rounds: after 4, 8
// and 12), none before MinRounds. Fewer looks give each a larger share
// of alpha (stats.SpendAlpha), at the price of a decision made only at
// its scheduled rounds.
func LookRounds(maxRounds, looks int) []int {
	var rs []int
	if looks <= 0 || looks >= maxRounds-MinRounds+1 {
		for r := MinRounds; r <= maxRounds; r++ {
			rs = append(rs, r)
		}
		return rs
	}
	for k := 1; k <= looks; k++ {
		r := max(MinRounds, (maxRounds*k+looks-1)/looks)
		if len(rs) == 0 || rs[len(rs)-1] < r {
			rs = append(rs, r)
		}
	}
	return rs
}

// Looks is the look of a sequential comparison after round rounds, and
// how many looks at most, when it may go on to maxRounds with looks looks
// (LookRounds; 0: one after every round from MinRounds). A look at a
// round off the schedule (the budget ended the rounds before the next
// scheduled look) takes the next scheduled look's place and share, which
// no other look can then use. Runs until decided, their re-judging
// (lbbench compare) and their claims all count looks with it.
func Looks(round, maxRounds, looks int) (look, maxLooks int) {
	sched := LookRounds(maxRounds, looks)
	look = 1
	for _, r := range sched {
		if r < round {
			look++
		}
	}
	return look, max(len(sched), look, 1)
}

// comparePaired compares pairs made in the same rounds, round by round
// (paired.go), at the level of o's look.
func comparePaired(pairs []Pair, o Options) []Verdict {
	alpha := o.Alpha
	if o.Look > 0 {
		alpha = stats.SpendAlpha(o.Alpha, o.Look, o.MaxLooks)
	}
	var items []pairedItem
	for _, p := range pairs {
		for _, name := range o.Metrics {
			m, _ := results.ComparisonMetric(name)
			tol := o.Tolerances[name]
			items = append(items, pairedItem{pair: p, m: m, tol: tol, t: newPairedTest(m, collectRounds(m, p), tol)})
		}
	}
	return decidePaired(items, alpha, o.Others)
}

// Decided reports whether every verdict is pass or fail: a sequential
// comparison stops there.
func Decided(vs []Verdict) bool {
	return len(vs) > 0 && !slices.ContainsFunc(vs, func(v Verdict) bool { return v.Outcome == Inconclusive })
}

// stampRunTime sets each verdict's RunTime: the measured time of the runs
// of its pair, both sides.
func stampRunTime(vs []Verdict, pairs []Pair) {
	type key struct{ variant, baseline string }
	t := make(map[key]time.Duration, len(pairs))
	for _, p := range pairs {
		var d time.Duration
		for _, side := range [][]results.Run{p.Base, p.Cand} {
			for _, r := range side {
				d += r.Duration
			}
		}
		t[key{p.Variant, p.Baseline}] = d
	}
	for i := range vs {
		vs[i].RunTime = t[key{vs[i].Variant, vs[i].Baseline}]
	}
}
