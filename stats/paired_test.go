package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMeanInterval(t *testing.T) {
	// Known t quantiles: t(0.975, 4) = 2.776445.
	x := []float64{1, 2, 3, 4, 5}
	m, ci := MeanInterval(x, 0.95)
	h := 2.7764451051977 * math.Sqrt(2.5) / math.Sqrt(5)
	if m != 3 || !near(ci.Low, 3-h, 1e-9) || !near(ci.High, 3+h, 1e-9) {
		t.Errorf("mean %g ci %+v, want 3 ± %g", m, ci, h)
	}
	if _, ci := MeanInterval([]float64{1}, 0.95); !math.IsInf(ci.Low, -1) || !math.IsInf(ci.High, 1) {
		t.Errorf("one value: %+v, want infinite", ci)
	}
	if m, ci := MeanInterval([]float64{2, 2, 2}, 0.95); m != 2 || ci.Low != 2 || ci.High != 2 {
		t.Errorf("no spread: %g %+v", m, ci)
	}
	if m, _ := MeanInterval(nil, 0.95); !math.IsNaN(m) {
		t.Errorf("no values: mean %g", m)
	}
}

// TestMeanIntervalCoverage: over many seeded normal samples the 95%
// interval holds the true mean in about 95% of them, for the small n of
// rounds.
func TestMeanIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for _, n := range []int{3, 5, 10} {
		hit, trials := 0, 4000
		for range trials {
			x := make([]float64, n)
			for i := range x {
				x[i] = 0.3 + 0.1*rng.NormFloat64()
			}
			if _, ci := MeanInterval(x, 0.95); ci.Low <= 0.3 && 0.3 <= ci.High {
				hit++
			}
		}
		if cov := float64(hit) / float64(trials); cov < 0.935 || cov > 0.965 {
			t.Errorf("n=%d: coverage %.3f, want 0.95", n, cov)
		}
	}
}

func TestTTestP(t *testing.T) {
	// t = mean/(sd/√n) = 3/(√2.5/√5) = 4.2426, df 4: p = 0.01324.
	if p := TTestP([]float64{1, 2, 3, 4, 5}); !near(p, 0.013236, 1e-5) {
		t.Errorf("p = %g, want 0.013236", p)
	}
	if TTestP([]float64{1}) != 1 || TTestP([]float64{-1, 1}) != 1 || TTestP([]float64{2, 2}) != 0 {
		t.Error("edge cases")
	}
}

func TestSpendAlpha(t *testing.T) {
	sum := 0.0
	for k := 1; k <= 100000; k++ {
		sum += SpendAlpha(0.05, k, 0)
	}
	if sum > 0.05 || sum < 0.0499 {
		t.Errorf("unbounded looks spend %g, want just under 0.05", sum)
	}
	if SpendAlpha(0.05, 2, 4) != 0.01 || SpendAlpha(0.05, 5, 4) != 0 || SpendAlpha(0.05, 0, 4) != 0 || SpendAlpha(0.05, 1, 1) != 0.05 {
		t.Error("bounded looks")
	}
	for _, looks := range []int{1, 2, 4, 8} {
		sum := 0.0
		for k := 1; k <= looks; k++ {
			sum += SpendAlpha(0.05, k, looks)
		}
		if math.Abs(sum-0.05) > 1e-12 {
			t.Errorf("%d looks spend %g, want 0.05", looks, sum)
		}
	}
}

func TestWilson(t *testing.T) {
	lo, hi := Wilson(5, 10, Z95)
	if !near(lo, 0.2366, 1e-4) || !near(hi, 0.7634, 1e-4) {
		t.Errorf("Wilson(5, 10) = [%g, %g], want [0.2366, 0.7634]", lo, hi)
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("no trials: [%g, %g]", lo, hi)
	}
	if lo, _ := Wilson(0, 20, Z95); lo != 0 {
		t.Errorf("no hits: low %g", lo)
	}
}
