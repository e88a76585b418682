package compare

import (
	"math"
	"math/rand/v2"

	"github.com/lbbench/lbbench/results"
)

// Settings of RunsNeeded's simulation.
const (
	// MaxRunsNeeded is the most runs per side RunsNeeded considers.
	MaxRunsNeeded = 100
	simTrials     = 100
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
func RunsNeeded(name string, spread, change, power float64, tests int, o Options) int {
	o = o.WithDefaults()
	m, ok := results.ComparisonMetric(name)
	if !ok || m.Absolute || !(spread >= 0) || !(change > 0) {
		return 0
	}
	tol := o.Tolerances[name]
	alpha := o.Alpha / float64(max(tests, 1))
	shift := 1 + change
	if !m.HigherIsWorse {
		shift = 1 - change
	}
	if !(shift > 0) {
		return 0
	}
	powerAt := func(n int) float64 {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(n)))
		base, cand := make([]float64, n), make([]float64, n)
		fails := 0
		for range simTrials {
			for i := range n {
				base[i] = math.Exp(spread * rng.NormFloat64())
				cand[i] = shift * math.Exp(spread*rng.NormFloat64())
			}
			if pFail, _, ok := unpairedP(m, base, cand, tol); ok && pFail < alpha {
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
