package model

import (
	"bytes"
	"context"
	"flag"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lbbench/lbbench/balance"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// bruteForce enumerates all n^m assignments of m tasks to n workers and
// counts, for every k, those in which worker 0 gets at least k, some worker
// gets at least k, and the largest load is exactly k.
func bruteForce(m, n int) (given, some, maxIs []int64, total int64) {
	given, some, maxIs = make([]int64, m+2), make([]int64, m+2), make([]int64, m+1)
	assign := make([]int, m)
	loads := make([]int, n)
	for {
		clear(loads)
		for _, w := range assign {
			loads[w]++
		}
		top := 0
		for _, l := range loads {
			top = max(top, l)
		}
		maxIs[top]++
		for k := 0; k <= m+1; k++ {
			if loads[0] >= k {
				given[k]++
			}
			if top >= k {
				some[k]++
			}
		}
		total++
		// Next assignment, as an odometer in base n.
		i := 0
		for i < m {
			assign[i]++
			if assign[i] < n {
				break
			}
			assign[i] = 0
			i++
		}
		if i == m {
			return
		}
	}
}

func rat(num, den int64) *big.Rat { return big.NewRat(num, den) }

// exactOf parses a Prob's exact fraction.
func exactOf(t *testing.T, p Prob) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(p.Exact)
	if !ok {
		t.Fatalf("bad exact value %q", p.Exact)
	}
	return r
}

// TestRandomAgainstBruteForce checks every exact figure of random dispatch
// against enumeration of all assignments, for every threshold K.
func TestRandomAgainstBruteForce(t *testing.T) {
	for _, c := range []struct{ m, n int }{{1, 1}, {5, 1}, {5, 3}, {3, 5}, {8, 2}, {6, 4}, {7, 3}, {9, 3}, {4, 6}} {
		t.Run(strconv.Itoa(c.m)+"_tasks_"+strconv.Itoa(c.n)+"_workers", func(t *testing.T) {
			given, some, maxIs, total := bruteForce(c.m, c.n)
			mean := new(big.Rat)
			for k, cnt := range maxIs {
				mean.Add(mean, rat(int64(k)*cnt, total))
			}
			for k := 1; k <= c.m+1; k++ {
				d, err := exactRandom(context.Background(), BallsSpec{Tasks: c.m, Workers: c.n, AtLeast: k})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := exactOf(t, d.Given), rat(given[k], total); got.Cmp(want) != 0 {
					t.Errorf("K=%d: P(given >= K) = %s, brute force %s", k, got, want)
				}
				if got, want := exactOf(t, d.Some), rat(some[k], total); got.Cmp(want) != 0 {
					t.Errorf("K=%d: P(some >= K) = %s, brute force %s", k, got, want)
				}
				if k > 1 {
					continue // the distribution does not depend on K
				}
				for j, cnt := range maxIs {
					if got, want := exactOf(t, d.MaxLoad[j]), rat(cnt, total); got.Cmp(want) != 0 {
						t.Errorf("P(max = %d) = %s, brute force %s", j, got, want)
					}
				}
				if got := exactOf(t, d.MeanMax); got.Cmp(mean) != 0 {
					t.Errorf("E[max] = %s, brute force %s", got, mean)
				}
			}
		})
	}
}

// binomialTail is P(Bin(m, 1/n) >= k) from the binomial formula with
// rationals: a closed form independent of the counting code.
func binomialTail(m, n, k int) *big.Rat {
	p := big.NewRat(1, int64(n))
	q := big.NewRat(int64(n-1), int64(n))
	sum := new(big.Rat)
	for j := k; j <= m; j++ {
		term := new(big.Rat).SetInt(new(big.Int).Binomial(int64(m), int64(j)))
		for range j {
			term.Mul(term, p)
		}
		for range m - j {
			term.Mul(term, q)
		}
		sum.Add(sum, term)
	}
	return sum
}

