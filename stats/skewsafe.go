package stats

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The skew-safe t test (docs/verdicts.md, "Skewed rounds").
//
// Student's t statistic T = √n (mean − μ)/s keeps its level only when the
// values are about normal. Per-round log ratios of paired runs are often
// skewed: a variant with an occasional bad run, a host that steals in
// bursts. With three to ten rounds the sample then usually holds none of
// the rare rounds, its mean sits on the common side of the true mean and
// its spread is small, so T lands in a tail far more often than Student's
// distribution says: real A/A rounds resampled at the tolerance failed
// 9.7% of 3-round comparisons at a stated 5%.
//
// No test of a mean keeps its level over every distribution (the mean can
// hang on a rare value no sample shows), so the test states the family it
// holds for, and takes for each observed T the largest tail probability
// any member of the family gives it: the least favourable p-value. The
// family is every per-round noise that is normal, or a mixture of two
// normals of equal spread whose means are up to SkewSafeSpread of that
// spread apart, in any proportion and of either sign: from no outliers,
// through occasional outliers on one side, to two-humped rounds. T does
// not depend on the scale, so the family has two parameters, the
// proportion and the distance. Heavy symmetric tails (Student's t with 3
// degrees of freedom) and the real rounds of compare/testdata are checked
// against it by simulation (compare.TestPairedCalibration).
//
// Given how many of the n rounds came from the rarer component (k, a
// binomial count), a mixture's sample is a normal sample with unequal
// means, so its mean is normal and its (n−1)s²/σ² an independent
// non-central chi-square with n−1 degrees of freedom and non-centrality
// k(n−k)Δ²/n: the tail P(T > c) is then one integral (skewTail), summed
// over k. skewSafeExact takes the largest over a grid of the family; the
// table skewSafeTable holds it on a grid of c for 3 to skewSafeMaxN
// values, written by TestSkewSafeTable -update and checked against the
// exact figure.

// SkewSafeSpread is the widest distance, in units of either component's
// standard deviation, between the two means of a mixture the skew-safe
// test keeps its level for.
const SkewSafeSpread = 4.0

// skewSafeMaxN is the largest sample the table is computed for; larger
// samples use its row, which is conservative: the least favourable tail
// at any c shrinks as n grows (TestSkewSafeTable checks every row).
const skewSafeMaxN = 30

// Grid of the family the exact figure maximises over.
var (
	skewSafeWeights = func() []float64 {
		var w []float64
		for p := 0.025; p <= 0.5+1e-9; p += 0.025 {
			w = append(w, p)
		}
		return w
	}()
	skewSafeDistances = []float64{1, 2, 3, SkewSafeSpread}
)

// Grid of c in the table: ln c from skewSafeLnCMin in steps of
// skewSafeLnCStep; a row ends where the tail drops below skewSafeFloor.
const (
	skewSafeLnCMin  = -2.0
	skewSafeLnCStep = 0.05
	skewSafeFloor   = 1e-10
)

// SkewSafeP is the least favourable probability, over the family, that
// the t statistic of n values is at least t: the one-sided p-value of
// "the mean exceeds μ" when t = √n (mean − μ)/s. The family is symmetric,
// so the p-value of "the mean is below μ" is SkewSafeP(n, −t). 1 for
// n < 3 or t ≤ 0 (a t statistic on the wrong side decides nothing);
// NaN for a NaN t. For t beyond the table it is the table's last value
// (at most skewSafeFloor), so never 0.
func SkewSafeP(n int, t float64) float64 {
	switch {
	case math.IsNaN(t):
		return math.NaN()
	case n < 3 || t <= 0:
		return 1
	}
	row := skewSafeTable[min(n, skewSafeMaxN)-3]
	u := (math.Log(t) - skewSafeLnCMin) / skewSafeLnCStep
	switch {
	case u <= 0:
		return 1
	case u >= float64(len(row)-1):
		return math.Pow(10, row[len(row)-1])
	}
	i := int(u)
	f := u - float64(i)
	return min(1, math.Pow(10, row[i]*(1-f)+row[i+1]*f))
}

// SkewSafeQuantile is the critical value of the skew-safe test: the
// smallest c with SkewSafeP(n, c) ≤ alpha, so that mean ± c·s/√n is an
// interval at one-sided level alpha each way over the whole family. +Inf
// for n < 3 or an alpha below the table's floor.
func SkewSafeQuantile(n int, alpha float64) float64 {
	if n < 3 || !(alpha > 0) {
		return math.Inf(1)
	}
	if alpha >= 0.5 {
		alpha = 0.5
	}
	row := skewSafeTable[min(n, skewSafeMaxN)-3]
	la := math.Log10(alpha)
	if la < row[len(row)-1] {
		return math.Inf(1)
	}
	// The row decreases; find the first entry at or below log10 alpha.
	i := sort.Search(len(row), func(i int) bool { return row[i] <= la })
	if i == 0 {
		return math.Exp(skewSafeLnCMin)
	}
	f := (row[i-1] - la) / (row[i-1] - row[i])
	return math.Exp(skewSafeLnCMin + (float64(i-1)+f)*skewSafeLnCStep)
}

// FlooredSE is the standard error of the mean of x with its standard
// deviation taken as at least floor: values known only to a resolution
// (an HDR histogram's three digits) are not known to agree any closer, so
// equal values decide nothing by construction.
func FlooredSE(x []float64, floor float64) float64 {
	return max(SD(x), floor) / math.Sqrt(float64(len(x)))
}

