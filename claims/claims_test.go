package claims

import (
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
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
		got := judgeOne(t, resultstest.ClaimResults(2, scenario.Claim{Say: "x", Check: tc.check}))
		if got.Outcome != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.check, got.Outcome, got.Evidence, tc.want)
		}
		if got.Evidence == "" {
			t.Errorf("%s: no evidence", tc.check)
		}
	}
}

func TestJudgeModelClaim(t *testing.T) {
	// Random dispatch agrees with the exact figure (0.7917).
	got := judgeOne(t, resultstest.BurstResults(2000, 7, "pmax(fast, 4) ~ model"))
	if got.Outcome != Holds || got.MaxLoad == nil || got.MaxLoad.Bursts != 2000 {
		t.Fatalf("random dispatch: %s: %s", got.Outcome, got.Evidence)
	}
	if !strings.Contains(got.Evidence, "0.7917") {
		t.Errorf("evidence lacks the model's exact figure: %s", got.Evidence)
	}
	if m := got.MaxLoad.ExactMean; m < 4.19 || m > 4.21 {
		t.Errorf("model mean largest load %.3f, want 4.20", m)
	}
	// Even dispatch (2 each) is far from random: the claim fails.
	r := resultstest.BurstResults(200, 7, "pmax(fast, 4) ~ model")
	for i := range r.Runs[0].Bursts.Loads {
		r.Runs[0].Bursts.Loads[i] = []int{2, 2, 2, 2, 2, 2, 2, 2}
	}
	if got := judgeOne(t, r); got.Outcome != Fails {
		t.Errorf("even dispatch: %s: %s", got.Outcome, got.Evidence)
	}
	r.Scenario.Claims = []scenario.Claim{{Say: "x", Check: "maxload(fast) == 2"}}
	if got := judgeOne(t, r); got.Outcome != Holds {
		t.Errorf("maxload: %s: %s", got.Outcome, got.Evidence)
	}
	// One burst dispatched 3 to a worker: the exact claim fails, unless
	// that burst did not arrive together; then it is left out, and said.
	bs := r.Runs[0].Bursts
	bs.Loads[5] = []int{1, 2, 3, 2, 2, 2, 2, 2}
	if got := judgeOne(t, r); got.Outcome != Fails {
		t.Errorf("maxload with a burst of 3: %s: %s", got.Outcome, got.Evidence)
	}
	bs.Late = make([]int, len(bs.Loads))
	bs.Late[5] = 1
	got = judgeOne(t, r)
	if got.Outcome != Holds || !strings.Contains(got.Evidence, "1 bursts that did not arrive together") {
		t.Errorf("maxload with that burst late: %s: %s", got.Outcome, got.Evidence)
	}
}