// TestGivenIsBinomialTail checks P(a given worker gets >= K) against the
// binomial tail, including the worked example of 16 tasks on 8 workers.
func TestGivenIsBinomialTail(t *testing.T) {
	for _, c := range []struct{ m, n, k int }{{16, 8, 4}, {16, 8, 1}, {16, 8, 16}, {100, 10, 20}, {40, 3, 15}} {
		t.Run(strconv.Itoa(c.m)+"_"+strconv.Itoa(c.n)+"_"+strconv.Itoa(c.k), func(t *testing.T) {
			d, err := exactRandom(context.Background(), BallsSpec{Tasks: c.m, Workers: c.n, AtLeast: c.k})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := exactOf(t, d.Given), binomialTail(c.m, c.n, c.k); got.Cmp(want) != 0 {
				t.Errorf("P(given >= %d) = %s, binomial tail %s", c.k, got, want)
			}
		})
	}
}

// allAtMostByWorkers counts the assignments with every load <= k by adding
// one worker at a time: a dynamic program independent of allAtMost's
// recurrence and shortcut.
func allAtMostByWorkers(m, n, k int) *big.Int {
	ways := make([]*big.Int, m+1) // ways[i]: i labelled tasks on the workers so far
	for i := range ways {
		ways[i] = new(big.Int)
	}
	ways[0].SetInt64(1)
	for range n {
		next := make([]*big.Int, m+1)
		for i := range next {
			next[i] = new(big.Int)
			for j := 0; j <= min(i, k); j++ { // j of the i tasks on the new worker
				t := new(big.Int).Binomial(int64(i), int64(j))
				next[i].Add(next[i], t.Mul(t, ways[i-j]))
			}
		}
		ways = next
	}
	return ways[m]
}

// TestAllAtMostAgainstWorkerByWorker covers sizes too large to enumerate.
func TestAllAtMostAgainstWorkerByWorker(t *testing.T) {
	for _, c := range []struct{ m, n int }{{16, 8}, {30, 5}, {25, 12}, {41, 7}} {
		t.Run(strconv.Itoa(c.m)+"_"+strconv.Itoa(c.n), func(t *testing.T) {
			bc := binomials(c.m)
			for k := 0; k <= c.m; k++ {
				if got, want := allAtMost(bc, c.m, c.n, k), allAtMostByWorkers(c.m, c.n, k); got.Cmp(want) != 0 {
					t.Errorf("k=%d: %s, worker by worker %s", k, got, want)
				}
			}
		})
	}
}

