package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

func judgeOne(t *testing.T, r *results.Results) Result {
	t.Helper()
	cs := Judge(r)
	if len(cs) != 1 {
		t.Fatalf("%d claim results, want 1", len(cs))
	}
	return cs[0]
}

func TestJudgeRatioClaims(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		check string
		runs  int
		want  Outcome
	}{
		{"p99(fast) < 0.2 * p99(slow)", 5, Holds},     // the ratio is about 0.1
		{"p99(fast) < 0.05 * p99(slow)", 5, Fails},    // 0.1 is not below 0.05
		{"p99(fast) > 0.05 * p99(slow)", 5, Holds},    // the benefit is smaller than that
		{"p99(fast) < 0.2 * p99(slow)", 2, Undecided}, // 2 rounds: fewer than compare.MinRounds
		{"p99(fast) < 0.2 * p99(slow)", 3, Holds},     // 3 paired rounds of tiny spread decide
		{"p99(fast) < 0.1 * p99(slow)", 5, Undecided}, // the interval straddles 0.1
		// fast has no response over 150 ms in any run, slow 850 in each:
		// a run with none is a count of zero, not a missing value.
		{"slow(fast, 150ms) < 0.1 * slow(slow, 150ms)", 5, Holds},
		{"slow(slow, 150ms) < 0.5 * slow(fast, 150ms)", 5, Fails},
		{"slow_share(fast, 150ms) < 0.1 * slow_share(slow, 150ms)", 5, Holds},
		// No response over 2 s on either side: nothing to compare, not a
		// ratio of exactly 1 (which would fail "<" with no spread).
		{"slow(fast, 2s) < 1.0 * slow(slow, 2s)", 5, Undecided},
		{"slow_share(fast, 2s) > 1.0 * slow_share(slow, 2s)", 5, Undecided},
	} {
		r := resultstest.ClaimResults(tc.runs, scenario.Claim{Say: "x", Check: tc.check})
		got := judgeOne(t, r)
		if got.Outcome != tc.want {
			t.Errorf("%s with %d runs: %s (%s), want %s", tc.check, tc.runs, got.Outcome, got.Evidence, tc.want)
		}
		if strings.Contains(tc.check, "2s") {
			if !strings.Contains(got.Evidence, "0 events in all, fewer than the 10") {
				t.Errorf("%s: evidence %s, want it to say there are too few events", tc.check, got.Evidence)
			}
			continue
		}
		if !strings.Contains(got.Evidence, "% CI [") {
			t.Errorf("%s: evidence without its interval: %s", tc.check, got.Evidence)
		}
	}
}

func TestJudgeBoundAndExactClaims(t *testing.T) {
	for _, tc := range []struct {
		check string
		want  Outcome
	}{
		{"skew(fast) <= 1.1", Holds},
		{"skew(slow) <= 1.1", Fails},
		{"p50(fast) < 60ms", Holds},
		{"p50(slow) < 60ms", Fails},
		{"decisions(fast) == requests(fast)", Holds},
		{"client_conns(fast) == 6", Holds},
		{"upstream_conns(fast) == 3", Fails},
		{"workers(fast) == [500, 500]", Holds},
		{"workers(slow) == [500, 500]", Fails},
		{"worker(slow, 0) == 9 * worker(slow, 1)", Holds},
		{"worker(fast, 0) < 0.5 * worker(slow, 0)", Fails}, // 500 < 450 is false
		{"decisions(slow) == requests(slow)", Undecided},   // no proxy counters
	} {
		got := judgeOne(t, resultstest.ClaimResults(4, scenario.Claim{Say: "x", Check: tc.check}))
		if got.Outcome != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.check, got.Outcome, got.Evidence, tc.want)
		}
		if got.Evidence == "" {
			t.Errorf("%s: no evidence", tc.check)
		}
	}
	// A deterministic workload (closed loop, bursts) repeats itself: its
	// bounds are judged on every run, and say so.
	for check, want := range map[string]Outcome{"skew(slow) <= 1.1": Fails, "skew(fast) <= 1.1": Holds} {
		r := resultstest.ClaimResults(2, scenario.Claim{Say: "x", Check: check})
		r.Scenario.Workload.Closed = &workloads.Closed{}
		if got := judgeOne(t, r); got.Outcome != want || !strings.Contains(got.Evidence, "deterministic workload: judged on every run") {
			t.Errorf("%s, deterministic, 2 runs: %s (%s), want %s", check, got.Outcome, got.Evidence, want)
		}
	}
	// A bound on a figure that varies from run to run is a statistical
	// claim: two runs decide nothing, however clear they look.
	for _, check := range []string{"skew(slow) <= 1.1", "p50(fast) < 60ms"} {
		if got := judgeOne(t, resultstest.ClaimResults(2, scenario.Claim{Say: "x", Check: check})); got.Outcome != Undecided || !strings.Contains(got.Evidence, "at least 3") {
			t.Errorf("%s over 2 runs: %s (%s), want undecided", check, got.Outcome, got.Evidence)
		}
	}
}

