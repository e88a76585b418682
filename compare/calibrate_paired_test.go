package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lbbench/lbbench/results"
)

// TestCalibratePaired: from rounds whose per-round log ratio has a known
// sd, CalibratePaired estimates it, and the simulation at it gives an A/A
// false-fail rate within alpha, a boundary rate near alpha at most, and
// fewer rounds for a larger change. Noisier rounds need more rounds. Too
// few rounds, or an absolute metric, get no estimate.
func TestCalibratePaired(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 0))
	o := Options{Metrics: []string{results.MetricP99, results.MetricErrorRate}}
	var prev [3]int
	for i, sigma := range []float64{0.03, 0.12} {
		p := roundsOf(rng, 12, 1, sigma, 0.3)
		cals, err := CalibratePaired([]Pair{p}, o, 16, 1000)
		if err != nil {
			t.Fatal(err)
		}
		c, abs := cals[0], cals[1]
		if c.Rounds != 12 || math.Abs(c.SD/sigma-1) > 0.5 {
			t.Errorf("sigma %g: sd %g from %d rounds, want about %g from 12", sigma, c.SD, c.Rounds, sigma)
		}
		if c.FalseFailLow > c.Alpha || c.BoundaryFail > 2*c.Alpha {
			t.Errorf("sigma %g: A/A false-fail %g [%g, %g], boundary %g, alpha %g", sigma, c.FalseFail, c.FalseFailLow, c.FalseFailHigh, c.BoundaryFail, c.Alpha)
		}
		if c.Tests != 2 || c.Alpha != DefaultAlpha/2 {
			t.Errorf("tests %d alpha %g, want 2 tests at %g each", c.Tests, c.Alpha, DefaultAlpha/2)
		}
		if c.RoundsFor[2] == 0 || (c.RoundsFor[1] != 0 && c.RoundsFor[1] < c.RoundsFor[2]) {
			t.Errorf("sigma %g: rounds for 10/20/40%% %v, want fewer for larger changes and 40%% decided", sigma, c.RoundsFor)
		}
		if i == 1 && prev[2] > c.RoundsFor[2] {
			t.Errorf("noisier rounds need fewer rounds for 40%%: %v then %v", prev, c.RoundsFor)
		}
		prev = c.RoundsFor
		if !math.IsNaN(abs.SD) || abs.Rounds != 12 {
			t.Errorf("error_rate calibrated: %+v, want rounds only", abs)
		}
	}
	few := roundsOf(rng, 2, 1, 0.05, 0.3)
	cals, _ := CalibratePaired([]Pair{few}, Options{Metrics: []string{results.MetricP99}}, 10, 100)
	if !math.IsNaN(cals[0].SD) || cals[0].Rounds != 2 {
		t.Errorf("2 rounds calibrated: %+v", cals[0])
	}
}
