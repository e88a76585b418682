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
// a round's drift (log sd Drift), which the pairing cancels. The noise of
// the per-round log ratio has mean zero and sd Sigma, and is normal
// unless Tails, Skew or Pool say otherwise.
type Simulation struct {
	Sigma, Drift float64
	// Tails draws the noise from Student's t with 3 degrees of freedom
	// (scaled to Sigma): a machine with occasional bad rounds, both ways.
	Tails bool
	// Skew, when its Share is set, draws the noise from a two-normal
	// mixture (scaled to Sigma): rounds skewed one way.
	Skew Mixture
	// Pool, when set, draws each round's log ratio from these values,
	// with replacement, moved to mean zero (Sigma is then theirs): real
	// rounds.
	Pool []float64
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

// Mixture is skewed noise: a share Share of the rounds is Distance
// standard deviations of the common component away from the rest (a
// negative Distance: below), the whole moved to mean zero. Share 0.1 at
// -4 is a variant with an occasional much better round, or its baseline
// with an occasional bad one.
type Mixture struct {
	Share, Distance float64
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
			base := 100 * drift
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
			v := decidePaired([]pairedItem{{m: m, tol: s.Tolerance, t: newPairedTest(m, rs, s.Tolerance)}}, alpha, nil)
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

// noise draws one round's log-ratio noise.
func (s Simulation) noise(rng *rand.Rand) float64 {
	switch {
	case len(s.Pool) > 0:
		return s.Pool[rng.IntN(len(s.Pool))] - s.poolMean()
	case s.Skew.Share > 0:
		p, d := s.Skew.Share, s.Skew.Distance
		// The common component's sd, so that the mixture's is Sigma.
		sd := s.Sigma / math.Sqrt(1+d*d*p*(1-p))
		x := rng.NormFloat64() - d*p
		if rng.Float64() < p {
			x += d
		}
		return sd * x
	case s.Tails:
		// t(3) = Z / sqrt(chi2(3)/3); its variance is 3, hence the /√3.
		z := rng.NormFloat64()
		var chi float64
		for range 3 {
			g := rng.NormFloat64()
			chi += g * g
		}
		return s.Sigma * z / math.Sqrt(chi/3) / math.Sqrt(3)
	}
	return s.Sigma * rng.NormFloat64()
}

func (s Simulation) poolMean() float64 {
	var m float64
	for _, x := range s.Pool {
		m += x
	}
	return m / float64(len(s.Pool))
}

// PassRate is the share of trials that passed, with its 95% Wilson
// interval.
func (r SimulationResult) PassRate() (rate, lo, hi float64) {
	n := r.Fail + r.Pass + r.Inconclusive
	lo, hi = stats.Wilson(r.Pass, n, stats.Z95)
	return float64(r.Pass) / float64(max(n, 1)), lo, hi
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
