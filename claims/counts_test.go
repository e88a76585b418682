package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// slowRun is a run of variant v in round rep with n requests, slow of them
// taking 25 ms and the rest 1 ms: slow(v, 20ms) is slow.
func slowRun(v string, rep int, n, slow uint64) results.Run {
	h := results.NewHistogram()
	_ = h.RecordValues(25000, int64(slow))
	_ = h.RecordValues(1000, int64(n-slow))
	run := results.Run{ID: fmt.Sprintf("%s-%d", v, rep), Variant: v, Rep: rep, Valid: true}
	run.Duration, run.Requests, run.Latency = 10*time.Second, n, h
	return run
}

// slowCounts draws one paired comparison of slow-response counts: rounds
// rounds, side a's expected count ratio times side b's mean, both times a
// drift the round shares (log sd 0.3: a slower phase of the machine makes
// more slow responses on both sides), each run's count negative binomial
// with shape k (variance mu + mu²/k: a stall makes several slow responses
// at once; k = 0 is Poisson).
func slowCounts(rng *rand.Rand, rounds int, mean, ratio, k float64) (a, b []uint64) {
	draw := func(mu float64) uint64 {
		if k > 0 {
			mu *= distuv.Gamma{Alpha: k, Beta: k, Src: rng}.Rand()
		}
		return uint64(distuv.Poisson{Lambda: mu, Src: rng}.Rand())
	}
	for range rounds {
		d := math.Exp(0.3 * rng.NormFloat64())
		a, b = append(a, draw(ratio*mean*d)), append(b, draw(mean*d))
	}
	return a, b
}

// countsOutcome judges check on counts a and b by round as judgeStat
// does a slow claim: undecided with fewer than MinEvents events, otherwise
// the per-round differences a − F·b decided by decideDifference.
func countsOutcome(chk scenario.Check, a, b []uint64, alpha float64) Outcome {
	var n uint64
	d := make([]float64, len(a))
	for i := range a {
		n += a[i] + b[i]
		d[i] = float64(a[i]) - chk.Right.Factor*float64(b[i])
	}
	if n < MinEvents {
		return Undecided
	}
	o, _, _, _ := decideDifference(chk, d, 0.5, alpha)
	return o
}

// slowResults is counts a and b as the runs of variants a and b, round by
// round, with claim check.
func slowResults(check string, a, b []uint64) *results.Results {
	r := &results.Results{Scenario: scenario.Scenario{Name: "sim", Claims: []scenario.Claim{{Say: "x", Check: check}}}, Complete: true}
	for i := range a {
		r.Runs = append(r.Runs, slowRun("a", i+1, 4000, a[i]), slowRun("b", i+1, 4000, b[i]))
	}
	return r
}

// TestSlowCountCalibration measures how often a claim on counts of slow
// responses (c1's "slow(close_5, 20ms) > 1.5 * slow(close_1, 20ms)") is
// decided wrongly at its factor, on 2000 seeded simulated comparisons
// (400 with -short) of 10 paired rounds in which side a's rate is exactly
// the factor times side b's (the claim on its boundary, so holding and
// failing are both wrong): factors 0.5, 1, 1.5 and 3; per-run means of
// side b of 1, 3 and 10 slow responses, Poisson and overdispersed
// (negative binomial shapes 2 and 0.5), with drift shared by each round.
// Judged at one-sided levels of 5% and 0.5% (the suite's Holm levels lie
// between and below), "a < F × b" must hold and fail each no more often
// than the level plus two standard errors of the simulation. It logs the
// power at twice the factor. The first comparisons of each case are also
// judged from real runs (histograms, judgeClaim), which must agree.
func TestSlowCountCalibration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(26, 1))
	trials := 2000
	if testing.Short() {
		trials = 400
	}
	const rounds = 10
	for _, f := range []float64{0.5, 1, 1.5, 3} {
		fs := strconv.FormatFloat(f, 'g', -1, 64)
		lessCheck := "slow(a, 20ms) < " + fs + " * slow(b, 20ms)"
		less, err := scenario.ParseCheck(lessCheck)
		if err != nil {
			t.Fatal(err)
		}
		more, err := scenario.ParseCheck("slow(a, 20ms) > " + fs + " * slow(b, 20ms)")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []float64{0, 2, 0.5} {
			for _, mean := range []float64{1, 3, 10} {
				for _, alpha := range []float64{0.05, 0.005} {
					held, failed, pow2 := 0, 0, 0
					for i := range trials {
						a, b := slowCounts(rng, rounds, mean, f, k)
						o := countsOutcome(less, a, b, alpha)
						switch o {
						case Holds:
							held++
						case Fails:
							failed++
						}
						if i < 3 {
							r := slowResults(lessCheck, a, b)
							c := r.Scenario.Claims[0]
							if got := judgeClaim(r, c, less, alpha).Outcome; got != o {
								t.Errorf("counts %v against %v: judged %s from runs, %s from counts", a, b, got, o)
							}
						}
						if a, b := slowCounts(rng, rounds, mean, 2*f, k); countsOutcome(more, a, b, alpha) == Holds {
							pow2++
						}
					}
					limit := alpha + 2*math.Sqrt(alpha*(1-alpha)/float64(trials))
					t.Logf("factor %-3g shape %-3g mean %2g/run, level %5.3g: at the factor held %.4f, failed %.4f (nominal %g each); twice the factor held %.3f",
						f, k, mean, alpha, float64(held)/float64(trials), float64(failed)/float64(trials), alpha, float64(pow2)/float64(trials))
					for what, n := range map[string]int{"held": held, "failed": failed} {
						if rate := float64(n) / float64(trials); rate > limit {
							t.Errorf("factor %g, shape %g, mean %g, level %g: a claim at its factor %s %d of %d times (%.4f), above %.4f",
								f, k, mean, alpha, what, n, trials, rate, limit)
						}
					}
				}
			}
		}
	}
}

