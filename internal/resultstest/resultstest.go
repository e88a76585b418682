// Package resultstest makes synthetic runs for the tests of the packages
// that read results (compare, reports, claims): latency histograms of a
// fixed shape scaled run by run, with seeded run-to-run noise. It is for
// tests of statistics and renderers only; that lbbench measures real
// servers is shown by the drivers' and the generator's tests.
package resultstest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/lbbench/lbbench/results"
)

// Run is a valid run whose latencies are a fixed exponential-like shape
// (median about 2ms, a tail to about 30ms) times scale, over a 1 s window
// of 1000 requests with the given errors.
func Run(variant string, scale float64, errors uint64) results.Run {
	h := results.NewHistogram()
	for i := range 200 { // 1000 requests, 5 at each of 200 quantiles
		q := (float64(i) + 0.5) / 200
		d := time.Duration(scale * -math.Log(1-q) * 3 * float64(time.Millisecond))
		h.RecordValues(d.Microseconds(), 5)
	}
	r := results.Run{ID: variant, Variant: variant, Valid: true}
	r.Latency = h
	r.Duration = time.Second
	r.Requests = 1000
	r.Errors = errors
	return r
}

// Runs draws n runs whose scale is shift times a log-normal run-to-run
// factor with log standard deviation sigma.
func Runs(rng *rand.Rand, variant string, n int, shift, sigma float64) []results.Run {
	runs := make([]results.Run, n)
	for i := range runs {
		runs[i] = Run(variant, shift*math.Exp(sigma*rng.NormFloat64()), 0)
	}
	return runs
}

// Draw draws n runs from pool at random: cheaper than Runs when trials are
// many (a histogram costs a few hundred KB), and from a pool of hundreds
// of log-normal draws nearly the same.
func Draw(rng *rand.Rand, pool []results.Run, n int) []results.Run {
	runs := make([]results.Run, n)
	for i := range runs {
		runs[i] = pool[rng.IntN(len(pool))]
	}
	return runs
}