// TestWorkedExample is background.md's example: 16 tasks at once on 8
// single-task workers, K = 4 (the default: twice the fair share).
func TestWorkedExample(t *testing.T) {
	r, err := Balls(context.Background(), BallsSpec{Tasks: 16, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec.AtLeast != 4 {
		t.Fatalf("default K = %d, want 4", r.Spec.AtLeast)
	}
	random, least, p2c := r.Dispatch[0], r.Dispatch[1], r.Dispatch[2]
	if got, want := exactOf(t, random.Given), binomialTail(16, 8, 4); got.Cmp(want) != 0 {
		t.Errorf("P(given >= 4) = %s, want %s", got, want)
	}
	// Some worker >= 4 is far likelier than one given worker, and less
	// likely than 8 times that (the union bound): the joint distribution,
	// not a product of marginals.
	g, s := random.Given.Value, random.Some.Value
	indep := 1 - math.Pow(1-g, 8)
	t.Logf("P(given>=4)=%.6f P(some>=4)=%.6f (independent workers would give %.6f)", g, s, indep)
	if !(s > g && s < 8*g && math.Abs(s-indep) > 1e-3) {
		t.Errorf("P(some >= 4) = %g with P(given >= 4) = %g", s, g)
	}
	var sum float64
	for _, p := range random.MaxLoad {
		sum += p.Value
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("max-load distribution sums to %g", sum)
	}
	if least.Some.Value != 0 || least.MeanMax.Value != 2 || least.MaxLoad[2].Value != 1 {
		t.Errorf("least-loaded: P(some >= 4) %g, mean max %g, P(max = 2) %g; want 0, 2, 1", least.Some.Value, least.MeanMax.Value, least.MaxLoad[2].Value)
	}
	if !p2c.Simulated || p2c.Trials != DefaultTrials {
		t.Errorf("p2c: simulated %v with %d trials", p2c.Simulated, p2c.Trials)
	}
	// Two choices sit between random and least-loaded.
	if !(p2c.Some.High < random.Some.Value && p2c.MeanMax.Low > least.MeanMax.Value && p2c.MeanMax.High < random.MeanMax.Value) {
		t.Errorf("p2c P(some >= 4) %+v, mean max %+v: not between least-loaded and random", p2c.Some, p2c.MeanMax)
	}
}

// TestLeastLoadedIsLeastConn checks the least-loaded figures against the
// balancer's least_conn policy placing the tasks one by one.
func TestLeastLoadedIsLeastConn(t *testing.T) {
	for _, c := range []struct{ m, n, k int }{{16, 8, 2}, {16, 8, 3}, {17, 8, 3}, {5, 3, 2}, {3, 5, 1}, {3, 5, 2}} {
		t.Run(strconv.Itoa(c.m)+"_"+strconv.Itoa(c.n)+"_"+strconv.Itoa(c.k), func(t *testing.T) {
			pol, err := balance.NewPolicy("least_conn", nil)
			if err != nil {
				t.Fatal(err)
			}
			addrs := make([]string, c.n)
			for i := range addrs {
				addrs[i] = "w" + strconv.Itoa(i)
			}
			pool := balance.NewBackends("t", addrs)
			for range c.m {
				pol.Pick(pool, nil).Acquire()
			}
			over, top := 0, 0
			for _, b := range pool {
				if int(b.Active()) >= c.k {
					over++
				}
				top = max(top, int(b.Active()))
			}
			d := leastLoaded(BallsSpec{Tasks: c.m, Workers: c.n, AtLeast: c.k})
			if got, want := exactOf(t, d.Given), rat(int64(over), int64(c.n)); got.Cmp(want) != 0 {
				t.Errorf("P(given >= %d) = %s; least_conn put %d of %d workers there", c.k, got, over, c.n)
			}
			if got := d.Some.Value; (got == 1) != (over > 0) {
				t.Errorf("P(some >= %d) = %g; least_conn put %d workers there", c.k, got, over)
			}
			if d.MeanMax.Value != float64(top) {
				t.Errorf("mean max %g, least_conn's max %d", d.MeanMax.Value, top)
			}
		})
	}
}

// p2cExact enumerates every sequence of m ordered pairs of distinct
// workers (each equally likely) and places each task on the less loaded of
// its pair, the first on a tie, as the balancer's p2c policy does.
func p2cExact(m, n, k int) (given, some *big.Rat, maxIs []*big.Rat) {
	var pairs [][2]int
	for i := range n {
		for j := range n {
			if i != j {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	var total, nGiven, nSome int64
	maxCount := make([]int64, m+1)
	loads := make([]int, n)
	var walk func(task int)
	walk = func(task int) {
		if task == m {
			total++
			top, over := 0, 0
			for _, l := range loads {
				top = max(top, l)
				if l >= k {
					over++
				}
			}
			maxCount[top]++
			nGiven += int64(over) // summed over workers; divided by n below
			if over > 0 {
				nSome++
			}
			return
		}
		for _, p := range pairs {
			w := p[0]
			if loads[p[1]] < loads[p[0]] {
				w = p[1]
			}
			loads[w]++
			walk(task + 1)
			loads[w]--
		}
	}
	walk(0)
	for _, c := range maxCount {
		maxIs = append(maxIs, rat(c, total))
	}
	return rat(nGiven, total*int64(n)), rat(nSome, total), maxIs
}

// TestP2CCoversExact checks that the simulated power-of-two-choices
// figures are close to the exact ones of a case small enough to enumerate:
// each within two half-widths of its 95% interval (about 4 standard
// errors).
func TestP2CCoversExact(t *testing.T) {
	const m, n, k = 6, 4, 3
	d, err := simulateP2C(context.Background(), BallsSpec{Tasks: m, Workers: n, AtLeast: k, Trials: 200000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	given, some, maxIs := p2cExact(m, n, k)
	check := func(what string, p Prob, exact *big.Rat) {
		t.Helper()
		x, _ := exact.Float64()
		half := (p.High - p.Low) / 2
		t.Logf("%s: simulated %.5f [%.5f, %.5f], exact %s = %.5f", what, p.Value, p.Low, p.High, exact.RatString(), x)
		if math.Abs(p.Value-x) > 2*half+1e-12 {
			t.Errorf("%s: simulated %.5f [%.5f, %.5f], exact %.5f", what, p.Value, p.Low, p.High, x)
		}
	}
	check("P(given >= 3)", d.Given, given)
	check("P(some >= 3)", d.Some, some)
	for j, e := range maxIs {
		check("P(max = "+strconv.Itoa(j)+")", d.MaxLoad[j], e)
	}
}

func TestBallsSpecValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		spec BallsSpec
		want string
	}{
		{"no tasks", BallsSpec{Workers: 3}, "model: tasks: must be between 1 and 400, got 0"},
		{"too many tasks", BallsSpec{Tasks: 401, Workers: 3}, "model: tasks: must be between 1 and 400, got 401"},
		{"no workers", BallsSpec{Tasks: 3}, "model: workers: must be between 1 and 100000, got 0"},
		{"negative K", BallsSpec{Tasks: 3, Workers: 2, AtLeast: -1}, "model: at_least: must be >= 1, got -1"},
		{"negative trials", BallsSpec{Tasks: 3, Workers: 2, Trials: -5}, "model: trials: must be >= 1, got -5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Balls(context.Background(), c.spec)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestBallsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Balls(ctx, BallsSpec{Tasks: 50, Workers: 5}); err != context.Canceled {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestWriteBallsTextGolden pins the table of the worked example.
func TestWriteBallsTextGolden(t *testing.T) {
	r, err := Balls(context.Background(), BallsSpec{Tasks: 16, Workers: 8, Trials: 20000})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteBallsText(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "balls_16_8.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("text differs from %s (go test -update refreshes it):\n%s", golden, buf.String())
	}
}

// FuzzRandomExact checks the exact figures of random dispatch against
// enumeration for any small case.
func FuzzRandomExact(f *testing.F) {
	f.Add(uint8(5), uint8(3), uint8(2))
	f.Add(uint8(7), uint8(2), uint8(5))
	f.Add(uint8(1), uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, m8, n8, k8 uint8) {
		m, n, k := int(m8%8)+1, int(n8%5)+1, int(k8%9)+1 // at most 5^8 assignments
		given, some, maxIs, total := bruteForce(m, n)
		d, err := exactRandom(context.Background(), BallsSpec{Tasks: m, Workers: n, AtLeast: k})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := exactOf(t, d.Given), rat(given[min(k, m+1)], total); got.Cmp(want) != 0 {
			t.Errorf("m=%d n=%d K=%d: P(given) = %s, brute force %s", m, n, k, got, want)
		}
		if got, want := exactOf(t, d.Some), rat(some[min(k, m+1)], total); got.Cmp(want) != 0 {
			t.Errorf("m=%d n=%d K=%d: P(some) = %s, brute force %s", m, n, k, got, want)
		}
		for j, cnt := range maxIs {
			if got, want := exactOf(t, d.MaxLoad[j]), rat(cnt, total); got.Cmp(want) != 0 {
				t.Errorf("m=%d n=%d: P(max = %d) = %s, brute force %s", m, n, j, got, want)
			}
		}
	})
}
