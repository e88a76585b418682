package compare

import (
	"math"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// PairedCalibration is what a paired comparison of one pair and metric
// can decide on this machine: the round-to-round standard deviation of
// the per-round log ratio measured from the user's own rounds, and, by
// simulation at that deviation (Simulation, the one docs/verdicts.md
// tabulates), the false-fail rates and the rounds a change needs.
type PairedCalibration struct {
	Variant, Baseline, Metric string
	// Rounds counts the rounds with a valid run on both sides; SD is the
	// standard deviation of their log ratios (NaN with fewer than
	// MinRounds).
	Rounds int
	SD     float64
	// Tolerance and Alpha are the ones simulated: the metric's
	// tolerance, and the comparison's alpha shared by its Tests tests
	// (Bonferroni: what Holm gives the test that is decided last).
	Tolerance, Alpha float64
	Tests            int
	// MaxRounds is the sequential design simulated: looks from MinRounds
	// to MaxRounds rounds.
	MaxRounds int
	// FalseFail is the simulated A/A fail rate with its 95% interval;
	// BoundaryFail the fail rate of a change of exactly the tolerance.
	FalseFail, FalseFailLow, FalseFailHigh float64
	BoundaryFail                           float64
	// RoundsFor holds, for a 10%, 20% and 40% regression, the rounds by
	// which 80% of trials failed; 0 when fewer did within MaxRounds.
	RoundsFor [3]int
}

// CalibrationShifts are the regressions PairedCalibration.RoundsFor is
// given for.
var CalibrationShifts = [3]float64{1.10, 1.20, 1.40}

// CalibratePaired calibrates every paired pair on every relative metric of
// o: the sd of its per-round log ratios, then trials simulated
// comparisons at that sd, sequential from MinRounds to maxRounds rounds.
// Absolute metrics (error_rate) and pairs with fewer than MinRounds
// paired rounds get only Rounds.
func CalibratePaired(pairs []Pair, o Options, maxRounds, trials int) ([]PairedCalibration, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	tests := max(len(pairs)*len(o.Metrics), 1)
	var out []PairedCalibration
	for pi, p := range pairs {
		for mi, name := range o.Metrics {
			m, _ := results.ComparisonMetric(name)
			rs := collectRounds(m, p)
			c := PairedCalibration{Variant: p.Variant, Baseline: p.Baseline, Metric: name, Rounds: len(rs.round),
				SD: math.NaN(), Tolerance: o.Tolerances[name], Alpha: o.Alpha / float64(tests), Tests: tests, MaxRounds: maxRounds}
			if m.Absolute || len(rs.round) < MinRounds {
				out = append(out, c)
				continue
			}
			logs := make([]float64, len(rs.round))
			for i := range logs {
				logs[i] = math.Log(rs.cand[i] / rs.base[i])
			}
			c.SD = stats.SD(logs)
			sim := Simulation{Sigma: c.SD, Drift: 0.3, MinRounds: MinRounds, MaxRounds: maxRounds,
				Alpha: c.Alpha, Tolerance: c.Tolerance, Trials: trials, Seed: o.Seed + uint64(pi*len(o.Metrics)+mi)}
			c.FalseFail, c.FalseFailLow, c.FalseFailHigh = sim.Run(1).FailRate()
			c.BoundaryFail, _, _ = sim.Run(1 + c.Tolerance).FailRate()
			for i, shift := range CalibrationShifts {
				_, c.RoundsFor[i] = sim.Run(shift).RoundsToFail()
			}
			out = append(out, c)
		}
	}
	return out, nil
}
