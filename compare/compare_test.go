package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/stats"
)

func verdictOf(t *testing.T, vs []Verdict, metric string) Verdict {
	t.Helper()
	for _, v := range vs {
		if v.Metric == metric {
			return v
		}
	}
	t.Fatalf("no verdict for %s in %+v", metric, vs)
	return Verdict{}
}

// Identical distributions: over many seeded trials, fail comes out in no
// more than about alpha of them, even with the tolerance set so small that
// only the test stands between noise and a fail.
func TestCompareIdenticalRarelyFails(t *testing.T) {
	trials := 400
	if testing.Short() {
		trials = 100
	}
	for _, tc := range []struct {
		name, interval string
		tol            float64
	}{
		{"shift, default tolerance", IntervalShift, 0}, {"shift, tolerance 0.1%", IntervalShift, 0.001},
		{"bootstrap, default tolerance", IntervalBootstrap, 0}, {"bootstrap, tolerance 0.1%", IntervalBootstrap, 0.001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 0))
			pool := resultstest.Runs(rng, "a", 500, 1, 0.1)
			o := Options{Metrics: []string{results.MetricP50, results.MetricP99}, Resamples: 500, Interval: tc.interval}
			if tc.tol > 0 {
				o.Tolerances = map[string]float64{results.MetricP50: tc.tol, results.MetricP99: tc.tol}
			}
			failed, passed := 0, 0
			for trial := range trials {
				o.Seed = uint64(trial + 1)
				p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Draw(rng, pool, 5), Cand: resultstest.Draw(rng, pool, 5)}
				vs, err := Compare([]Pair{p}, o)
				if err != nil {
					t.Fatal(err)
				}
				switch Overall(vs) {
				case Fail:
					failed++
				case Pass:
					passed++
				}
			}
			t.Logf("%d of %d trials failed, %d passed", failed, trials, passed)
			if limit := 2 * DefaultAlpha * float64(trials); float64(failed) > limit {
				t.Errorf("%d of %d A/A trials failed; want at most %g", failed, trials, limit)
			}
		})
	}
}

func TestCompareShiftFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 0))
	for trial := range 40 {
		p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Runs(rng, "a", 10, 1, 0.05), Cand: resultstest.Runs(rng, "b", 10, 1.3, 0.05)}
		method := []string{IntervalShift, IntervalBootstrap}[trial%2]
		vs, err := Compare([]Pair{p}, Options{Seed: uint64(trial + 1), Interval: method})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{results.MetricP50, results.MetricP99} {
			v := verdictOf(t, vs, m)
			if v.Outcome != Fail {
				t.Errorf("trial %d (%s): 30%% slower, %s: %s (%s)", trial, method, m, v.Outcome, v.Detail)
			}
			if !(v.CILow > 1.1 && v.CILow <= v.Ratio && v.Ratio <= v.CIHigh && v.P < DefaultAlpha) {
				t.Errorf("trial %d: %s: ratio %g [%g, %g] p %g", trial, m, v.Ratio, v.CILow, v.CIHigh, v.P)
			}
		}
		// Slower service at the same offered load does not change
		// errors: that passes. Throughput, which the open-loop schedule
		// fixes, is not compared unless asked for.
		if v := verdictOf(t, vs, results.MetricErrorRate); v.Outcome != Pass {
			t.Errorf("trial %d: error_rate: %s (%s)", trial, v.Outcome, v.Detail)
		}
		if slices.ContainsFunc(vs, func(v Verdict) bool { return v.Metric == results.MetricThroughput }) {
			t.Errorf("trial %d: throughput compared by default", trial)
		}
		if Overall(vs) != Fail {
			t.Errorf("trial %d: overall %s", trial, Overall(vs))
		}
	}
}

