package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Hand-computed cases: the p-values are counts of the C(n1+n2, n1) splits
// of the pooled values, worked out by enumeration (with exact fractions).
func TestMannWhitneyAndKSSmallCases(t *testing.T) {
	for _, tc := range []struct {
		name     string
		x, y     []float64
		u, mwuP  float64
		d, ksP   float64
		mwuExact bool
	}{
		{"separated 3v3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 2.0 / 20, 1, 2.0 / 20, true},
		{"separated 4v4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 1.0 / 35, 1, 1.0 / 35, true},
		{"reversed", []float64{4, 5, 6}, []float64{1, 2, 3}, 9, 2.0 / 20, 1, 2.0 / 20, true},
		// Pooled 1 2 2 2 3 4: the three 2s share rank 3.
		{"ties", []float64{1, 2, 2}, []float64{2, 3, 4}, 1, 3.0 / 10, 2.0 / 3, 4.0 / 10, true},
		{"ties 5v6", []float64{1, 1, 2, 3, 5}, []float64{2, 3, 3, 4, 6, 7}, 6.5, 32.0 / 231, 13.0 / 30, 36.0 / 77, true},
		{"mostly tied", []float64{0, 0, 0, 1}, []float64{0, 0, 1, 1}, 6, 1, 0.25, 1, true},
		{"all tied", []float64{2, 2, 2}, []float64{2, 2, 2}, 4.5, 1, 0, 1, true},
		{"empty", nil, []float64{1, 2}, 0, 1, 0, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, p := MannWhitney(tc.x, tc.y)
			if u != tc.u || !near(p, tc.mwuP, 1e-12) {
				t.Errorf("MannWhitney = U %g, p %.6f; want U %g, p %.6f", u, p, tc.u, tc.mwuP)
			}
			d, kp := KolmogorovSmirnov(tc.x, tc.y)
			if !near(d, tc.d, 1e-12) || !near(kp, tc.ksP, 1e-12) {
				t.Errorf("KolmogorovSmirnov = D %g, p %.6f; want D %g, p %.6f", d, kp, tc.d, tc.ksP)
			}
		})
	}
}

// bruteForce enumerates every split of the pooled values and returns the
// share whose statistic is at least as extreme as the observed one:
// an independent check of the counting in MannWhitney and KS.
func bruteForce(x, y []float64, stat func(a, b []float64) float64) float64 {
	z := append(slices.Clone(x), y...)
	n, n1 := len(z), len(x)
	obs := stat(x, y)
	var hit, all int
	pick := make([]bool, n)
	var rec func(i, left int)
	rec = func(i, left int) {
		if left == 0 {
			var a, b []float64
			for k, v := range z {
				if pick[k] {
					a = append(a, v)
				} else {
					b = append(b, v)
				}
			}
			all++
			if stat(a, b) >= obs-1e-9 {
				hit++
			}
			return
		}
		if n-i < left {
			return
		}
		pick[i] = true
		rec(i+1, left-1)
		pick[i] = false
		rec(i+1, left)
	}
	rec(0, n1)
	return float64(hit) / float64(all)
}

// uDistance is |U - n1 n2 / 2| by counting pairs.
func uDistance(a, b []float64) float64 {
	u := 0.0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	return math.Abs(u - float64(len(a)*len(b))/2)
}

// ksDistance is the largest gap between the empirical distribution
// functions, evaluated at every pooled value.
func ksDistance(a, b []float64) float64 {
	d := 0.0
	for _, v := range append(slices.Clone(a), b...) {
		fa, fb := 0.0, 0.0
		for _, x := range a {
			if x <= v {
				fa++
			}
		}
		for _, x := range b {
			if x <= v {
				fb++
			}
		}
		d = max(d, math.Abs(fa/float64(len(a))-fb/float64(len(b))))
	}
	return d
}

func TestExactPValuesMatchEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 60 {
		n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
		x, y := make([]float64, n1), make([]float64, n2)
		levels := 3 + rng.IntN(10) // few levels: many ties
		for i := range x {
			x[i] = float64(rng.IntN(levels))
		}
		for i := range y {
			y[i] = float64(rng.IntN(levels) + rng.IntN(3))
		}
		_, p := MannWhitney(x, y)
		if want := bruteForce(x, y, uDistance); !near(p, want, 1e-9) {
			t.Errorf("trial %d: MannWhitney(%v, %v) p = %.6f, enumeration %.6f", trial, x, y, p, want)
		}
		d, kp := KolmogorovSmirnov(x, y)
		if want := ksDistance(x, y); !near(d, want, 1e-12) {
			t.Errorf("trial %d: KS D = %g, want %g", trial, d, want)
		}
		if want := bruteForce(x, y, ksDistance); !near(kp, want, 1e-9) {
			t.Errorf("trial %d: KS(%v, %v) p = %.6f, enumeration %.6f", trial, x, y, kp, want)
		}
	}
}

