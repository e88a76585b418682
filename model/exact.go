package model

import (
	"context"
	"math/big"
)

// Exact balls-into-bins counting. M distinguishable tasks each go to one of
// N workers chosen uniformly and independently; there are N^M equally
// likely assignments, and every probability below is a count of
// assignments over N^M, computed with big integers.

// binomials returns Pascal's triangle up to row m: c[i][j] = C(i, j).
func binomials(m int) [][]*big.Int {
	c := make([][]*big.Int, m+1)
	for i := range c {
		c[i] = make([]*big.Int, i+1)
		c[i][0], c[i][i] = big.NewInt(1), big.NewInt(1)
		for j := 1; j < i; j++ {
			c[i][j] = new(big.Int).Add(c[i-1][j-1], c[i-1][j])
		}
	}
	return c
}

// pow returns n^k as a big integer.
func pow(n, k int) *big.Int {
	return new(big.Int).Exp(big.NewInt(int64(n)), big.NewInt(int64(k)), nil)
}

// givenAtLeast counts the assignments in which one given worker gets at
// least k of m tasks: sum over j >= k of C(m, j)·(n-1)^(m-j). Over n^m it is
// the binomial tail P(Bin(m, 1/n) >= k).
func givenAtLeast(c [][]*big.Int, m, n, k int) *big.Int {
	sum := new(big.Int)
	t := new(big.Int)
	for j := max(k, 0); j <= m; j++ {
		t.Mul(c[m][j], pow(n-1, m-j))
		sum.Add(sum, t)
	}
	return sum
}

// allAtMost counts the assignments of m tasks to n workers in which every
// worker gets at most k. That count is m!·[x^m] f(x)^n with f the
// exponential series truncated after x^k/k!, and the coefficients of a
// power g = f^n follow from f·g' = n·f'·g (J.C.P. Miller's recurrence for
// powers of a series): with cnt_i = i!·[x^i] g,
//
//	cnt_0 = 1, cnt_i = (1/i)·sum_{j=1..min(i,k)} ((n+1)·j - i)·C(i, j)·cnt_{i-j},
//
// where the division is exact. That is O(m·k) big-integer operations,
// whatever n.
//
// For 2k+2 > m at most one worker can exceed k, so the count is n^m minus n
// times the assignments in which one given worker gets more than k; that
// shortcut is used whenever it holds.
func allAtMost(c [][]*big.Int, m, n, k int) *big.Int {
	switch {
	case k >= m:
		return pow(n, m)
	case k < 0 || int64(k)*int64(n) < int64(m):
		return new(big.Int)
	case 2*k+2 > m:
		over := givenAtLeast(c, m, n, k+1)
		return over.Sub(pow(n, m), over.Mul(over, big.NewInt(int64(n))))
	}
	cnt := make([]*big.Int, m+1)
	cnt[0] = big.NewInt(1)
	t, f := new(big.Int), new(big.Int)
	for i := 1; i <= m; i++ {
		s := new(big.Int)
		for j := 1; j <= min(i, k); j++ {
			f.SetInt64(int64(n+1)*int64(j) - int64(i))
			t.Mul(c[i][j], cnt[i-j])
			t.Mul(t, f)
			s.Add(s, t)
		}
		cnt[i] = s.Quo(s, f.SetInt64(int64(i)))
	}
	return cnt[m]
}

// maxLoadCounts returns, for k = 0..m, how many of the n^m assignments of
// m tasks to n workers have a largest load of exactly k. It checks ctx
// between values of k.
func maxLoadCounts(ctx context.Context, c [][]*big.Int, m, n int) ([]*big.Int, error) {
	out := make([]*big.Int, m+1)
	prev := new(big.Int)
	for k := 0; k <= m; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := allAtMost(c, m, n, k)
		out[k] = new(big.Int).Sub(cur, prev)
		prev = cur
	}
	return out, nil
}
