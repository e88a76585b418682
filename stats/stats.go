package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics behind verdicts (measurement.md, "Across runs"). Samples
// are per-run values, so they are small (a handful to a few dozen) and may
// tie (an HDR histogram quantile is quantized to 3 significant digits; an
// error rate is often 0 in every run). Exact distributions are therefore
// computed conditionally on the observed ties, by counting, rather than
// assumed continuous.

// Sample sizes up to which p-values are exact.
const (
	// MannWhitneyExactMax is the largest n1+n2 for which MannWhitney
	// counts the exact permutation distribution; above it, it uses the
	// normal approximation with tie correction, which is good there.
	MannWhitneyExactMax = 20
	// KolmogorovSmirnovExactMax is the largest n1*n2 for which
	// KolmogorovSmirnov counts the exact permutation distribution; above
	// it, it uses the asymptotic Kolmogorov distribution. Counting costs
	// O((n1+n2)*n1), so the limit is high: the asymptotic series is poor
	// for the few dozen runs comparisons have.
	KolmogorovSmirnovExactMax = 10000
)

// Median returns the median of x (the mean of the middle two for an even
// count), NaN for none. x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// isFinite tells whether x is neither NaN nor infinite.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// midRanks returns the ranks (from 1) of the pooled values z, ties sharing
// the mean of their ranks, doubled so that they are integers; and the sum
// over tie groups of t^3-t.
func midRanks(z []float64) (ranks2 []int, tieSum float64) {
	idx := make([]int, len(z))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case z[a] < z[b]:
			return -1
		case z[a] > z[b]:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(z))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && z[idx[j+1]] == z[idx[i]] {
			j++
		}
		// Positions i..j (0-based) hold ranks i+1..j+1, whose mean
		// doubled is i+j+2.
		for k := i; k <= j; k++ {
			ranks2[idx[k]] = i + j + 2
		}
		if t := float64(j - i + 1); t > 1 {
			tieSum += t*t*t - t
		}
		i = j + 1
	}
	return ranks2, tieSum
}

// MannWhitney returns the Mann-Whitney U statistic of x against y (the
// number of pairs with x above y, ties counting one half) and its
// two-sided p-value for the hypothesis that both come from the same
// distribution. Ties get mid-ranks. With n1+n2 <= MannWhitneyExactMax the
// p-value is exact: the share of all C(n1+n2, n1) ways to split the pooled
// values whose U is at least as far from its mean, counted by dynamic
// programming over rank sums (the same as enumerating the splits). Above
// that it is the normal approximation with tie and continuity corrections.
// An empty sample, or all values tied, gives p = 1.
func MannWhitney(x, y []float64) (u, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	n := n1 + n2
	z := append(slices.Clone(x), y...)
	ranks2, tieSum := midRanks(z)
	w2 := 0 // doubled rank sum of x
	for i := range n1 {
		w2 += ranks2[i]
	}
	u = float64(w2)/2 - float64(n1*(n1+1))/2
	if tieSum == float64(n*n*n-n) {
		return u, 1 // one tie group: nothing to tell apart
	}
	if n <= MannWhitneyExactMax {
		return u, mannWhitneyExact(ranks2, n1, w2)
	}
	mean := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * (float64(n+1) - tieSum/float64(n*(n-1)))
	dev := math.Abs(u-mean) - 0.5
	if dev <= 0 {
		return u, 1
	}
	p = 2 * distuv.UnitNormal.Survival(dev/math.Sqrt(variance))
	return u, min(p, 1)
}

// MannWhitneyGreater returns the one-sided p-value of Mann-Whitney's test
// that x tends to lie above y: half the two-sided p-value when U is above
// its mean, one less that half otherwise (U's distribution given the ties
// is symmetric about its mean, so the two tails are equal).
func MannWhitneyGreater(x, y []float64) float64 {
	u, p := MannWhitney(x, y)
	if len(x) == 0 || len(y) == 0 {
		return 1
	}
	if u > float64(len(x)*len(y))/2 {
		return p / 2
	}
	return 1 - p/2
}