// Two runs starved by other work on the machine (p50 five times the rest)
// among 10 baseline runs do not hide a 30% regression from the rank test
// against the tolerance or from the shift interval that inverts it: 20 of
// the 100 pairwise ratios are off. The bootstrap interval of the median,
// shown when asked for, stretches further over them.
func TestCompareStarvedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 0))
	base := resultstest.Runs(rng, "a", 10, 1, 0.03)
	base[3], base[7] = resultstest.Run("a", 5, 0), resultstest.Run("a", 5, 0)
	cand := resultstest.Runs(rng, "b", 10, 1.3, 0.03)
	pairs := []Pair{{Variant: "b", Baseline: "a", Base: base, Cand: cand}}
	shift, _ := Compare(pairs, Options{Metrics: []string{results.MetricP50}})
	boot, _ := Compare(pairs, Options{Metrics: []string{results.MetricP50}, Interval: IntervalBootstrap})
	t.Logf("shift: %s [%.3f, %.3f]; bootstrap: %s [%.3f, %.3f]", shift[0].Outcome, shift[0].CILow, shift[0].CIHigh, boot[0].Outcome, boot[0].CILow, boot[0].CIHigh)
	if shift[0].Outcome != Fail {
		t.Errorf("shift interval: %s (%s)", shift[0].Outcome, shift[0].Detail)
	}
	// The decision is the rank test's whichever interval is shown; the
	// bootstrap's stretches further over the starved runs.
	if boot[0].Outcome != Fail || !(boot[0].CIHigh-boot[0].CILow > shift[0].CIHigh-shift[0].CILow) {
		t.Errorf("bootstrap interval %g..%g (%s), shift %g..%g: want the same fail and a wider bootstrap interval", boot[0].CILow, boot[0].CIHigh, boot[0].Outcome, shift[0].CILow, shift[0].CIHigh)
	}
}

func TestCompareImprovementPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 0))
	p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Runs(rng, "a", 6, 1, 0.05), Cand: resultstest.Runs(rng, "b", 6, 0.7, 0.05)}
	vs, err := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP50, results.MetricP99}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Outcome != Pass || !strings.Contains(v.Detail, "improvement") {
			t.Errorf("30%% faster, %s: %s (%s)", v.Metric, v.Outcome, v.Detail)
		}
	}
}

// Fewer than MinRuns valid runs on a side is inconclusive, never pass,
// whatever the data say.
func TestCompareTooFewRunsInconclusive(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 0))
	for _, tc := range []struct {
		name         string
		nBase, nCand int
		shift        float64
	}{
		{"2v2 same", 2, 2, 1}, {"2v10 same", 2, 10, 1}, {"10v2 same", 10, 2, 1},
		{"2v2 much faster", 2, 2, 0.5}, {"1v1 same", 1, 1, 1}, {"0v5", 0, 5, 1},
		{"2v2 much slower", 2, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 50 {
				p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Runs(rng, "a", tc.nBase, 1, 0.01), Cand: resultstest.Runs(rng, "b", tc.nCand, tc.shift, 0.01)}
				vs, err := Compare([]Pair{p}, Options{Resamples: 200})
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					if v.Outcome != Inconclusive || !strings.Contains(v.Detail, "too few valid runs") {
						t.Fatalf("trial %d: %s: %s (%s)", trial, v.Metric, v.Outcome, v.Detail)
					}
				}
			}
		})
	}
}

func TestCompareInvalidRunsLeftOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 0))
	base := resultstest.Runs(rng, "a", 5, 1, 0.01)
	cand := resultstest.Runs(rng, "b", 5, 1, 0.01)
	for range 3 {
		bad := resultstest.Run("b", 5, 0) // five times slower, but invalid
		bad.Valid, bad.Invalid = false, []string{"send lag"}
		cand = append(cand, bad)
	}
	vs, err := Compare([]Pair{{Variant: "b", Baseline: "a", Base: base, Cand: cand}}, Options{Metrics: []string{results.MetricP50}})
	if err != nil {
		t.Fatal(err)
	}
	if v := vs[0]; v.Outcome != Pass || !strings.Contains(v.Detail, "5 vs 5 valid runs (0 and 3 left out as invalid)") {
		t.Errorf("%s (%s)", v.Outcome, v.Detail)
	}
	// Only invalid runs on one side: too few.
	for i := range cand {
		cand[i].Valid = false
	}
	vs, _ = Compare([]Pair{{Variant: "b", Baseline: "a", Base: base, Cand: cand}}, Options{Metrics: []string{results.MetricP50}})
	if vs[0].Outcome != Inconclusive {
		t.Errorf("no valid candidate run: %s", vs[0].Outcome)
	}
}