// Above the exact limit, the normal approximation agrees with the exact
// count closely.
func TestMannWhitneyNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 20 {
		x, y := make([]float64, 11), make([]float64, 11)
		for i := range x {
			x[i] = math.Round(rng.NormFloat64() * 5)
			y[i] = math.Round(rng.NormFloat64()*5 + 3)
		}
		_, approx := MannWhitney(x, y) // n = 22 > MannWhitneyExactMax
		z := append(slices.Clone(x), y...)
		ranks2, _ := midRanks(z)
		w2 := 0
		for i := range x {
			w2 += ranks2[i]
		}
		exact := mannWhitneyExact(ranks2, len(x), w2)
		if !near(approx, exact, 0.01+0.1*exact) {
			t.Errorf("trial %d: normal approximation p %.4f, exact %.4f", trial, approx, exact)
		}
	}
}

func TestKolmogorovAsymptotic(t *testing.T) {
	// The Kolmogorov distribution's tabled critical values (10%, 5%, 1% at
	// 1.224, 1.358, 1.628) and other known points.
	for _, tc := range []struct{ lambda, q float64 }{
		{0.1, 1}, {0.5, 0.9639}, {1.0, 0.2700}, {1.224, 0.1000}, {1.358, 0.0500}, {1.628, 0.0100}, {3, 3.046e-8},
	} {
		if got := kolmogorovQ(tc.lambda); !near(got, tc.q, 5e-3*tc.q) {
			t.Errorf("Q(%g) = %.6g, want %.6g", tc.lambda, got, tc.q)
		}
	}
	// Large samples take the asymptotic path and agree with the exact count.
	rng := rand.New(rand.NewPCG(5, 5))
	x, y := make([]float64, 120), make([]float64, 100)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = rng.NormFloat64() + 0.3
	}
	d, p := KolmogorovSmirnov(x, y) // 12000 > KolmogorovSmirnovExactMax
	z := append(slices.Clone(x), y...)
	slices.Sort(z)
	exact := ksExact(z, len(x), len(y), int(math.Round(d*float64(len(x)*len(y)))))
	if !near(p, exact, 0.2*exact+0.002) {
		t.Errorf("asymptotic p %.5f, exact %.5f", p, exact)
	}
}

func TestHolm(t *testing.T) {
	// Worked example: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 is
	// 0.02, 0.03, 0.06, 0.04; made monotone: 0.02, 0.03, 0.06, 0.06.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	// Capped at 1; NaN is left out of m.
	got = Holm([]float64{0.5, math.NaN(), 0.4})
	if !near(got[0], 0.8, 1e-12) || !math.IsNaN(got[1]) || !near(got[2], 0.8, 1e-12) {
		t.Errorf("Holm with NaN = %v, want [0.8 NaN 0.8]", got)
	}
	if got := Holm([]float64{0.9, 0.8}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm = %v, want capped at 1", got)
	}
}