// mannWhitneyExact counts, for every subset of n1 of the pooled doubled
// ranks, its rank sum, and returns the share of subsets whose sum is at
// least as far from the mean as w2.
func mannWhitneyExact(ranks2 []int, n1, w2 int) float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	// ways[k][s]: subsets of k of the ranks seen so far with doubled sum s.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range ranks2 {
		for k := min(i+1, n1); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total - r; s >= 0; s-- {
				if prev[s] != 0 {
					cur[s+r] += prev[s]
				}
			}
		}
	}
	n := len(ranks2)
	mean2 := n1 * (n + 1) // doubled mean rank sum, an integer
	obs := abs(w2 - mean2)
	var hit, all float64
	for s, c := range ways[n1] {
		if c == 0 {
			continue
		}
		all += c
		if abs(s-mean2) >= obs {
			hit += c
		}
	}
	return min(hit/all, 1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// KolmogorovSmirnov returns the two-sample Kolmogorov-Smirnov statistic D
// of x and y (the largest distance between their empirical distribution
// functions, from gonum's stat.KolmogorovSmirnov) and its two-sided
// p-value. It tells a change of spread or shape that a rank test can miss.
// With n1*n2 <= KolmogorovSmirnovExactMax the p-value is exact under
// permutation, ties included: the share of all splits of the pooled values
// whose D is at least the observed one, counted over lattice paths. Above
// that it is the asymptotic Kolmogorov distribution with Stephens'
// small-sample correction. An empty sample gives p = 1.
func KolmogorovSmirnov(x, y []float64) (d, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	d = stat.KolmogorovSmirnov(xs, nil, ys, nil)
	// The same distance in integers, |cx*n2 - cy*n1|, so that counting
	// compares exactly.
	z := append(slices.Clone(xs), ys...)
	slices.Sort(z)
	dObs, i, j := 0, 0, 0
	for k := 0; k < len(z); {
		v := z[k]
		for k < len(z) && z[k] == v {
			k++
		}
		for i < n1 && xs[i] == v {
			i++
		}
		for j < n2 && ys[j] == v {
			j++
		}
		dObs = max(dObs, abs(i*n2-j*n1))
	}
	if dObs == 0 {
		return d, 1
	}
	if n1*n2 <= KolmogorovSmirnovExactMax {
		return d, ksExact(z, n1, n2, dObs)
	}
	en := float64(n1*n2) / float64(n1+n2)
	sq := math.Sqrt(en)
	return d, kolmogorovQ((sq + 0.12 + 0.11/sq) * d)
}

// ksExact counts the orderings of the pooled sorted values z (n1 from x,
// n2 from y) in which |cx*n2 - cy*n1| stays below dObs at the end of every
// tie group, and returns the share of the others. A path is the sequence
// of which sample each pooled position came from; within a tie group only
// the group's end is a point where the empirical functions are compared.
func ksExact(z []float64, n1, n2, dObs int) float64 {
	n := n1 + n2
	inside := make([]float64, n1+1) // paths by x count so far, never reaching dObs
	next := make([]float64, n1+1)
	inside[0] = 1
	for pos := 1; pos <= n; pos++ {
		clear(next)
		for cx := max(0, pos-n2); cx <= min(pos, n1); cx++ {
			v := 0.0
			if cx <= pos-1 && pos-1-cx <= n2 {
				v += inside[cx] // this position from y
			}
			if cx >= 1 {
				v += inside[cx-1] // from x
			}
			next[cx] = v
		}
		if pos == n || z[pos] != z[pos-1] {
			for cx := range next {
				if cy := pos - cx; cy >= 0 && abs(cx*n2-cy*n1) >= dObs {
					next[cx] = 0
				}
			}
		}
		inside, next = next, inside
	}
	all := binomial(n, n1)
	return min(max(1-inside[n1]/all, 0), 1)
}

// binomial returns C(n, k) as a float64.
func binomial(n, k int) float64 {
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// kolmogorovQ is the Kolmogorov distribution's survival function,
// Q(λ) = 2 Σ_{k≥1} (-1)^(k-1) exp(-2 k² λ²).
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1 // the series converges slowly there, and Q is 1 to 1e-9
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(max(2*sum, 0), 1)
}

// Holm returns Holm's step-down adjustment of the p-values ps, in the same
// order: the i-th smallest p is multiplied by (m-i+1), the results are made
// non-decreasing in that order and capped at 1. Rejecting every hypothesis
// whose adjusted p is below alpha controls the family-wise error rate at
// alpha. NaN p-values are left out of m and stay NaN.
func Holm(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	m, running := len(idx), 0.0
	for rank, i := range idx {
		running = max(running, min(1, float64(m-rank)*ps[i]))
		out[i] = running
	}
	return out
}

// Interval is a confidence interval.
type Interval struct {
	// Low and High bound it; NaN when unknown.
	Low, High float64
}

// BootstrapMedians returns the percentile bootstrap interval, at the given
// level (0.95 for 95%), of f(median of a resample of cand, median of a
// resample of base), from resamples draws of each sample with replacement
// using a PCG generator seeded with seed. f is, for example, a ratio or a
// difference. It returns NaNs when a sample is empty or some draw makes f
// not finite (a ratio over a zero median).
func BootstrapMedians(base, cand []float64, f func(cand, base float64) float64, resamples int, level float64, seed uint64) Interval {
	nan := Interval{math.NaN(), math.NaN()}
	if len(base) == 0 || len(cand) == 0 || resamples < 1 {
		return nan
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bs, cs := make([]float64, len(base)), make([]float64, len(cand))
	draws := make([]float64, resamples)
	for i := range draws {
		for k := range bs {
			bs[k] = base[rng.IntN(len(base))]
		}
		for k := range cs {
			cs[k] = cand[rng.IntN(len(cand))]
		}
		slices.Sort(bs)
		slices.Sort(cs)
		v := f(sortedMedian(cs), sortedMedian(bs))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nan
		}
		draws[i] = v
	}
	slices.Sort(draws)
	tail := (1 - level) / 2
	return Interval{quantileSorted(draws, tail), quantileSorted(draws, 1-tail)}
}

// Quantile returns the q-quantile (0 <= q <= 1) of x, interpolating
// linearly between order statistics; NaN for none. x is not modified.
func Quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, q)
}

