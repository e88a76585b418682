package compare

import (
	"math"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

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
	CI       stats.Interval
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
func Calibrate(pairs []Pair, o Options, tests int) ([]Calibration, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	floor := o
	floor.Interval = IntervalBootstrap // see Calibration.NoiseFloor
	var out []Calibration
	for pi, p := range pairs {
		for mi, name := range o.Metrics {
			m, _ := results.ComparisonMetric(name)
			s := collectSides(m, p)
			e := estimateOf(m, s.base, s.cand, floor, o.Seed+uint64(pi*len(results.VerdictMetrics())+mi))
			c := Calibration{Variant: p.Variant, Metric: name, RunsA: len(s.base), RunsB: len(s.cand),
				Estimate: e.point, CI: e.ci, NoiseFloor: math.NaN(), Spread: math.NaN()}
			if isFinite(e.ci.Low) && isFinite(e.ci.High) && len(s.base) >= 2 && len(s.cand) >= 2 {
				bad := badInterval(m, e.ci)
				c.NoiseFloor = max(bad.High, -bad.Low, 0)
			}
			if !m.Absolute {
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