// familyResults is a simulated suite: rounds rounds of claims ratio
// claims "throughput(aK) < factor * throughput(bK)", whose true ratio is
// truth[K]. Each round's values share a drift (log sd 0.2: the machine's
// speed from round to round, which pairing cancels) and get noise of
// their own (log sd 0.05).
func familyResults(rng *rand.Rand, rounds int, factor float64, truth []float64) *results.Results {
	return familyResultsWith(rng, rounds, factor, truth, func(rng *rand.Rand) float64 { return 0.05 * rng.NormFloat64() })
}

// familyResultsWith is familyResults with the noise of each value's own
// (its log) drawn by noise.
func familyResultsWith(rng *rand.Rand, rounds int, factor float64, truth []float64, noise func(*rand.Rand) float64) *results.Results {
	r := &results.Results{Scenario: scenario.Scenario{Name: "sim"}, Complete: true}
	for k := range truth {
		r.Scenario.Claims = append(r.Scenario.Claims, scenario.Claim{Say: "x",
			Check: fmt.Sprintf("throughput(a%d) < %g * throughput(b%d)", k, factor, k)})
	}
	for rep := 1; rep <= rounds; rep++ {
		drift := 0.2 * rng.NormFloat64()
		for k, t := range truth {
			for _, v := range []struct {
				name  string
				scale float64
			}{{fmt.Sprintf("a%d", k), t}, {fmt.Sprintf("b%d", k), 1}} {
				x := v.scale * math.Exp(drift+noise(rng))
				run := results.Run{ID: v.name, Variant: v.name, Rep: rep, Valid: true}
				run.Duration, run.Requests = time.Second, uint64(1e6*x)
				r.Runs = append(r.Runs, run)
			}
		}
	}
	return r
}

// TestFamilyFalseAlarms measures the false-alarm rate of a family of
// claims judged together (Family, Holm at DefaultAlpha): in 1000 seeded
// simulated suites (300 with -short) of 6 paired rounds, 12 claims whose truth is exactly
// their claimed factor (the hardest correct claims: any "fails" is a false
// alarm) beside 8 that hold by a wide margin. The share of suites in which
// any of the 12 fails must not exceed DefaultAlpha (with the binomial
// slack of 1000 trials); the margin claims show Holm's gain over judging
// every claim at alpha/20.
func TestFamilyFalseAlarms(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(25, 26))
	const rounds = 10
	trials := 1000
	if testing.Short() {
		trials = 300
	}
	truth := make([]float64, 20)
	for k := range truth {
		truth[k] = 1 // at the factor: the claim is just true
		if k >= 12 {
			truth[k] = 0.85 // holds: 15% below the factor
		}
	}
	alarms, holm, bonf := 0, 0, 0
	for range trials {
		r := familyResults(rng, rounds, 1, truth)
		judged := Family([]*results.Results{r}, Options{})[0]
		any := false
		for k, cr := range judged {
			if k < 12 && cr.Outcome == Fails {
				any = true
			}
			if k >= 12 && cr.Outcome == Holds {
				holm++
			}
		}
		if any {
			alarms++
		}
		for k := 12; k < 20; k++ {
			c := r.Scenario.Claims[k]
			chk, _ := scenario.ParseCheck(c.Check)
			if judgeClaim(r, c, chk, DefaultAlpha/20).Outcome == Holds {
				bonf++
			}
		}
	}
	rate := float64(alarms) / float64(trials)
	slack := 3 * math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/float64(trials))
	t.Logf("suites with a false alarm: %d of %d (%.1f%%, nominal %.0f%%); margin claims decided: Holm %.1f%%, Bonferroni %.1f%%",
		alarms, trials, 100*rate, 100*DefaultAlpha, 100*float64(holm)/float64(8*trials), 100*float64(bonf)/float64(8*trials))
	if rate > DefaultAlpha+slack {
		t.Errorf("family-wise false-alarm rate %.3f, above %.2f (+%.3f slack)", rate, DefaultAlpha, slack)
	}
	if holm < bonf {
		t.Errorf("Holm decided %d margin claims, Bonferroni %d: Holm's levels are never below Bonferroni's", holm, bonf)
	}
	if holm < 8*trials/2 {
		t.Errorf("Holm decided %d of %d margin claims (15%% past the factor, 6 rounds of 5%% noise): too weak", holm, 8*trials)
	}
}