// quantileSorted returns the q-quantile of sorted s, interpolating
// linearly between order statistics.
func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Ratio is cand/base, for BootstrapMedians.
func Ratio(cand, base float64) float64 { return cand / base }

// Difference is cand-base, for BootstrapMedians.
func Difference(cand, base float64) float64 { return cand - base }

// ShiftInterval returns the Hodges-Lehmann estimate of the shift from base
// to cand (the median of all n1*n2 differences cand[j]-base[i]) and its
// distribution-free confidence interval at the given level (0.95), the
// one that inverts the Mann-Whitney test: the c-th smallest and c-th
// largest difference, where c is the largest count with
// P(U < c) <= (1-level)/2 under no difference. Its coverage is at least
// level for any continuous distributions that differ by a shift, however
// few the values; a far-off value moves it by one order statistic, not to
// itself. For ratios, pass logarithms. P(U < c) is exact (counted) when
// n1*n2 <= ShiftExactMax, from the normal approximation above. With too
// few values for the level (3 and 3 reach only 90%), the interval is
// infinite; with an empty sample, NaN.
func ShiftInterval(base, cand []float64, level float64) (estimate float64, ci Interval) {
	n1, n2 := len(base), len(cand)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), Interval{math.NaN(), math.NaN()}
	}
	d := make([]float64, 0, n1*n2)
	for _, c := range cand {
		for _, b := range base {
			d = append(d, c-b)
		}
	}
	slices.Sort(d)
	estimate = sortedMedian(d)
	c := shiftRank(n1, n2, (1-level)/2)
	if c < 1 {
		return estimate, Interval{math.Inf(-1), math.Inf(1)}
	}
	return estimate, Interval{d[c-1], d[len(d)-c]}
}

