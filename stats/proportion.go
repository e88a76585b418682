package stats

import "math"

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval of a binomial proportion k/n at
// the normal quantile z (Z95 for 95%); [0, 1] for n = 0.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return max(0, c-h), min(1, c+h)
}