func TestCompareErrorRateAndThroughput(t *testing.T) {
	mk := func(variant string, errs uint64) []results.Run {
		runs := make([]results.Run, 5)
		for i := range runs {
			runs[i] = resultstest.Run(variant, 1, errs+uint64(i%2))
		}
		return runs
	}
	for _, tc := range []struct {
		name               string
		baseErr, candErr   uint64
		errOut, throughOut Outcome
	}{
		{"no errors either side", 0, 0, Pass, Pass},
		// 1000 requests a run: 100 errors is 10 points more error rate and
		// 10% less successful throughput.
		{"errors appear", 0, 100, Fail, Inconclusive},
		{"errors go away", 100, 0, Pass, Pass},
		{"many more errors", 0, 300, Fail, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := Compare([]Pair{{Variant: "b", Baseline: "a", Base: mk("a", tc.baseErr), Cand: mk("b", tc.candErr)}},
				Options{Metrics: []string{results.MetricErrorRate, results.MetricThroughput}})
			if err != nil {
				t.Fatal(err)
			}
			if v := verdictOf(t, vs, results.MetricErrorRate); v.Outcome != tc.errOut || v.Ratio != 0 {
				t.Errorf("error_rate: %s ratio %g (%s)", v.Outcome, v.Ratio, v.Detail)
			}
			if v := verdictOf(t, vs, results.MetricThroughput); v.Outcome != tc.throughOut {
				t.Errorf("throughput: %s (%s)", v.Outcome, v.Detail)
			}
		})
	}
}

func TestCompareHolmAcrossPairs(t *testing.T) {
	// The same data as the only pair and as one of ten: the corrected
	// p-value grows with the family.
	rng := rand.New(rand.NewPCG(16, 0))
	p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Runs(rng, "a", 4, 1, 0.1), Cand: resultstest.Runs(rng, "b", 4, 1.15, 0.1)}
	one, _ := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP50}})
	many := make([]Pair, 10)
	for i := range many {
		many[i] = p
	}
	ten, _ := Compare(many, Options{Metrics: []string{results.MetricP50}})
	if len(ten) != 10 || math.Abs(ten[0].P-min(1, 10*one[0].P)) > 1e-12 {
		t.Errorf("p alone %g, among 10 identical tests %g; want 10 times", one[0].P, ten[0].P)
	}
}

func TestCompareNoiseFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 0))
	base := resultstest.Runs(rng, "a", 8, 1, 0.3) // noisy
	cand := resultstest.Runs(rng, "b", 8, 1, 0.3)
	pairs := []Pair{{Variant: "b", Baseline: "a", Base: base, Cand: cand}}
	o := Options{Metrics: []string{results.MetricP99}, Tolerances: map[string]float64{results.MetricP99: 0.02}}
	cals, err := Calibrate(HalvesOf(pairs), o, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cals) != 1 || cals[0].Variant != "a" || cals[0].RunsA != 4 || cals[0].RunsB != 4 {
		t.Fatalf("calibrations %+v", cals)
	}
	c := cals[0]
	if !(c.NoiseFloor > 0.02) || !(c.Spread > 0.1 && c.Spread < 0.6) {
		t.Fatalf("noise floor %g, spread %g: want a floor above 2%% and a spread near 0.3", c.NoiseFloor, c.Spread)
	}
	o.Calibration = cals
	vs, err := Compare(pairs, o)
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Outcome != Inconclusive || !strings.Contains(vs[0].Detail, "too tight to decide") {
		t.Errorf("tolerance below the noise floor: %s (%s)", vs[0].Outcome, vs[0].Detail)
	}
	// A tolerance above the floor is decided as usual.
	o.Tolerances[results.MetricP99] = c.NoiseFloor + 1
	if vs, _ := Compare(pairs, o); strings.Contains(vs[0].Detail, "too tight") {
		t.Errorf("tolerance above the noise floor: %s", vs[0].Detail)
	}
}

