package workloads

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestPacerBurst(t *testing.T) {
	s := Spec{Arrival: Arrival{Kind: Burst, Size: 16, Every: 100 * time.Millisecond}, Duration: time.Second, Warmup: -1,
		Classes: []Class{{Name: "a", Weight: 1}}}.WithDefaults()
	offs := drive(t, NewPacer(s))
	if len(offs) != 160 {
		t.Fatalf("%d requests, want 10 bursts of 16", len(offs))
	}
	for i, off := range offs {
		if want := time.Duration(i/16) * 100 * time.Millisecond; off != want {
			t.Fatalf("request %d at %s, want %s", i, off, want)
		}
	}
}

func TestPacerRamp(t *testing.T) {
	s := Spec{Arrival: Arrival{Kind: Ramp, From: 100, To: 1000}, Duration: 2 * time.Second, Warmup: time.Second,
		Classes: []Class{{Name: "a", Weight: 1}}}.WithDefaults()
	offs := drive(t, NewPacer(s))
	// Warm-up at 100/s: 100; ramp: mean 550/s for 2s: 1100.
	if n := len(offs); n < 1195 || n > 1205 {
		t.Fatalf("%d requests, want about 1200", n)
	}
	rate := func(from, to time.Duration) float64 {
		n := 0
		for _, o := range offs {
			if o >= from && o < to {
				n++
			}
		}
		return float64(n) / (to - from).Seconds()
	}
	for _, tc := range []struct {
		from, to time.Duration
		want     float64
	}{
		{0, time.Second, 100},
		{time.Second, 1100 * time.Millisecond, 122.5},     // 100..145
		{2900 * time.Millisecond, 3 * time.Second, 977.5}, // 955..1000
	} {
		if got := rate(tc.from, tc.to); math.Abs(got-tc.want) > 0.05*tc.want+10 {
			t.Errorf("rate in [%s, %s) = %.1f/s, want about %.1f/s", tc.from, tc.to, got, tc.want)
		}
	}
	if !slices.IsSorted(offs) {
		t.Error("schedule goes back in time")
	}
}

func TestPacerSteps(t *testing.T) {
	s := Spec{Arrival: Arrival{Kind: Steps, Steps: []Step{{100, time.Second}, {300, 500 * time.Millisecond}, {50, time.Second}}},
		Warmup: -1, Classes: []Class{{Name: "a", Weight: 1}}}.WithDefaults()
	if s.Duration != 2500*time.Millisecond {
		t.Fatalf("duration %s, want the steps' sum", s.Duration)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	offs := drive(t, NewPacer(s))
	if len(offs) != 100+150+50 {
		t.Fatalf("%d requests, want 300", len(offs))
	}
	if offs[100] != time.Second || offs[250] != 1500*time.Millisecond {
		t.Errorf("steps start at %s and %s, want 1s and 1.5s", offs[100], offs[250])
	}
	s.Duration = time.Second
	if err := s.Validate(); err == nil {
		t.Error("a duration that disagrees with the steps was accepted")
	}
}

// TestPoissonKS checks exponential gaps with a one-sample
// Kolmogorov-Smirnov test at the 1% level.
func TestPoissonKS(t *testing.T) {
	s := spec(Poisson, 1000, 5*time.Second)
	offs := drive(t, NewPacer(s))
	gaps := make([]float64, len(offs)-1)
	for i := range gaps {
		gaps[i] = float64(offs[i+1]-offs[i]) / float64(time.Millisecond) // mean 1ms
	}
	d := ksExp(gaps, 1)
	crit := 1.63 / math.Sqrt(float64(len(gaps)))
	if d > crit {
		t.Errorf("KS distance %.4f > %.4f: gaps are not exponential", d, crit)
	}
	// The test has power: uniform gaps of the same mean fail it.
	uni := make([]float64, len(gaps))
	for i := range uni {
		uni[i] = 2 * float64(i) / float64(len(uni))
	}
	if d := ksExp(uni, 1); d <= crit {
		t.Errorf("uniform gaps passed the KS test (%.4f <= %.4f)", d, crit)
	}
}

// ksExp is the Kolmogorov-Smirnov distance between the sample and the
// exponential distribution of the given mean.
func ksExp(xs []float64, mean float64) float64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	n := float64(len(ys))
	var d float64
	for i, y := range ys {
		f := 1 - math.Exp(-y/mean)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

func TestServiceDistributions(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  Service
		mean time.Duration // of the distribution, or 0 to skip
		lo   time.Duration
		hi   time.Duration
	}{
		{"lognormal", Service{Dist: LogNormal, Median: 2 * time.Millisecond, Sigma: 0.5}, 0, 0, time.Hour},
		{"bimodal", Service{Dist: Bimodal, Low: time.Millisecond, High: 50 * time.Millisecond, PHigh: 0.1}, 5900 * time.Microsecond, time.Millisecond, 50 * time.Millisecond},
		{"pareto", Service{Dist: Pareto, Min: time.Millisecond, Max: 100 * time.Millisecond, Alpha: 1.5}, 0, time.Millisecond, 100 * time.Millisecond},
		{"uniform", Service{Dist: Uniform, Min: time.Millisecond, Max: 3 * time.Millisecond}, 2 * time.Millisecond, time.Millisecond, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Spec{Arrival: Arrival{RatePerSec: 1}, Classes: []Class{{Name: "a", Weight: 1, Service: tc.svc}}}.WithDefaults()
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			rng := newTestRand()
			var sum float64
			var xs []time.Duration
			for range 50000 {
				d := tc.svc.draw(rng)
				if d < tc.lo || d > tc.hi {
					t.Fatalf("draw %s outside [%s, %s]", d, tc.lo, tc.hi)
				}
				sum += float64(d)
				xs = append(xs, d)
			}
			mean := time.Duration(sum / 50000)
			// The analytic mean (MeanService) agrees with the sample.
			if want := tc.svc.mean(); math.Abs(float64(mean-want)) > 0.03*float64(want) {
				t.Errorf("sample mean %s, analytic mean %s", mean, want)
			}
			if tc.mean > 0 && math.Abs(float64(mean-tc.mean)) > 0.03*float64(tc.mean) {
				t.Errorf("sample mean %s, want %s", mean, tc.mean)
			}
			if tc.name == "lognormal" {
				slices.Sort(xs)
				if med := xs[len(xs)/2]; math.Abs(float64(med-2*time.Millisecond)) > 0.03*float64(2*time.Millisecond) {
					t.Errorf("median %s, want 2ms", med)
				}
			}
		})
	}
}

func TestScaledKeepsShape(t *testing.T) {
	a := Arrival{Kind: Burst, Size: 10, Every: 100 * time.Millisecond}
	if got := a.Scaled(0.5).MeanRate(time.Second); got != 50 {
		t.Errorf("half of a 100/s burst is %g/s", got)
	}
	st := Arrival{Kind: Steps, Steps: []Step{{100, time.Second}}}
	half := st.Scaled(0.5)
	if half.Steps[0].RatePerSec != 50 || st.Steps[0].RatePerSec != 100 {
		t.Errorf("Scaled changed the original or missed the steps: %+v %+v", st, half)
	}
}