// ShiftExactMax is the largest n1*n2 for which ShiftInterval counts the
// distribution of U exactly.
const ShiftExactMax = 2500

// shiftRank returns the largest c with P(U < c) <= tail, where U is the
// Mann-Whitney count of an n1 and an n2 sample from one continuous
// distribution; 0 when even P(U = 0) is above tail.
func shiftRank(n1, n2 int, tail float64) int {
	m := n1 * n2
	if m > ShiftExactMax {
		mean := float64(m) / 2
		sd := math.Sqrt(float64(m) * float64(n1+n2+1) / 12)
		// P(U < c) ~ Phi((c - 0.5 - mean)/sd) <= tail.
		c := int(math.Floor(mean + 0.5 + distuv.UnitNormal.Quantile(tail)*sd))
		return max(c, 0)
	}
	// ways[k][u]: subsets of k of the ranks 1..i whose U (rank sum minus
	// k(k+1)/2) is u; a subset of the pooled ranks is the cand sample.
	ways := make([][]float64, n2+1)
	for k := range ways {
		ways[k] = make([]float64, m+1)
	}
	ways[0][0] = 1
	for i := 1; i <= n1+n2; i++ {
		for k := min(i, n2); k >= 1; k-- {
			// Adding rank i as the k-th member adds i-k to U: it is above
			// i-k members of the other sample.
			shift := i - k
			prev, cur := ways[k-1], ways[k]
			for u := m - shift; u >= 0; u-- {
				if prev[u] != 0 {
					cur[u+shift] += prev[u]
				}
			}
		}
	}
	total := binomial(n1+n2, n2)
	cum := 0.0
	for c := 0; c <= m; c++ {
		// cum is P(U < c) before adding ways[n2][c].
		if cum/total > tail*(1+1e-9) { // 1-0.9 is not quite 0.1
			return c - 1
		}
		cum += ways[n2][c]
	}
	return m
}

// HolmStep is where one test of a family stands in Holm's step-down
// procedure (HolmSteps).
type HolmStep struct {
	// Step is the test's rank in increasing order of p-value, from 1, of
	// Of tests in the family.
	Step, Of int
	// Level is the level the test is judged at: alpha/(Of-Step+1) when
	// every test before it was rejected, else the level of the first test
	// that was not (the step-down stopped there, so the test cannot be
	// rejected either).
	Level float64
	// StepLevel is alpha/(Of-Step+1), the level of the test's own step,
	// which its interval is shown at even past the step that stopped
	// Holm (it is not decided then).
	StepLevel float64
	// Reached is true when every test before this one was rejected, so
	// that this test is rejected when its p-value is at most Level.
	Reached bool
	// Adjusted is the test's Holm-adjusted p-value (Holm).
	Adjusted float64
}

// HolmSteps places the first n of ps in the step-down of Holm's
// procedure at family level alpha over all of ps: the rest of ps are the
// other members of the family (tests another package decides, such as a
// run's claims beside its comparison), which take their ranks and may stop
// the step-down, but whose own steps are not returned. Every package
// deciding a share of one family with the same ps and alpha decides it as
// one Holm family at alpha would. A test is rejected at its step when its
// p-value is at most its level; ties keep ps's order.
func HolmSteps(ps []float64, n int, alpha float64) []HolmStep {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	m := len(ps)
	out := make([]HolmStep, n)
	reached, stopLevel, adjusted := true, 0.0, 0.0
	for rank, i := range idx {
		level := alpha / float64(m-rank)
		adjusted = max(adjusted, min(1, float64(m-rank)*ps[i]))
		if reached && ps[i] > level {
			stopLevel = level
			reached = false
			if i < n {
				out[i] = HolmStep{Step: rank + 1, Of: m, Level: level, StepLevel: level, Reached: true, Adjusted: adjusted}
			}
			continue
		}
		if i < n {
			out[i] = HolmStep{Step: rank + 1, Of: m, Level: level, StepLevel: level, Reached: reached, Adjusted: adjusted}
			if !reached {
				out[i].Level = stopLevel
			}
		}
	}
	return out
}
