package resultstest

import (
	"math/rand/v2"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// LinearRun builds a run whose latencies are base, 2*base, ... n*base.
func LinearRun(id, variant string, base time.Duration, n int, workers []uint64, valid bool) results.Run {
	h := results.NewHistogram()
	for i := 1; i <= n; i++ {
		h.RecordDuration(time.Duration(i) * base)
	}
	lag := results.NewHistogram()
	lag.RecordDuration(50 * time.Microsecond)
	r := results.Run{ID: id, Variant: variant, Summary: h.Summarize(), Valid: valid,
		Measurement: results.Measurement{Requests: uint64(n), AchievedRate: float64(n) / 10, Latency: h, SendLag: lag,
			Classes: []results.Class{{Name: "all", Requests: uint64(n), Latency: h}}}}
	if !valid {
		r.Invalid = []string{"send lag p99 9ms exceeds 5ms"}
	}
	for i, c := range workers {
		r.Workers = append(r.Workers, results.Worker{Index: i, Responses: c})
	}
	return r
}

// ClaimResults has n valid runs of "fast" (latencies 1..1000 × 100µs, a
// little slower each run) and of "slow" (the same × 1ms), workers and
// proxy counters set, and the given claims.
func ClaimResults(n int, claims ...scenario.Claim) *results.Results {
	r := &results.Results{
		Scenario: scenario.Scenario{
			Name: "claims", Workers: scenario.Workers{Count: 2, Concurrency: 1},
			Workload: workloads.Spec{Arrival: workloads.Arrival{Kind: "poisson", RatePerSec: 100}, Duration: 10 * time.Second},
			Variants: []scenario.Variant{{Name: "fast"}, {Name: "slow"}},
			Repeat:   n, Claims: claims,
		},
		Complete: true,
	}
	for i := range n {
		jitter := time.Duration(i) * time.Microsecond
		f := LinearRun("f", "fast", 100*time.Microsecond+jitter, 1000, []uint64{500, 500}, true)
		f.Proxy = &results.ProxyStats{Decisions: 1000, ClientConns: 6, UpstreamConns: 2}
		s := LinearRun("s", "slow", time.Millisecond+10*jitter, 1000, []uint64{900, 100}, true)
		f.Rep, s.Rep = i+1, i+1 // one round each
		r.Runs = append(r.Runs, f, s)
	}
	return r
}

// BurstResults records n bursts of 16 tasks over 8 workers, dispatched
// uniformly at random (seeded), as SO_REUSEPORT's hash would, in one run
// of "fast".
func BurstResults(n int, seed uint64, claim string) *results.Results {
	return BurstRuns(1, n, seed, claim)
}

// BurstRuns is BurstResults over runs runs (rounds) of "fast", n bursts
// each.
func BurstRuns(runs, n int, seed uint64, claim string) *results.Results {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := ClaimResults(runs, scenario.Claim{Say: "x", Check: claim})
	r.Scenario.Workload = workloads.Spec{Bursts: &workloads.Bursts{Size: 16, Count: n}}
	for i := range r.Runs {
		if r.Runs[i].Variant != "fast" {
			continue
		}
		b := &results.Bursts{Size: 16, Workers: 8}
		for range n {
			load := make([]int, 8)
			for range 16 {
				load[rng.IntN(8)]++
			}
			b.Loads = append(b.Loads, load)
			b.Unattributed = append(b.Unattributed, 0)
		}
		r.Runs[i].Bursts = b
	}
	return r
}