func TestRunsNeeded(t *testing.T) {
	o := Options{Seed: 3}
	quiet := RunsNeeded(results.MetricP99, 0.01, 0.2, 0.8, 1, o)
	mid := RunsNeeded(results.MetricP99, 0.05, 0.2, 0.8, 1, o)
	noisy := RunsNeeded(results.MetricP99, 0.1, 0.2, 0.8, 1, o)
	family := RunsNeeded(results.MetricP99, 0.01, 0.2, 0.8, 15, o)
	t.Logf("runs per side for 20%%: spread 1%%: %d (%d in a family of 15 tests), 5%%: %d, 10%%: %d", quiet, family, mid, noisy)
	// Mann-Whitney's smallest two-sided p-value is 2/C(2n, n): 0.1 for
	// 3 vs 3, 0.029 for 4 vs 4, so 4 runs is the least that can fail at
	// 0.05; at 0.05/15, 6 (0.0022).
	if quiet != 4 || family != 6 {
		t.Errorf("almost no noise needs %d runs (%d in a family of 15), want 4 (6)", quiet, family)
	}
	if !(quiet <= mid && mid < noisy) {
		t.Errorf("runs needed not increasing with noise: %d %d %d", quiet, mid, noisy)
	}
	if RunsNeeded(results.MetricP99, 3, 0.2, 0.8, 1, o) != 0 {
		t.Error("hopeless noise should need more than MaxRunsNeeded (0)")
	}
	if RunsNeeded(results.MetricErrorRate, 0.1, 0.2, 0.8, 1, o) != 0 {
		t.Error("error_rate is absolute: no estimate")
	}
	if testing.Short() {
		return
	}
	// The estimate holds up: with that many runs per side, Compare itself
	// calls a true 20% regression in most trials, and with half as many in
	// fewer.
	rng := rand.New(rand.NewPCG(18, 0))
	rate := func(n int) int {
		fails := 0
		for trial := range 50 {
			p := Pair{Variant: "b", Baseline: "a", Base: resultstest.Runs(rng, "a", n, 1, 0.1), Cand: resultstest.Runs(rng, "b", n, 1.2, 0.1)}
			vs, _ := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP99}, Seed: uint64(trial + 1), Resamples: 500})
			if vs[0].Outcome == Fail {
				fails++
			}
		}
		return fails
	}
	full, half := rate(noisy), rate(noisy/2)
	t.Logf("a 20%% regression with spread 10%%: %d of 50 fail at %d runs per side, %d at %d", full, noisy, half, noisy/2)
	if full < 30 || half >= full {
		t.Errorf("with %d runs per side a 20%% regression failed in %d of 50 trials (want about 40), with %d in %d", noisy, full, noisy/2, half)
	}
}

func TestCompareOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"defaults", Options{}, ""},
		{"unknown metric", Options{Metrics: []string{"p42"}}, "metrics: unknown metric \"p42\""},
		{"twice", Options{Metrics: []string{"p99", "p99"}}, "given twice"},
		{"tolerance metric", Options{Tolerances: map[string]float64{"mean": 0.1}}, "tolerances: unknown metric \"mean\""},
		{"negative tolerance", Options{Tolerances: map[string]float64{"p99": -0.1}}, "tolerances[p99]"},
		{"error rate over 1", Options{Tolerances: map[string]float64{"error_rate": 2}}, "tolerances[error_rate]: must be in (0, 1]"},
		{"alpha", Options{Alpha: 0.7}, "alpha: must be in (0, 0.5]"},
		{"resamples", Options{Resamples: 10}, "resamples: must be >= 100"},
		{"interval", Options{Interval: "bca"}, "interval: want shift or bootstrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.WithDefaults().Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
			if _, err := Compare([]Pair{{}}, tc.o); err == nil {
				t.Error("Compare accepted invalid options")
			}
		})
	}
	if _, err := Compare(nil, Options{}); err == nil {
		t.Error("Compare with no pairs")
	}
}