// spreadRounds is m rounds whose log ratios have mean mu and sample sd
// sd exactly, symmetric about mu (so the median round is mu), as the
// values by round of two sides (a's ratio to b, b all 1).
func spreadRounds(m int, mu, sd float64) (a, b map[int]float64) {
	e := make([]float64, m)
	for i := range e {
		e[i] = float64(1 - 2*(i%2)) // +1, -1, ...
	}
	if m%2 == 1 {
		e[m-1] = 0
	}
	ss := 0.0
	for _, x := range e {
		ss += x * x
	}
	k := sd / math.Sqrt(ss/float64(m-1))
	a, b = map[int]float64{}, map[int]float64{}
	for i, x := range e {
		a[i+1], b[i+1] = math.Exp(mu+k*x), 1
	}
	return a, b
}

// TestRoundsForPower: the rounds an undecided ratio claim is forecast to
// need are a forecast with its power: rounds of exactly the same mean and
// spread decide the claim at that count, and seeded normal rounds of that
// mean and spread decide it in about 80% of trials (at least 70%, at most
// 95%: the forecast plugs in a normal mean and a known spread).
func TestRoundsForPower(t *testing.T) {
	chk, err := scenario.ParseCheck("p99(a) < 0.8 * p99(b)")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n       int
		mu, sd  float64
		alpha   float64
		holding bool
	}{
		{4, math.Log(0.7), 0.15, 0.005, true},
		{6, math.Log(0.75), 0.3, 0.002, true},
		{5, math.Log(0.9), 0.2, 0.01, false},
	} {
		a, b := spreadRounds(tc.n, tc.mu, tc.sd)
		o, ratio, ci, _, _ := decideRatio(chk, a, b, tc.alpha)
		if o != Undecided {
			t.Fatalf("%+v: %s after %d rounds, want undecided to start with", tc, o, tc.n)
		}
		m := roundsForPower(ratio, ci, tc.n, tc.alpha, 0.8)
		if m <= tc.n {
			t.Fatalf("%+v: %d rounds for power", tc, m)
		}
		want := Fails
		if tc.holding {
			want = Holds
		}
		a, b = spreadRounds(m, tc.mu, tc.sd)
		if o, _, _, _, _ := decideRatio(chk, a, b, tc.alpha); o != want {
			t.Errorf("%+v: %d rounds of the same spread: %s, want %s", tc, m, o, want)
		}
		rng := rand.New(rand.NewPCG(uint64(m), 3))
		const trials = 400
		decided := 0
		for range trials {
			a, b := map[int]float64{}, map[int]float64{}
			for r := 1; r <= m; r++ {
				a[r], b[r] = math.Exp(tc.mu+tc.sd*rng.NormFloat64()), 1
			}
			if o, _, _, _, _ := decideRatio(chk, a, b, tc.alpha); o == want {
				decided++
			}
		}
		power := float64(decided) / trials
		if power < 0.7 || power > 0.95 {
			t.Errorf("%+v: %d rounds decide %.3f of seeded trials, want about 0.8", tc, m, power)
		}
		t.Logf("%+v: %d rounds, power %.3f", tc, m, power)
	}
}

