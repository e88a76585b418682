package job

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// upTo is res with the runs of its first rounds only: what the run loop
// had judged at the look after that round.
func upTo(res *results.Results, rounds int) *results.Results {
	out := *res
	out.Stop, out.Runs = nil, nil
	for _, r := range res.Runs {
		if r.Rep <= rounds {
			out.Runs = append(out.Runs, r)
		}
	}
	return &out
}

// p99Bound is a claim that variant v's p99 stays below f times the p99 of
// the fake driver's runs at scale 1.
func p99Bound(v string, f float64) scenario.Claim {
	p99 := resultstest.Run(v, 1, 0).Latency.Quantile(0.99)
	return scenario.Claim{Say: "bounded", Check: fmt.Sprintf("p99(%s) < %dus", v, time.Duration(f*float64(p99)).Microseconds())}
}

// TestUntilDecidedOnClaims: a scenario of one variant has no comparison,
// but a statistical claim: --until-decided goes on while the claim is
// undecided at the look (round 2 was slow: the first looks cannot tell)
// and stops at the first look that decides it, saying so; the claim is
// judged in the report at that look's share, as the look judged it.
func TestUntilDecidedOnClaims(t *testing.T) {
	var out bytes.Buffer
	claim := p99Bound("a", 1.5)
	slowSecond := func(_ string, round int) float64 {
		if round == 2 {
			return 2.2
		}
		return 1
	}
	o := options(t, testScenario(t, 3, []string{"a"}, claim), fake{round: slowSecond}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 20
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	st := res.Stop
	if st == nil || !st.Decided || st.Rounds <= compare.MinRounds || st.Rounds == o.MaxRounds || len(res.Runs) != st.Rounds {
		t.Fatalf("stop %+v after %d runs: want a decision after more than %d rounds", st, len(res.Runs), compare.MinRounds)
	}
	look, looks := compare.Looks(st.Rounds, o.MaxRounds, 0)
	want := fmt.Sprintf("every statistical claim decided after %d rounds (look %d of at most %d)", st.Rounds, look, looks)
	if st.Reason != want || st.Undecided != nil {
		t.Errorf("reason %q (undecided %q), want %q", st.Reason, st.Undecided, want)
	}
	// Every look before that one left the claim undecided.
	for round := compare.MinRounds; round < st.Rounds; round++ {
		if got, _ := o.undecidedAt(upTo(res, round), round, false, claims.Statistical(res.Scenario)); !slices.Equal(got, []string{"claim " + claim.Check}) {
			t.Errorf("look after round %d: undecided %q, want the claim", round, got)
		}
	}
	if got, _ := o.undecidedAt(res, st.Rounds, false, claims.Statistical(res.Scenario)); got != nil {
		t.Errorf("the deciding look: undecided %q", got)
	}
	// The looks judged the claim only (no comparison), and the report
	// judges it as the last look did.
	saved, err := results.ReadFile(filepath.Join(o.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if j := saved.Stop.Judging; j == nil || j.Metrics != nil || j.Alpha != 0 || !slices.Equal(j.Claims, []string{claim.Check}) || j.ClaimsAlpha != claims.DefaultAlpha {
		t.Errorf("judging recorded %+v", saved.Stop.Judging)
	}
	for _, w := range []string{"HOLDS", fmt.Sprintf("look %d of at most %d", look, looks), "rounds: " + fmt.Sprint(st.Rounds) + " of at most 20: " + want} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// TestUntilDecidedClaimsAndComparison: with a comparison too (two
// open-loop variants), the run stops when both are decided: here the
// comparison (of the error rates, none on either side) is decided at the
// first look and the claim, whose rounds 2 and 3 straddle its factor,
// later.
func TestUntilDecidedClaimsAndComparison(t *testing.T) {
	var out bytes.Buffer
	claim := scenario.Claim{Say: "fast is well ahead", Check: "p99(fast) < 0.7 * p99(slow)"}
	scale := func(v string, round int) float64 {
		if v == "slow" {
			return 1
		}
		switch round {
		case 2:
			return 0.72
		case 3:
			return 0.45
		}
		return 0.5
	}
	o := options(t, testScenario(t, 3, []string{"slow", "fast"}, claim), fake{round: scale}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 20
	// The error rate (none on either side) is decided at the first look.
	o.Compare = compare.Options{Metrics: []string{results.MetricErrorRate}}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	st := res.Stop
	if st == nil || !st.Decided || st.Rounds <= compare.MinRounds || !strings.HasPrefix(st.Reason, fmt.Sprintf("every judged metric and every statistical claim decided after %d rounds", st.Rounds)) {
		t.Fatalf("stop %+v", st)
	}
	first := upTo(res, compare.MinRounds)
	// The comparison is decided after three rounds, in one family with
	// the claim, which is not.
	if got, _ := o.undecidedAt(first, compare.MinRounds, true, claims.Statistical(res.Scenario)); !slices.Equal(got, []string{"claim " + claim.Check}) {
		t.Errorf("after %d rounds: undecided %q, want the claim alone", compare.MinRounds, got)
	}
	if j := res.Stop.Judging; j == nil || !slices.Equal(j.Metrics, []string{results.MetricErrorRate}) || !slices.Equal(j.Claims, []string{claim.Check}) || !j.OneFamily {
		t.Errorf("judging recorded %+v", res.Stop.Judging)
	}
}

// TestOneFamilyJudgedAgain: a run until decided judges its comparison
// and its claim as one Holm family (the claim ranked among the comparison's
// tests, which are ranked among the claim's), and judging its saved
// results again as lbbench compare and lbbench report do (the comparison
// with the run's claims, the claims with the saved verdicts) gives back
// the verdicts and claim outcomes the run wrote.
func TestOneFamilyJudgedAgain(t *testing.T) {
	var out bytes.Buffer
	claim := scenario.Claim{Say: "fast is well ahead", Check: "p99(fast) < 0.7 * p99(slow)"}
	scale := func(v string, round int) float64 {
		if v == "slow" {
			return 1
		}
		return []float64{0.5, 0.6, 0.45, 0.55, 0.5}[round%5]
	}
	o := options(t, testScenario(t, 3, []string{"slow", "fast"}, claim), fake{round: scale}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 8
	o.Compare = compare.Options{Metrics: []string{results.MetricP99, results.MetricErrorRate}}
	if _, err := Run(context.Background(), o); err != nil && code(t, err) == ExitError {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	saved, err := results.ReadFile(filepath.Join(o.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if j := saved.Stop.Judging; j == nil || !j.OneFamily {
		t.Fatalf("judging recorded %+v, want one family", saved.Stop.Judging)
	}
	wrote, err := compare.ReadVerdicts(filepath.Join(o.Out, compare.VerdictsFileName))
	if err != nil || len(wrote) != 2 {
		t.Fatalf("verdicts written %+v, %v", wrote, err)
	}
	// lbbench compare RESULTS: the run's look, its metrics, its claims.
	pairs, _, _, err := pairsFor(saved, o)
	if err != nil {
		t.Fatal(err)
	}
	look := compare.Options{Metrics: saved.Stop.Judging.Metrics, Tolerances: saved.Stop.Judging.Tolerances, Alpha: saved.Stop.Judging.Alpha}
	look.Look, look.MaxLooks = compare.Looks(saved.Stop.Rounds, saved.Stop.MaxRounds, saved.Stop.Looks)
	var buf bytes.Buffer
	again, err := Comparison{Pairs: pairs, Options: look, Claims: saved}.Write(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wrote {
		w, g := wrote[i], again[i]
		if w.Outcome != g.Outcome || w.P != g.P || w.TestP != g.TestP || w.Level != g.Level || w.Detail != g.Detail {
			t.Errorf("verdict %d judged again:\n%+v\nthe run wrote:\n%+v", i, g, w)
		}
	}
	// Without the claims the comparison is a smaller family: its
	// adjusted p-values are not the run's.
	alone, err := Comparison{Pairs: pairs, Options: look}.Write(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if alone[0].P == wrote[0].P && alone[1].P == wrote[1].P {
		t.Errorf("the comparison alone adjusts as the family does (%g, %g): the claims took no rank", alone[0].P, alone[1].P)
	}
	// lbbench report: the claims with the saved verdicts, as the run
	// printed them.
	doc, err := Report(saved, wrote, nil)
	if err != nil {
		t.Fatal(err)
	}
	cr := doc.Claims[0]
	if !strings.Contains(cr.Evidence, "of the 3 tests (claims and comparison)") {
		t.Errorf("claim evidence %q: want it ranked among 3 tests", cr.Evidence)
	}
	if want := strings.ToUpper(string(cr.Outcome)); !strings.Contains(out.String(), want) || !strings.Contains(out.String(), cr.Evidence) {
		t.Errorf("the run printed other claims than the report of its results gives (%s: %s):\n%s", want, cr.Evidence, out.String())
	}
}

// TestUntilDecidedRunsOut: a claim that no number of rounds decides (its
// rounds alternate on either side of the bound) runs to --max-rounds, and
// the stop names it; with a budget that the rounds pass, the same.
func TestUntilDecidedRunsOut(t *testing.T) {
	claim := p99Bound("a", 1)
	alternate := func(_ string, round int) float64 { return []float64{0.7, 1.4}[round%2] }
	var out bytes.Buffer
	o := options(t, testScenario(t, 3, []string{"a"}, claim), fake{round: alternate}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 5
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	named := "claim " + claim.Check
	st := res.Stop
	if st == nil || st.Decided || st.Rounds != 5 || len(res.Runs) != 5 || !slices.Equal(st.Undecided, []string{named}) ||
		st.Reason != "not decided within the 5 rounds allowed; undecided at the last look: "+named {
		t.Fatalf("stop %+v", st)
	}
	if !strings.Contains(out.String(), "rounds: 5 of at most 5: not decided within the 5 rounds allowed; undecided at the last look: "+named) {
		t.Errorf("output does not say what stayed undecided:\n%s", out.String())
	}

	// The same with a budget of about five runs of 40 ms.
	out.Reset()
	o = options(t, testScenario(t, 3, []string{"a"}, claim), fake{round: alternate, wait: 40 * time.Millisecond}.driver(), &out)
	o.UntilDecided, o.MaxRounds, o.Budget = true, 20, 220*time.Millisecond
	if res, err = Run(context.Background(), o); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	st = res.Stop
	if st == nil || st.Decided || st.Rounds >= 20 || !strings.Contains(st.Reason, "would pass the budget of 220ms") {
		t.Fatalf("budget: stop %+v", st)
	}
	if st.Rounds >= compare.MinRounds && (!slices.Equal(st.Undecided, []string{named}) || !strings.HasSuffix(st.Reason, "; undecided at the last look: "+named)) {
		t.Errorf("budget after %d rounds: the claim is not named: %+v", st.Rounds, st)
	}
}

// TestUntilDecidedOnModelClaim: a burst workload repeats its requests
// run for run, but a model claim (pmax ~ model within D) is judged with
// the run as the unit, each run drawing its own dispatch: --until-decided
// goes on while the claim is undecided, past the first look, rather than
// making the scenario's repeat rounds.
func TestUntilDecidedOnModelClaim(t *testing.T) {
	const check = "pmax(a, 4) ~ model within 0.03"
	s := testScenario(t, 2, []string{"a"})
	s.Workers.Count = 8
	s.Workload = workloads.Spec{Bursts: &workloads.Bursts{Size: 16, Count: 200}, Classes: []workloads.Class{{Name: "a", Weight: 1}}}
	s.Claims = []scenario.Claim{{Say: "random dispatch", Check: check}}
	s = s.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	if got := claims.Statistical(s); !slices.Equal(got, []string{check}) {
		t.Fatalf("statistical claims of a burst workload: %q, want the model claim", got)
	}
	random := func(id string) *results.Bursts {
		h := fnv.New64a()
		h.Write([]byte(id))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		b := &results.Bursts{Size: 16, Workers: 8}
		for range 200 {
			load := make([]int, 8)
			for range 16 {
				load[rng.IntN(8)]++
			}
			b.Loads = append(b.Loads, load)
			b.Unattributed = append(b.Unattributed, 0)
		}
		return b
	}
	var out bytes.Buffer
	o := options(t, s, fake{bursts: random}.driver(), &out)
	o.UntilDecided, o.MaxRounds = true, 6
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	st := res.Stop
	if st == nil || st.Rounds <= compare.MinRounds || len(res.Runs) != st.Rounds {
		t.Fatalf("stop %+v after %d runs: want the run to go on past the first look on the model claim", st, len(res.Runs))
	}
	if strings.Contains(out.String(), "nothing in scenario") {
		t.Errorf("a model claim is something more rounds decide:\n%s", out.String())
	}
	for round := compare.MinRounds; round < st.Rounds; round++ {
		if got, _ := o.undecidedAt(upTo(res, round), round, false, claims.Statistical(res.Scenario)); !slices.Equal(got, []string{"claim " + check}) {
			t.Errorf("look after round %d: undecided %q, want the model claim", round, got)
		}
	}
}

// TestUntilDecidedDeterministic: a scenario whose claims more rounds
// cannot decide (exact counts; a closed-loop workload's) and that compares
// nothing makes its repeat rounds under --until-decided, with a note,
// so that make claims can give the flag to every scenario; one with no
// comparison and no claim at all is refused.
func TestUntilDecidedDeterministic(t *testing.T) {
	exact := testScenario(t, 2, []string{"a"}, scenario.Claim{Say: "all answered", Check: "errors(a) == 0"})
	closed := testScenario(t, 2, []string{"a", "b"}, scenario.Claim{Say: "b is even", Check: "skew(b) <= 2"})
	closed.Workload.Arrival = workloads.Arrival{}
	closed.Workload.Closed = &workloads.Closed{Order: "sequential"}
	closed.Workload.Clients.Named = []workloads.NamedClient{{Name: "c", Requests: 10}}
	if cs := claims.Statistical(closed); cs != nil {
		t.Fatalf("closed loop: statistical claims %q", cs)
	}
	for name, s := range map[string]scenario.Scenario{"exact counts": exact, "closed loop": closed} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			o := options(t, s, fake{}.driver(), &out)
			o.UntilDecided, o.MaxRounds = true, 8
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			if res.Stop != nil || len(res.Runs) != 2*len(s.Variants) {
				t.Errorf("stop %+v, %d runs: want the repeat's 2 rounds", res.Stop, len(res.Runs))
			}
			if n := strings.Count(out.String(), "--until-decided: nothing in scenario job that more rounds decide"); n != 1 {
				t.Errorf("the note appears %d times:\n%s", n, out.String())
			}
		})
	}

	var out bytes.Buffer
	none := options(t, testScenario(t, 3, []string{"a"}), fake{}.driver(), &out)
	none.UntilDecided = true
	if _, err := Run(context.Background(), none); code(t, err) != ExitError || !strings.Contains(err.Error(), "--until-decided") {
		t.Errorf("no comparison, no claim: %v", err)
	}
}

// TestGateStopsOnARegression: with a baseline, the look that fails a
// verdict ends the run while another metric is still undecided (a
// regression is the gate's answer whatever the rest would be), and says
// so; without a failed verdict it goes on, and a comparison for
// information (no baseline) waits for every metric.
func TestGateStopsOnARegression(t *testing.T) {
	proxyCPU := func(r *results.Run, d time.Duration) {
		r.CPU = []results.ProcessCPU{{Role: results.RoleProxy, Name: "proxy", Worker: -1, Time: d}}
	}
	res := &results.Results{Schema: results.SchemaVersion, Scenario: scenario.Scenario{Name: "gate",
		Variants: []scenario.Variant{{Name: "lc", Topology: scenario.ReusePort}, {Name: "lc" + scenario.BuildSeparator + "base", Topology: scenario.ReusePort, Build: "base"}}}}
	// p99 1.5 times the base's in every round; the proxy's CPU 0.8 and
	// 1.25 times it in turn, which no number of rounds decides.
	for round := 1; round <= 3; round++ {
		c, b := resultstest.Run("lc", 1.5, 0), resultstest.Run("lc"+scenario.BuildSeparator+"base", 1, 0)
		c.Rep, b.Rep = round, round
		c.ID, b.ID = fmt.Sprintf("c%d", round), fmt.Sprintf("b%d", round)
		proxyCPU(&b, 100*time.Millisecond)
		proxyCPU(&c, []time.Duration{80, 125, 80}[round-1]*time.Millisecond)
		res.Runs = append(res.Runs, b, c)
	}
	o := &Options{MaxRounds: 6, Baseline: "HEAD",
		Compare: compare.Options{Metrics: []string{results.MetricP99, "cpu_per_request(proxy)"}}}
	l := o.lookAfter(res, 3, true, nil, "every judged metric")
	if !l.Decided || !strings.Contains(l.Reason, "a regression decided after 3 rounds (look 1 of at most 4): p99 of lc vs lc") {
		t.Errorf("the gate's look after a failed p99: %+v, want decided on the regression", l)
	}
	o.Compare.Metrics = []string{"cpu_per_request(proxy)"}
	if l := o.lookAfter(res, 3, true, nil, "every judged metric"); l.Decided || len(l.Undecided) != 1 {
		t.Errorf("the proxy's CPU alone: %+v, want undecided", l)
	}
	o.Compare.Metrics, o.Baseline = []string{results.MetricP99, "cpu_per_request(proxy)"}, ""
	if l := o.lookAfter(res, 3, true, nil, "every judged metric"); l.Decided {
		t.Errorf("no baseline: %+v, want the run to wait for every metric", l)
	}
}

// TestSuiteClaimsAlone: a part of a claims suite (run --suite) judges its
// claims as a family of their own, and they alone stop it; the comparison
// of its variants, judged apart for information, does not keep it going.
// Here the claim decides within a few rounds while the comparison of a
// variant that straddles the first's p99 stays inconclusive: the suite's
// part stops on the claim, and the same run outside a suite goes on to its
// last round. lbbench compare and lbbench report of the part's results
// judge the comparison and the claim as the run printed them, apart.
func TestSuiteClaimsAlone(t *testing.T) {
	claim := scenario.Claim{Say: "fast is well ahead", Check: "p99(fast) < 0.7 * p99(slow)"}
	scale := func(v string, round int) float64 {
		switch v {
		case "fast":
			return []float64{0.5, 0.6, 0.45, 0.55, 0.5}[round%5]
		case "same":
			return []float64{0.9, 1.12}[round%2]
		}
		return 1
	}
	run := func(suite *results.Suite) (*results.Results, Options, string) {
		var out bytes.Buffer
		o := options(t, testScenario(t, 3, []string{"slow", "same", "fast"}, claim), fake{round: scale}.driver(), &out)
		o.UntilDecided, o.MaxRounds, o.Suite = true, 8, suite
		o.Compare = compare.Options{Metrics: []string{results.MetricP99}}
		if _, err := Run(context.Background(), o); err != nil && code(t, err) == ExitError {
			t.Fatalf("Run: %v\n%s", err, out.String())
		}
		saved, err := results.ReadFile(filepath.Join(o.Out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		return saved, o, out.String()
	}

	whole, _, out := run(nil)
	if st := whole.Stop; st == nil || st.Decided || st.Rounds != 8 || !slices.Contains(st.Undecided, "p99 of same vs slow") {
		t.Fatalf("outside a suite: stop %+v, want the comparison of same undecided after 8 rounds\n%s", st, out)
	}

	saved, o, out := run(&results.Suite{Dir: "sim", Level: 0.05, Parts: 1, Share: true, ClaimsAlone: true})
	st := saved.Stop
	if st == nil || !st.Decided || st.Rounds >= 8 || !strings.HasPrefix(st.Reason, fmt.Sprintf("every statistical claim decided after %d rounds", st.Rounds)) {
		t.Fatalf("in a suite: stop %+v, want the claim to decide before the last round\n%s", st, out)
	}
	if j := st.Judging; j == nil || j.OneFamily || !slices.Equal(j.Metrics, []string{results.MetricP99}) || !slices.Equal(j.Claims, []string{claim.Check}) {
		t.Errorf("judging recorded %+v, want the comparison's metrics and the claims, apart", st.Judging)
	}
	if SharesFamily(saved) {
		t.Errorf("SharesFamily of a suite's part whose claims are alone: true")
	}
	wrote, err := compare.ReadVerdicts(filepath.Join(o.Out, compare.VerdictsFileName))
	if err != nil || len(wrote) != 2 {
		t.Fatalf("verdicts written %+v, %v", wrote, err)
	}
	if wrote[0].Variant != "same" || wrote[0].Outcome != compare.Inconclusive {
		t.Errorf("verdict of same %+v, want inconclusive (the comparison did not stop the run)", wrote[0])
	}
	// lbbench compare RESULTS: the run's look, the comparison alone.
	pairs, _, _, err := pairsFor(saved, o)
	if err != nil {
		t.Fatal(err)
	}
	look := compare.Options{Metrics: st.Judging.Metrics, Tolerances: st.Judging.Tolerances, Alpha: st.Judging.Alpha}
	look.Look, look.MaxLooks = compare.Looks(st.Rounds, st.MaxRounds, st.Looks)
	var buf bytes.Buffer
	again, err := Comparison{Pairs: pairs, Options: look, Claims: familyOf(saved)}.Write(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wrote {
		if w, g := wrote[i], again[i]; w.Outcome != g.Outcome || w.P != g.P || w.Level != g.Level || w.Detail != g.Detail {
			t.Errorf("verdict %d judged again:\n%+v\nthe run wrote:\n%+v", i, g, w)
		}
	}
	// lbbench report: the claim alone, as the run printed it.
	doc, err := Report(saved, wrote, nil)
	if err != nil {
		t.Fatal(err)
	}
	cr := doc.Claims[0]
	if cr.Outcome != claims.Holds || strings.Contains(cr.Evidence, "claims and comparison") {
		t.Errorf("claim judged again: %s, %q; want it holding, ranked among the claims alone", cr.Outcome, cr.Evidence)
	}
	if want := strings.ToUpper(string(cr.Outcome)); !strings.Contains(out, want) || !strings.Contains(out, cr.Evidence) {
		t.Errorf("the run printed other claims than the report of its results gives (%s: %s):\n%s", want, cr.Evidence, out)
	}
}