func withVariants(variants ...scenario.Variant) *results.Results {
	r := &results.Results{}
	r.Scenario.Variants = variants
	for _, v := range variants {
		for range 3 {
			r.Runs = append(r.Runs, resultstest.Run(v.Name, 1, 0))
		}
	}
	return r
}

func TestPairing(t *testing.T) {
	a := withVariants(scenario.Variant{Name: "rp"}, scenario.Variant{Name: "lc"}, scenario.Variant{Name: "old"})
	b := withVariants(scenario.Variant{Name: "lc"}, scenario.Variant{Name: "rp"}, scenario.Variant{Name: "new"})
	pairs, err := PairVariants(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].Variant != "lc" || pairs[0].Baseline != "lc@base" || pairs[1].Variant != "rp" || len(pairs[0].Base) != 3 || len(pairs[0].Cand) != 3 {
		t.Errorf("PairVariants: %+v", pairs)
	}
	if _, err := PairVariants(a, withVariants(scenario.Variant{Name: "x"})); err == nil {
		t.Error("no shared variant, no error")
	}

	pairs, err = PairWith(a, "lc")
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].Variant != "rp" || pairs[1].Variant != "old" || pairs[0].Baseline != "lc" {
		t.Errorf("PairWith: %+v", pairs)
	}
	if _, err := PairWith(a, "nope"); err == nil || !strings.Contains(err.Error(), "no baseline variant \"nope\"") {
		t.Errorf("PairWith unknown: %v", err)
	}
	if _, err := PairWith(withVariants(scenario.Variant{Name: "solo"}), "solo"); err == nil {
		t.Error("PairWith a single variant")
	}

	c := withVariants(scenario.Variant{Name: "rp"}, scenario.Variant{Name: "rp@base", Build: "base"},
		scenario.Variant{Name: "lc@base", Build: "base"}, scenario.Variant{Name: "lc"})
	pairs = PairBuilds(c)
	if len(pairs) != 2 || pairs[0].Variant != "rp" || pairs[0].Baseline != "rp@base" || pairs[1].Variant != "lc" || pairs[1].Baseline != "lc@base" {
		t.Errorf("PairBuilds: %+v", pairs)
	}
	if PairBuilds(a) != nil {
		t.Error("PairBuilds without builds")
	}
}

func TestSplitHalves(t *testing.T) {
	var runs []results.Run
	for i := range 7 {
		r := resultstest.Run("a", 1, 0)
		r.ID = strconv.Itoa(i)
		r.Valid = i != 2
		runs = append(runs, r)
	}
	a, b := SplitHalves(runs)
	ids := func(rs []results.Run) (s string) {
		for _, r := range rs {
			s += r.ID
		}
		return s
	}
	if ids(a) != "035" || ids(b) != "146" {
		t.Errorf("halves %q %q, want the valid runs interleaved: 035 and 146", ids(a), ids(b))
	}
}

func TestOverall(t *testing.T) {
	v := func(o ...Outcome) []Verdict {
		var vs []Verdict
		for _, x := range o {
			vs = append(vs, Verdict{Outcome: x})
		}
		return vs
	}
	for _, tc := range []struct {
		vs   []Verdict
		want Outcome
	}{
		{nil, Inconclusive}, {v(Pass, Pass), Pass}, {v(Pass, Inconclusive), Inconclusive},
		{v(Inconclusive, Fail, Pass), Fail},
	} {
		if got := Overall(tc.vs); got != tc.want {
			t.Errorf("Overall(%v) = %s, want %s", tc.vs, got, tc.want)
		}
	}
}