// SkewSafeMean is the mean of x and its interval at one-sided level
// alpha each way by the skew-safe critical value, the spread floored as
// FlooredSE does; infinite with fewer than 3 values.
func SkewSafeMean(x []float64, floor, alpha float64) (mean float64, ci Interval) {
	mean, _ = MeanInterval(x, 0.5)
	if len(x) < 3 {
		return mean, Interval{Low: math.Inf(-1), High: math.Inf(1)}
	}
	h := SkewSafeQuantile(len(x), alpha) * FlooredSE(x, floor)
	return mean, Interval{Low: mean - h, High: mean + h}
}

// skewSafeExact is the exact least favourable tail P(T ≥ c) of n values
// over the family's grid (the normal included), computed by integration.
func skewSafeExact(n int, c float64) float64 {
	g := newSkewGrids(n)
	return g.sup(c)
}

// skewGrids holds, for one n, the integration grids of the sample's
// spread for every distance of the family and every count k of values
// from the rarer component.
type skewGrids struct {
	n     int
	grids map[[2]int]chiGrid // [distance index, k]
	plain chiGrid            // the normal: central chi-square
}

func newSkewGrids(n int) *skewGrids {
	g := &skewGrids{n: n, grids: map[[2]int]chiGrid{}, plain: newChiGrid(n-1, 0)}
	for di, d := range skewSafeDistances {
		for k := 0; k <= n; k++ {
			g.grids[[2]int{di, k}] = newChiGrid(n-1, float64(k*(n-k))*d*d/float64(n))
		}
	}
	return g
}

// sup is the largest tail P(T ≥ c) over the family.
func (g *skewGrids) sup(c float64) float64 {
	best := g.plain.tail(c, 0)
	for _, p := range skewSafeWeights {
		for di := range skewSafeDistances {
			for _, sign := range []float64{1, -1} {
				best = max(best, g.member(c, p, di, sign))
			}
		}
	}
	return min(best, 1)
}

// member is the tail P(T ≥ c) of one member of the family: a share p of
// the values from the component sign·skewSafeDistances[di] away, the
// mixture's mean being the true mean.
func (g *skewGrids) member(c, p float64, di int, sign float64) float64 {
	n := float64(g.n)
	b := distuv.Binomial{N: n, P: p}
	d := skewSafeDistances[di]
	var tot float64
	for k := 0; k <= g.n; k++ {
		// The sample mean's offset from the true mean, in units of σ/√n,
		// given k values from the rarer component.
		delta := math.Sqrt(n) * sign * d * (float64(k)/n - p)
		tot += b.Prob(float64(k)) * g.grids[[2]int{di, k}].tail(c, delta)
	}
	return tot
}

// chiGrid is a quadrature of a non-central chi-square W with df degrees
// of freedom: nodes s = √(W/df) and weights, so that E f(W) ≈ Σ w f(s).
type chiGrid struct {
	s, w []float64
}

// chiGridPoints is the Simpson rule's number of intervals.
const chiGridPoints = 400

func newChiGrid(df int, lambda float64) chiGrid {
	k := float64(df)
	top := k + lambda + 12*math.Sqrt(2*(k+2*lambda)) + 20
	// Integrate over x in [0, 1] with √w = U x²: smooth at 0 for df ≥ 2,
	// and fine near w = 0, where a large c takes its tail from.
	u0 := math.Sqrt(top)
	h := 1.0 / chiGridPoints
	g := chiGrid{s: make([]float64, chiGridPoints+1), w: make([]float64, chiGridPoints+1)}
	for i := range g.s {
		x := float64(i) * h
		u := u0 * x * x
		c := 2.0
		switch {
		case i == 0 || i == chiGridPoints:
			c = 1
		case i%2 == 1:
			c = 4
		}
		g.s[i] = u / math.Sqrt(k)
		// dw = 2u du, du = 2 U x dx.
		g.w[i] = c * h / 3 * ncChi2PDF(u*u, k, lambda) * 2 * u * 2 * u0 * x
	}
	return g
}

// tail is P(Z + delta ≥ c·s) for a standard normal Z: the chance that
// the t statistic reaches c given the spread, integrated over it.
func (g chiGrid) tail(c, delta float64) float64 {
	var t float64
	for i, s := range g.s {
		t += g.w[i] * 0.5 * math.Erfc((c*s-delta)/math.Sqrt2)
	}
	return t
}

// ncChi2PDF is the density at w of the non-central chi-square with k
// degrees of freedom and non-centrality lambda: a Poisson(lambda/2)
// mixture of central chi-squares with k + 2j degrees of freedom.
func ncChi2PDF(w, k, lambda float64) float64 {
	if lambda == 0 {
		return math.Exp(chi2LogPDF(w, k))
	}
	h := lambda / 2
	var s float64
	top := int(h + 12*math.Sqrt(h) + 30)
	for j := 0; j <= top; j++ {
		lg, _ := math.Lgamma(float64(j) + 1)
		s += math.Exp(-h + float64(j)*math.Log(h) - lg + chi2LogPDF(w, k+2*float64(j)))
	}
	return s
}

func chi2LogPDF(w, k float64) float64 {
	if w <= 0 {
		if k == 2 {
			return -math.Ln2
		}
		return math.Inf(-1)
	}
	lg, _ := math.Lgamma(k / 2)
	return (k/2-1)*math.Log(w) - w/2 - k/2*math.Ln2 - lg
}

// skewSafeRow computes one row of the table: log10 of the least
// favourable tail at every c of the grid, until it drops below the floor.
func skewSafeRow(n int) []float64 {
	g := newSkewGrids(n)
	var row []float64
	for i := 0; ; i++ {
		p := g.sup(math.Exp(skewSafeLnCMin + float64(i)*skewSafeLnCStep))
		row = append(row, math.Log10(max(p, skewSafeFloor)))
		if p < skewSafeFloor {
			return row
		}
	}
}