// TestHolmSteps: a test is rejected by HolmSteps (reached, p at most its
// level) exactly when its Holm-adjusted p-value is at most alpha, whether
// the family's other members are returned or only passed along, and two
// shares of one family decided apart decide as the whole family does.
func TestHolmSteps(t *testing.T) {
	// Worked example at 5%: sorted 0.005 (step 1, 0.05/4), 0.01 (0.05/3),
	// 0.03 (0.05/2: stops), 0.04 (judged at the stopping level 0.025).
	steps := HolmSteps([]float64{0.01, 0.04, 0.03, 0.005}, 4, 0.05)
	want := []HolmStep{
		{Step: 2, Of: 4, Level: 0.05 / 3, Reached: true, Adjusted: 0.03},
		{Step: 4, Of: 4, Level: 0.025, Reached: false, Adjusted: 0.06},
		{Step: 3, Of: 4, Level: 0.025, Reached: true, Adjusted: 0.06},
		{Step: 1, Of: 4, Level: 0.0125, Reached: true, Adjusted: 0.02},
	}
	for i, w := range want {
		g := steps[i]
		if g.Step != w.Step || g.Of != w.Of || g.Reached != w.Reached || !near(g.Level, w.Level, 1e-12) || !near(g.Adjusted, w.Adjusted, 1e-12) {
			t.Errorf("step %d = %+v, want %+v", i, g, w)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := 1 + rng.IntN(8)
		ps := make([]float64, m)
		for i := range ps {
			ps[i] = math.Pow(rng.Float64(), 3) // many small ones
		}
		adj := Holm(ps)
		k := rng.IntN(m + 1) // the first k are ours, the rest another's
		ours := HolmSteps(ps, k, 0.05)
		rest := append(slices.Clone(ps[k:]), ps[:k]...)
		theirs := HolmSteps(rest, m-k, 0.05)
		for i := range m {
			var s HolmStep
			if i < k {
				s = ours[i]
			} else {
				s = theirs[i-k]
			}
			rejected := s.Reached && ps[i] <= s.Level
			if rejected != (adj[i] <= 0.05) {
				t.Fatalf("ps %v, test %d (first %d ours): step %+v rejects %v, Holm adjusted %.4f", ps, i, k, s, rejected, adj[i])
			}
			if !near(s.Adjusted, adj[i], 1e-12) && ps[i] != ps[(i+1)%m] {
				t.Fatalf("ps %v, test %d: adjusted %.6f, Holm %.6f", ps, i, s.Adjusted, adj[i])
			}
		}
	}
}

func TestBootstrapMedians(t *testing.T) {
	base := []float64{10, 11, 9, 10.5, 9.5}
	cand := []float64{13, 14, 12, 13.5, 12.5}
	a := BootstrapMedians(base, cand, Ratio, 2000, 0.95, 42)
	b := BootstrapMedians(base, cand, Ratio, 2000, 0.95, 42)
	if a != b {
		t.Errorf("same seed, different intervals: %v %v", a, b)
	}
	// The ratio of medians 13/10 is inside; the interval is ordered and
	// within the extreme ratios of the samples.
	if !(a.Low <= 1.3 && 1.3 <= a.High && a.Low >= 12.0/11 && a.High <= 14.0/9) {
		t.Errorf("interval %v", a)
	}
	if c := BootstrapMedians([]float64{5, 5, 5}, []float64{6, 6, 6}, Ratio, 500, 0.95, 1); c.Low != 1.2 || c.High != 1.2 {
		t.Errorf("constant samples: %v, want [1.2, 1.2]", c)
	}
	if c := BootstrapMedians([]float64{0, 0, 0}, []float64{1, 2, 3}, Ratio, 500, 0.95, 1); !math.IsNaN(c.Low) {
		t.Errorf("ratio over zero median: %v, want NaN", c)
	}
	if c := BootstrapMedians([]float64{0, 0, 0}, []float64{0.1, 0.1, 0.1}, Difference, 500, 0.95, 1); !near(c.Low, 0.1, 1e-12) || !near(c.High, 0.1, 1e-12) {
		t.Errorf("difference: %v", c)
	}
	// Wider samples give a wider interval.
	wide := BootstrapMedians([]float64{5, 10, 15, 8, 12}, []float64{6, 13, 18, 10, 14}, Ratio, 2000, 0.95, 42)
	if wide.High-wide.Low <= a.High-a.Low {
		t.Errorf("noisier samples gave a narrower interval: %v vs %v", wide, a)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := Median(tc.x); got != tc.want {
			t.Errorf("Median(%v) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestShiftInterval(t *testing.T) {
	// 4 and 4: the 16 differences of {5..8} and {1..4} are 1 2 2 3 3 3 4 4
	// 4 4 5 5 5 6 6 7; P(U = 0) = 1/70 <= 2.5% < P(U <= 1) = 2/70, so the
	// 95% interval is the 1st to the 16th: [1, 7], around the median 4.
	est, ci := ShiftInterval([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.95)
	if est != 4 || ci.Low != 1 || ci.High != 7 {
		t.Errorf("4v4: %g [%g, %g], want 4 [1, 7]", est, ci.Low, ci.High)
	}
	// 3 and 3 cannot reach 95% (P(U = 0) = 1/20): infinite.
	if _, ci := ShiftInterval([]float64{1, 2, 3}, []float64{5, 6, 7}, 0.95); !math.IsInf(ci.Low, -1) || !math.IsInf(ci.High, 1) {
		t.Errorf("3v3: %v, want infinite", ci)
	}
	// At 90% it can: the extremes.
	if _, ci := ShiftInterval([]float64{1, 2, 3}, []float64{5, 6, 7}, 0.90); ci.Low != 2 || ci.High != 6 {
		t.Errorf("3v3 at 90%%: %v, want [2, 6]", ci)
	}
	if est, ci := ShiftInterval(nil, []float64{1}, 0.95); !math.IsNaN(est) || !math.IsNaN(ci.Low) {
		t.Errorf("empty: %g %v", est, ci)
	}
	// The exact rank against a table of the Mann-Whitney distribution:
	// two-sided 5% critical values of U are 2 (5v5), 13 (8v8), 23 (10v10);
	// the interval takes the (value+1)-th difference from each end.
	for _, tc := range []struct{ n, c int }{{5, 3}, {8, 14}, {10, 24}} {
		if got := shiftRank(tc.n, tc.n, 0.025); got != tc.c {
			t.Errorf("shiftRank(%d, %d) = %d, want %d", tc.n, tc.n, got, tc.c)
		}
	}
	// The normal approximation used above ShiftExactMax agrees with the
	// count near it.
	exact := shiftRank(50, 50, 0.025)
	mean, sd := 1250.0, math.Sqrt(2500*101/12.0)
	approx := int(math.Floor(mean + 0.5 - 1.959964*sd))
	if d := exact - approx; d < -2 || d > 2 {
		t.Errorf("50v50: exact rank %d, normal approximation %d", exact, approx)
	}
	// Coverage: over many draws of two shifted samples, the 95% interval
	// holds the true shift at least 95% of the time (it is exact, and
	// conservative by the discreteness of U).
	rng := rand.New(rand.NewPCG(21, 21))
	hits, trials := 0, 2000
	for range trials {
		b, c := make([]float64, 6), make([]float64, 7)
		for i := range b {
			b[i] = rng.ExpFloat64()
		}
		for i := range c {
			c[i] = rng.ExpFloat64() + 0.5
		}
		if _, ci := ShiftInterval(b, c, 0.95); ci.Low <= 0.5 && 0.5 <= ci.High {
			hits++
		}
	}
	if cover := float64(hits) / float64(trials); cover < 0.94 {
		t.Errorf("coverage %.3f, want >= 0.95", cover)
	}
}

// TestMannWhitneyGreater: the one-sided p-value is half the two-sided one
// in the direction of the data, and its complement the other way; exact
// for 3 against 3 (the most extreme split has probability 1/20).
func TestMannWhitneyGreater(t *testing.T) {
	hi, lo := []float64{4, 5, 6}, []float64{1, 2, 3}
	if p := MannWhitneyGreater(hi, lo); !near(p, 0.05, 1e-12) {
		t.Errorf("3 above 3: p %g, want 1/20", p)
	}
	if p := MannWhitneyGreater(lo, hi); !near(p, 0.95, 1e-12) {
		t.Errorf("3 below 3: p %g, want 19/20", p)
	}
	if MannWhitneyGreater(nil, lo) != 1 {
		t.Error("empty sample")
	}
}