// TestUnpairedCalibration: unpaired comparisons of a candidate exactly the
// tolerance slower, on p50, p99 and p99.9 together with the error rate
// (the default metrics), falsely fail and falsely pass (any latency
// metric) each in at most alpha plus two standard errors of 1000 seeded
// trials (300 with -short), with normal and with skewed run-to-run noise (10% of runs 4 sd
// slower). Holm corrects the one-sided tests against the tolerance, pass
// included (before: the no-difference p was corrected, the 95% interval
// decided, and 10% of such comparisons falsely failed, 11% falsely
// passed, as issue 42's review measured at 2c414e8).
func TestUnpairedCalibration(t *testing.T) {
	t.Parallel()
	const tol = 0.10
	trials := 1000.0
	if testing.Short() {
		trials = 300
	}
	limit := DefaultAlpha + 2*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/trials)
	for _, skew := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(47, 1))
		draw := func(variant string, shift float64) []results.Run {
			runs := make([]results.Run, 10)
			for i := range runs {
				x := 0.08 * rng.NormFloat64()
				if skew && rng.Float64() < 0.1 {
					x += 0.32
				}
				runs[i] = resultstest.Run(variant, shift*math.Exp(x), 0)
			}
			return runs
		}
		falseFail, falsePass := 0, 0
		for range int(trials) {
			p := Pair{Variant: "b", Baseline: "a", Base: draw("a", 1), Cand: draw("b", 1+tol)}
			vs, err := Compare([]Pair{p}, Options{Tolerances: map[string]float64{results.MetricP50: tol, results.MetricP99: tol, results.MetricP999: tol}})
			if err != nil {
				t.Fatal(err)
			}
			anyFail, anyPass := false, false
			for _, v := range vs {
				if v.Metric == results.MetricErrorRate {
					continue
				}
				anyFail = anyFail || v.Outcome == Fail
				anyPass = anyPass || v.Outcome == Pass
			}
			if anyFail {
				falseFail++
			}
			if anyPass {
				falsePass++
			}
		}
		ff, fp := float64(falseFail)/trials, float64(falsePass)/trials
		t.Logf("skewed %v: any false fail %.4f, any false pass %.4f (limit %.4f)", skew, ff, fp, limit)
		if ff > limit || fp > limit {
			t.Errorf("skewed %v: any false fail %.4f, any false pass %.4f, above %.4f", skew, ff, fp, limit)
		}
	}
}

// TestLookRounds: the looks' schedule and each round's look, with a look
// after every round from MinRounds, and with a few looks spread evenly up
// to the last round; a round off the schedule takes the next look's
// place; the shares of the scheduled looks sum to alpha.
func TestLookRounds(t *testing.T) {
	for _, tc := range []struct {
		max, looks int
		want       []int
	}{
		{12, 0, []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{12, 3, []int{4, 8, 12}},
		{12, 4, []int{3, 6, 9, 12}},
		{10, 3, []int{4, 7, 10}},
		{6, 1, []int{6}},
		{4, 3, []int{3, 4}},
		{12, 10, []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{12, 40, []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	} {
		got := LookRounds(tc.max, tc.looks)
		if !slices.Equal(got, tc.want) {
			t.Errorf("LookRounds(%d, %d) = %v, want %v", tc.max, tc.looks, got, tc.want)
		}
		sum := 0.0
		for i, r := range got {
			look, n := Looks(r, tc.max, tc.looks)
			if look != i+1 || n != len(got) {
				t.Errorf("max %d, looks %d: round %d is look %d of %d, want %d of %d", tc.max, tc.looks, r, look, n, i+1, len(got))
			}
			sum += stats.SpendAlpha(0.05, look, n)
		}
		if math.Abs(sum-0.05) > 1e-12 {
			t.Errorf("max %d, looks %d: the looks' shares sum to %g, want 0.05", tc.max, tc.looks, sum)
		}
	}
	// Looks 4, 8, 12: the budget ending after round 10 looks there as
	// look 3, round 9 would too, and round 2 counts as the first look.
	for round, want := range map[int]int{2: 1, 4: 1, 5: 2, 8: 2, 9: 3, 10: 3, 12: 3} {
		if look, n := Looks(round, 12, 3); look != want || n != 3 {
			t.Errorf("Looks(%d, 12, 3) = %d of %d, want %d of 3", round, look, n, want)
		}
	}
	// One look per round (the default) is what it always was.
	for round := 3; round <= 6; round++ {
		if look, n := Looks(round, 6, 0); look != round-MinRounds+1 || n != 4 {
			t.Errorf("Looks(%d, 6, 0) = %d of %d", round, look, n)
		}
	}
}