// TestSignWhenInfinite: a skew that is infinite in some rounds (an idle
// worker) has no mean log ratio; the rounds are judged by sign.
func TestSignWhenInfinite(t *testing.T) {
	mk := func(rounds int, a, b func(i int) float64) *results.Results {
		r := &results.Results{Scenario: scenario.Scenario{Name: "s", Claims: []scenario.Claim{{Say: "x", Check: "cpu_skew(a) > 1.0 * cpu_skew(b)"}}}, Complete: true}
		for i := range rounds {
			for _, v := range []struct {
				name string
				s    float64
			}{{"a", a(i)}, {"b", b(i)}} {
				run := results.Run{ID: v.name, Variant: v.name, Rep: i + 1, Valid: true}
				run.Duration, run.Requests = time.Second, 100
				lo := time.Duration(0) // an idle worker: no measurable CPU
				if !math.IsInf(v.s, 0) {
					lo = time.Duration(float64(time.Second) / v.s)
				}
				run.CPU = []results.ProcessCPU{{Role: results.RoleWorkers, Worker: 0, Time: time.Second}, {Role: results.RoleWorkers, Worker: 1, Time: lo}}
				r.Runs = append(r.Runs, run)
			}
		}
		return r
	}
	idleEveryOther := func(i int) float64 {
		if i%2 == 0 {
			return math.Inf(1)
		}
		return 20
	}
	for _, tc := range []struct {
		rounds int
		a, b   func(int) float64
		want   Outcome
	}{
		{4, func(int) float64 { return 2 }, idleEveryOther, Undecided}, // 4 of 4 on the other side: p 1/16
		{10, func(int) float64 { return 2 }, idleEveryOther, Fails},    // 10 of 10: p 1/1024
		{10, idleEveryOther, func(int) float64 { return 2 }, Holds},
	} {
		got := judgeOne(t, mk(tc.rounds, tc.a, tc.b))
		if got.Outcome != tc.want || !strings.Contains(got.Evidence, "judged by sign") {
			t.Errorf("%d rounds: %s (%s), want %s by sign", tc.rounds, got.Outcome, got.Evidence, tc.want)
		}
	}
}

// TestJudgeAtTheLook: results made until decided are judged at the share
// of the family's level the run's last look had (look 2 of 4: 1% of 5%),
// not at the full level again, and say so; other results at the full
// level. UndecidedAt judges as Judge will once the run stops there.
func TestJudgeAtTheLook(t *testing.T) {
	r := resultstest.ClaimResults(4, scenario.Claim{Say: "x", Check: "p99(fast) < 0.2 * p99(slow)"})
	if got := Judge(r)[0]; !strings.HasSuffix(got.Evidence, "(Holm: rank 1 of the 1 claims sharing a 5% false-alarm rate, judged at 5%)") {
		t.Errorf("fixed rounds: %s", got.Evidence)
	}
	r.Stop = &results.Stop{Rounds: 4, MaxRounds: 6, Reason: "decided", Decided: true}
	want := "(Holm: rank 1 of the 1 claims sharing a 5% false-alarm rate over every look, judged at 1%: the share of the run's last look, look 2 of at most 4, of 5%)"
	if got := Judge(r)[0]; !strings.HasSuffix(got.Evidence, want) || !strings.Contains(got.Evidence, "98% CI") {
		t.Errorf("until decided, look 2 of 4: %s", got.Evidence)
	}
	// The claim holds by a wide margin at every look: nothing undecided.
	if u := UndecidedAt(r, 4, 6, 0, Options{}); u != nil {
		t.Errorf("UndecidedAt: %q", u)
	}
}