// TestForecastEveryKind: an undecided equivalence, bound or model claim
// is given a forecast too, and rounds (or runs) of exactly the same mean
// and spread, as many as forecast, decide it the way the mean lies.
func TestForecastEveryKind(t *testing.T) {
	const alpha = 0.01
	logs := func(a map[int]float64) []float64 {
		var x []float64
		for r := 1; r <= len(a); r++ {
			x = append(x, math.Log(a[r]))
		}
		return x
	}
	// Equivalence: the log ratio 0.02 from 1, within 10%.
	eq, err := scenario.ParseCheck("p99(a) ~ p99(b) within 10%")
	if err != nil {
		t.Fatal(err)
	}
	a, b := spreadRounds(4, 0.02, 0.08)
	ratio, ci, median, rounds := compare.RoundRatio(a, b, alpha)
	if o := decideEquivalence(eq, ratio, ci, median, len(rounds)); o != Undecided {
		t.Fatalf("equivalence: %s after 4 rounds, want undecided to start with", o)
	}
	m := forecastRounds(marginGap(math.Log(ratio), math.Log1p(eq.Within)), spreadOf(math.Log(ci.Low), math.Log(ci.High), 4, alpha), 4, alpha)
	if m <= 4 {
		t.Fatalf("equivalence: forecast %d", m)
	}
	a, b = spreadRounds(m, 0.02, 0.08)
	ratio, ci, median, rounds = compare.RoundRatio(a, b, alpha)
	if o := decideEquivalence(eq, ratio, ci, median, len(rounds)); o != Holds {
		t.Errorf("equivalence: %s after the %d rounds forecast, want holds", o, m)
	}

	// Model agreement: runs 0.005 from the model, within 0.03.
	a, _ = spreadRounds(5, 0.005, 0.03)
	o, mean, mci := decideModel(logs(a), 0.03, 1e-4, alpha)
	if o != Undecided {
		t.Fatalf("model: %s after 5 runs, want undecided to start with", o)
	}
	m = forecastRounds(marginGap(mean, 0.03), spreadOf(mci.Low, mci.High, 5, alpha), 5, alpha)
	if m <= 5 {
		t.Fatalf("model: forecast %d", m)
	}
	a, _ = spreadRounds(m, 0.005, 0.03)
	if o, _, _ := decideModel(logs(a), 0.03, 1e-4, alpha); o != Holds {
		t.Errorf("model: %s after the %d runs forecast, want holds", o, m)
	}

	// A bound, on the runs' differences from it: 0.03 below, sd 0.1.
	bound, err := scenario.ParseCheck("p99(a) < 60ms")
	if err != nil {
		t.Fatal(err)
	}
	a, _ = spreadRounds(4, -0.03, 0.1)
	o, mean, mci, _ = decideDifference(bound, logs(a), 1e-4, alpha)
	if o != Undecided {
		t.Fatalf("bound: %s after 4 runs, want undecided to start with", o)
	}
	m = forecastRounds(math.Abs(mean), spreadOf(mci.Low, mci.High, 4, alpha), 4, alpha)
	if m <= 4 {
		t.Fatalf("bound: forecast %d", m)
	}
	a, _ = spreadRounds(m, -0.03, 0.1)
	if o, _, _, _ := decideDifference(bound, logs(a), 1e-4, alpha); o != Holds {
		t.Errorf("bound: %s after the %d runs forecast, want holds", o, m)
	}
	if s := forecastText(m, "runs"); !strings.Contains(s, fmt.Sprintf("about %d runs for 80%% power", m)) {
		t.Errorf("forecastText: %q", s)
	}
	if forecastText(0, "runs") != "" || !strings.Contains(forecastText(-1, "runs"), "more than 1000 runs") {
		t.Error("forecastText of no forecast or of too many")
	}
	// A mean exactly on the boundary (c1's equal counts of slow
	// responses, 0.00 over 7 rounds) says so rather than nothing.
	if got := forecastRounds(0, 0.3, 7, alpha); got != onBoundary || !strings.Contains(forecastText(got, "paired rounds"), "exactly on the claim's boundary") {
		t.Errorf("a mean on the boundary: %d %q", got, forecastText(got, "paired rounds"))
	}
}
