package compare

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// Simulation describes paired comparisons made on synthetic rounds: the
// candidate's per-round value is the baseline's times Shift, times a
// log-normal noise of log standard deviation Sigma; both sides also share
// a round's drift (log sd Drift), which the pairing cancels. Tails, when
// set, draws the noise from Student's t with 3 degrees of freedom (scaled
// to Sigma) instead of the normal: a machine with occasional bad rounds.
type Simulation struct {
	Sigma, Drift float64
	Tails        bool
	// MinRounds and MaxRounds bound a sequential comparison: it looks
	// after each round from MinRounds on and stops when decided or after
	// MaxRounds (the looks' level spent with stats.SpendAlpha over
	// MaxRounds-MinRounds+1 looks). MinRounds == MaxRounds is one look.
	MinRounds, MaxRounds int
	// Alpha and Tolerance are the comparison's (p99's: higher is worse).
	Alpha, Tolerance float64
	Trials           int
	Seed             uint64
}

// SimulationResult is what the trials of one Shift gave.
type SimulationResult struct {
	Shift float64
	// Fail, Pass and Inconclusive count the trials' final verdicts.
	Fail, Pass, Inconclusive int
	// FailRounds holds, for the trials that failed, the round at which
	// they did, sorted.
	FailRounds []int
}

// Run simulates s.Trials sequential comparisons of a candidate Shift
// times the baseline. Deterministic for a given Seed.
func (s Simulation) Run(shift float64) SimulationResult {
	rng := rand.New(rand.NewPCG(s.Seed, math.Float64bits(shift)))
	m, _ := results.LookupMetric(results.MetricP99)
	looks := s.MaxRounds - s.MinRounds + 1
	out := SimulationResult{Shift: shift}
	for range s.Trials {
		var rs rounds
		outcome := Inconclusive
		for r := 1; r <= s.MaxRounds && outcome == Inconclusive; r++ {
			drift := math.Exp(s.Drift * rng.NormFloat64())
			base := 100 * drift * math.Exp(s.noise(rng))
			cand := 100 * shift * drift * math.Exp(s.noise(rng))
			rs.round = append(rs.round, r)
			rs.base, rs.cand = append(rs.base, base), append(rs.cand, cand)
			if r < s.MinRounds {
				continue
			}
			alpha := s.Alpha
			if looks > 1 {
				alpha = stats.SpendAlpha(s.Alpha, r-s.MinRounds+1, looks)
			}
			v := decidePaired([]pairedItem{{m: m, tol: s.Tolerance, t: newPairedTest(m, rs, s.Tolerance)}}, alpha)
			outcome = v[0].Outcome
			if outcome == Fail {
				out.FailRounds = append(out.FailRounds, r)
			}
		}
		switch outcome {
		case Fail:
			out.Fail++
		case Pass:
			out.Pass++
		default:
			out.Inconclusive++
		}
	}
	slices.Sort(out.FailRounds)
	return out
}

// noise draws one side's per-round log noise: normal, or t with 3
// degrees of freedom scaled to the same standard deviation (Tails). Each
// side gets Sigma/√2, so that their log ratio has sd Sigma.
func (s Simulation) noise(rng *rand.Rand) float64 {
	sd := s.Sigma / math.Sqrt2
	if !s.Tails {
		return sd * rng.NormFloat64()
	}
	// t(3) = Z / sqrt(chi2(3)/3); its variance is 3, hence the /√3.
	z := rng.NormFloat64()
	var chi float64
	for range 3 {
		g := rng.NormFloat64()
		chi += g * g
	}
	return sd * z / math.Sqrt(chi/3) / math.Sqrt(3)
}

// FailRate is the share of trials that failed, with its 95% Wilson
// interval.
func (r SimulationResult) FailRate() (rate, lo, hi float64) {
	n := r.Fail + r.Pass + r.Inconclusive
	lo, hi = stats.Wilson(r.Fail, n, stats.Z95)
	return float64(r.Fail) / float64(max(n, 1)), lo, hi
}

// RoundsToFail is the round by which half and by which 80% of all trials
// had failed: the rounds a change needs at 50% and 80% power; 0 when
// fewer than that share failed within MaxRounds.
func (r SimulationResult) RoundsToFail() (median, power80 int) {
	n := r.Fail + r.Pass + r.Inconclusive
	at := func(q float64) int {
		k := int(math.Ceil(q * float64(n)))
		if k < 1 || k > len(r.FailRounds) {
			return 0
		}
		return r.FailRounds[k-1]
	}
	return at(0.5), at(0.8)
}