// TestStatistical: the claims that more rounds can decide are the
// statistical ones (ratios, equivalences, bounds on a figure that varies
// from run to run) of an open-loop workload; exact counts are not, nor is
// any claim of a deterministic workload but a model claim
// (TestModelClaimDecides) and a closed loop's ratio of throughput or CPU;
// UndecidedAt names only those, in the scenario's order, and only the
// undecided ones.
func TestStatistical(t *testing.T) {
	cs := []scenario.Claim{
		{Say: "ratio", Check: "p99(fast) < 0.2 * p99(slow)"},            // holds by far
		{Say: "exact", Check: "requests(fast) == 1000"},                 // exact
		{Say: "close", Check: "p99(fast) < 0.1 * p99(slow)"},            // at its factor: undecided
		{Say: "bound", Check: "p50(fast) < 1s"},                         // holds by far
		{Say: "equal", Check: "p99(fast) ~ 0.1 * p99(slow) within 50%"}, // holds
		{Say: "broken", Check: "p99(fast) <"},                           // does not parse
	}
	r := resultstest.ClaimResults(4, cs...)
	want := []string{cs[0].Check, cs[2].Check, cs[3].Check, cs[4].Check}
	if got := Statistical(r.Scenario); !slices.Equal(got, want) {
		t.Errorf("Statistical: %q, want %q", got, want)
	}
	if got := UndecidedAt(r, 4, 10, 0, Options{}); !slices.Equal(got, []string{cs[2].Check}) {
		t.Errorf("UndecidedAt: %q, want the claim at its factor", got)
	}
	r.Scenario.Workload.Closed = &workloads.Closed{}
	if got := Statistical(r.Scenario); got != nil {
		t.Errorf("Statistical, closed loop: %q", got)
	}
	if got := UndecidedAt(r, 4, 10, 0, Options{}); got != nil {
		t.Errorf("UndecidedAt, closed loop: %q", got)
	}
	// A closed loop's ratios of throughput and CPU vary from run to run:
	// more rounds decide them. Its latency bound and exact count do not.
	sat := []scenario.Claim{
		{Say: "sustains", Check: "throughput(fast) > 0.9 * throughput(slow)"},
		{Say: "costs", Check: "cpu_per_request(fast, proxy) < 1.1 * cpu_per_request(slow, proxy)"},
		{Say: "bound", Check: "p50(fast) < 1s"},
		{Say: "exact", Check: "requests(fast) == 1000"},
	}
	r = resultstest.ClaimResults(4, sat...)
	r.Scenario.Workload.Closed = &workloads.Closed{}
	if got := Statistical(r.Scenario); !slices.Equal(got, []string{sat[0].Check, sat[1].Check}) {
		t.Errorf("Statistical, closed loop's saturation ratios: %q, want the throughput and CPU ratios", got)
	}
	r.Scenario.Workload.Closed, r.Scenario.Workload.Bursts = nil, &workloads.Bursts{}
	if got := Statistical(r.Scenario); got != nil {
		t.Errorf("Statistical, bursts: %q", got)
	}
}

// TestFamilyOfLooks: in a suite, the claims of results made until
// decided enter Holm's order by their p-value over their look's share,
// and are judged at that share of their Holm level; a suite of one such
// results judges as Judge does.
func TestFamilyOfLooks(t *testing.T) {
	check := "p99(fast) < 0.2 * p99(slow)"
	fixed := resultstest.ClaimResults(4, scenario.Claim{Say: "x", Check: check})
	looked := resultstest.ClaimResults(4, scenario.Claim{Say: "y", Check: check})
	looked.Stop = &results.Stop{Rounds: 4, MaxRounds: 6}
	fam := Family([]*results.Results{fixed, looked}, Options{})
	if got := fam[0][0].Evidence; !strings.Contains(got, "rank 1 of the 2 claims sharing a 5% false-alarm rate, judged at 2.5%") {
		t.Errorf("fixed: %s", got)
	}
	// The same p-value over a share of 1/5 ranks second, at 5% × 1/5.
	if got := fam[1][0].Evidence; !strings.Contains(got, "rank 2 of the 2 claims sharing a 5% false-alarm rate over every look, judged at 1%: the share of the run's last look, look 2 of at most 4, of 5%") {
		t.Errorf("until decided: %s", got)
	}
	if got, want := Family([]*results.Results{looked}, Options{})[0][0], Judge(looked)[0]; got != want {
		t.Errorf("a family of one results: %+v, Judge: %+v", got, want)
	}
}
