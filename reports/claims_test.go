package reports

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// claimResults has n valid runs of "fast" (latencies 1..1000 × 100µs, a
// little slower each run) and of "slow" (the same × 1ms), workers and
// proxy counters set, and the given claims.
func claimResults(n int, claims ...scenario.Claim) *results.Results {
	r := &results.Results{
		Scenario: scenario.Scenario{
			Name: "claims", Workers: scenario.Workers{Count: 2, Concurrency: 1},
			Workload: workloads.Spec{Arrival: workloads.Arrival{Kind: "poisson", RatePerSec: 100}, Duration: 10 * time.Second},
			Variants: []scenario.Variant{{Name: "fast"}, {Name: "slow"}},
			Repeat:   n, Claims: claims,
		},
		Complete: true,
	}
	for i := range n {
		jitter := time.Duration(i) * time.Microsecond
		f := fakeRun("f", "fast", 100*time.Microsecond+jitter, 1000, []uint64{500, 500}, true)
		f.Proxy = &results.ProxyStats{Decisions: 1000, ClientConns: 6, UpstreamConns: 2}
		s := fakeRun("s", "slow", time.Millisecond+10*jitter, 1000, []uint64{900, 100}, true)
		r.Runs = append(r.Runs, f, s)
	}
	return r
}

func judgeOne(t *testing.T, r *results.Results) ClaimResult {
	t.Helper()
	cs := JudgeClaims(r)
	if len(cs) != 1 {
		t.Fatalf("%d claim results, want 1", len(cs))
	}
	return cs[0]
}

func TestJudgeRatioClaims(t *testing.T) {
	for _, tc := range []struct {
		check string
		runs  int
		want  ClaimOutcome
	}{
		{"p99(fast) < 0.2 * p99(slow)", 5, Holds},     // the ratio is about 0.1
		{"p99(fast) < 0.05 * p99(slow)", 5, Fails},    // 0.1 is not below 0.05
		{"p99(fast) > 0.05 * p99(slow)", 5, Holds},    // the benefit is smaller than that
		{"p99(fast) < 0.2 * p99(slow)", 3, Undecided}, // 3 a side: no 95% interval
		{"p99(fast) < 0.1 * p99(slow)", 5, Undecided}, // the interval straddles 0.1
	} {
		r := claimResults(tc.runs, scenario.Claim{Say: "x", Check: tc.check})
		got := judgeOne(t, r)
		if got.Outcome != tc.want {
			t.Errorf("%s with %d runs: %s (%s), want %s", tc.check, tc.runs, got.Outcome, got.Evidence, tc.want)
		}
		if !strings.Contains(got.Evidence, "95% CI") {
			t.Errorf("%s: evidence without its interval: %s", tc.check, got.Evidence)
		}
	}
}

func TestJudgeBoundAndExactClaims(t *testing.T) {
	for _, tc := range []struct {
		check string
		want  ClaimOutcome
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
		got := judgeOne(t, claimResults(2, scenario.Claim{Say: "x", Check: tc.check}))
		if got.Outcome != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.check, got.Outcome, got.Evidence, tc.want)
		}
		if got.Evidence == "" {
			t.Errorf("%s: no evidence", tc.check)
		}
	}
}

// burstResults records n bursts of 16 tasks over 8 workers, dispatched
// uniformly at random (seeded), as SO_REUSEPORT's hash would.
func burstResults(n int, seed uint64, claim string) *results.Results {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := &results.Bursts{Size: 16, Workers: 8}
	for range n {
		load := make([]int, 8)
		for range 16 {
			load[rng.IntN(8)]++
		}
		b.Loads = append(b.Loads, load)
		b.Unattributed = append(b.Unattributed, 0)
	}
	r := claimResults(1, scenario.Claim{Say: "x", Check: claim})
	r.Scenario.Workload = workloads.Spec{Bursts: &workloads.Bursts{Size: 16, Count: n}}
	r.Runs[0].Bursts = b
	return r
}

func TestJudgeModelClaim(t *testing.T) {
	// Random dispatch agrees with the exact figure (0.7917).
	got := judgeOne(t, burstResults(2000, 7, "pmax(fast, 4) ~ model"))
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
	r := burstResults(200, 7, "pmax(fast, 4) ~ model")
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
}

func TestClaimsInReports(t *testing.T) {
	r := claimResults(2,
		scenario.Claim{Say: "fast is even", Check: "skew(fast) <= 1.1"},
		scenario.Claim{Say: "slow is even", Check: "skew(slow) <= 1.1"})
	var text, md, junit bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnitWithClaims(&junit, "claims", nil, JudgeClaims(r), RunTimes(r.Runs, nil)); err != nil {
		t.Fatal(err)
	}
	html, err := renderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "junit": junit.String(), "html": html} {
		for _, want := range []string{"slow is even", "skew(slow) &lt;= 1.1", "9.00"} {
			w := want
			if name == "text" || name == "markdown" {
				w = strings.ReplaceAll(w, "&lt;", "<")
			}
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q", name, w)
			}
		}
	}
	if !strings.Contains(junit.String(), `<failure message="claim fails: skew(slow) &lt;= 1.1"`) {
		t.Errorf("junit: no failure for the failing claim:\n%s", junit.String())
	}
	if !strings.Contains(html, `class="v-fail">fails<`) || !strings.Contains(html, `class="v-pass">holds<`) {
		t.Errorf("html: outcomes not marked")
	}
}

func renderHTML(r *results.Results) (string, error) {
	var b bytes.Buffer
	err := WriteHTML(&b, r)
	return b.String(), err
}

// TestCombineKeepsClosedLoopApart: a closed-loop result is not shown side
// by side with an open-loop one, and combined results carry no claims.
func TestCombineKeepsClosedLoopApart(t *testing.T) {
	open := claimResults(1, scenario.Claim{Say: "x", Check: "skew(fast) <= 1.1"})
	closed := burstResults(10, 1, "maxload(fast) == 2")
	if _, err := Combine([]Source{{Label: "a", Path: "a", Results: open}, {Label: "b", Path: "b", Results: closed}}); err == nil ||
		!strings.Contains(err.Error(), "closed-loop") {
		t.Errorf("combining closed and open loop: %v", err)
	}
	other := claimResults(1, scenario.Claim{Say: "y", Check: "skew(slow) <= 1.1"})
	c, err := Combine([]Source{{Label: "a", Path: "a", Results: open}, {Label: "b", Path: "b", Results: other}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scenario.Claims) != 0 || len(JudgeClaims(c)) != 0 {
		t.Errorf("combined results carry claims %v", c.Scenario.Claims)
	}
}

// TestBurstsInReports: a run with bursts shows its largest-load
// distribution beside the model's in the text, markdown and HTML reports,
// claim or no claim.
func TestBurstsInReports(t *testing.T) {
	r := burstResults(500, 3, "maxload(fast) <= 16")
	r.Scenario.Claims = nil
	bs := BurstComparisons(r)
	if len(bs) != 1 || bs[0].Variant != "fast" || bs[0].Bursts != 500 || len(bs[0].Exact) != 17 {
		t.Fatalf("burst comparisons %+v", bs)
	}
	var total float64
	for _, p := range bs[0].Exact {
		total += p
	}
	if total < 0.999999 || total > 1.000001 {
		t.Errorf("model distribution sums to %g", total)
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	html, err := renderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html} {
		if !strings.Contains(out, "4.20") || !strings.Contains(strings.ToLower(out), "largest load per burst") {
			t.Errorf("%s report lacks the burst distribution beside the model's mean 4.20", name)
		}
	}
}
