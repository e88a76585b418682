package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// TestSuiteShare: the suite's level is split evenly among its scenarios
// with statistical claims, whatever their number of claims; a scenario of
// exact counts only takes no share; a scenario not in the suite, or a
// suite naming one scenario twice, is an error.
func TestSuiteShare(t *testing.T) {
	claim := func(check string) scenario.Claim { return scenario.Claim{Say: "x", Check: check} }
	one := scenario.Scenario{Name: "one", Claims: []scenario.Claim{claim("p99(a) < 0.8 * p99(b)")}}
	many := scenario.Scenario{Name: "many", Claims: []scenario.Claim{
		claim("p99(a) < 0.8 * p99(b)"), claim("p99.9(a) < 1.0 * p99.9(b)"), claim("requests(a) == 3000"),
	}}
	exact := scenario.Scenario{Name: "exact", Claims: []scenario.Claim{claim("requests(a) == 3000"), claim("workers(a) == [1, 2]")}}
	if got := []int{Members(one), Members(many), Members(exact)}; !slices.Equal(got, []int{1, 2, 0}) {
		t.Fatalf("Members: %v, want [1 2 0]", got)
	}
	all := []scenario.Scenario{one, many, exact}
	for _, c := range []struct {
		s     scenario.Scenario
		alpha float64
		share bool
	}{{one, DefaultAlpha / 2, true}, {many, DefaultAlpha / 2, true}, {exact, 0, false}} {
		su, alpha, err := SuiteShare("suite", all, c.s)
		if err != nil {
			t.Fatalf("%s: %v", c.s.Name, err)
		}
		if alpha != c.alpha || su.Share != c.share || su.Parts != 2 || su.Level != DefaultAlpha || su.Dir != "suite" {
			t.Errorf("%s: alpha %g, suite %+v; want alpha %g, share %v of 2 parts of %g", c.s.Name, alpha, *su, c.alpha, c.share, DefaultAlpha)
		}
	}
	if _, _, err := SuiteShare("suite", all, scenario.Scenario{Name: "other"}); err == nil {
		t.Error("a scenario not in the suite took a share")
	}
	if _, _, err := SuiteShare("suite", []scenario.Scenario{one, one}, one); err == nil {
		t.Error("a suite naming a scenario twice was accepted")
	}
}

// suitePart is a simulated scenario of a claims suite, run until decided
// at its share (Parts shares of DefaultAlpha): familyResultsWith's claims,
// named name, stopped as the job stops it.
func suitePart(rng *rand.Rand, name string, parts, maxRounds int, truth []float64, noise func(*rand.Rand) float64) *results.Results {
	r := familyResultsWith(rng, maxRounds, 1, truth, noise)
	r.Scenario.Name = name
	r.Suite = &results.Suite{Dir: "sim", Level: DefaultAlpha, Parts: parts, Share: true}
	r.Alpha = DefaultAlpha / float64(parts)
	return stopped(r, maxRounds)
}

// TestSuiteJudgesAsTheRunsDid: a suite whose scenarios were run with
// their shares judges every claim as the scenario's own stopped run
// judged it, decided or not; one whose parts do not add up (a scenario
// run on its own, a share larger than the suite's split, a scenario
// twice) falls back to one Holm family over the suite at DefaultAlpha.
func TestSuiteJudgesAsTheRunsDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	noise := mixtureNoise(0.08, 0, 0)
	var rs []*results.Results
	for i, truth := range [][]float64{{0.5}, {1, 0.8}, {0.95}} {
		rs = append(rs, suitePart(rng, fmt.Sprintf("s%d", i), 3, 8, truth, noise))
	}
	judged, at, split := Suite(rs, nil)
	if !split || judged == nil {
		t.Fatalf("Suite: %v, split %v, judged %q", judged, split, at)
	}
	for i, r := range rs {
		own := Judge(r)
		for k := range own {
			if judged[i][k].Outcome != own[k].Outcome {
				t.Errorf("%s claim %d: the suite says %s, its run said %s", r.Scenario.Name, k, judged[i][k].Outcome, own[k].Outcome)
			}
		}
	}
	if judged[0][0].Outcome != Holds {
		t.Errorf("a claim holding by half was %s at its share (%s)", judged[0][0].Outcome, judged[0][0].Evidence)
	}
	for _, c := range []struct {
		name  string
		spoil func([]*results.Results) []*results.Results
	}{
		{"a part run on its own", func(rs []*results.Results) []*results.Results {
			r := *rs[1]
			r.Suite, r.Alpha = nil, 0
			return []*results.Results{rs[0], &r, rs[2]}
		}},
		{"a share larger than the split", func(rs []*results.Results) []*results.Results {
			r := *rs[1]
			r.Alpha = DefaultAlpha / 2
			return []*results.Results{rs[0], &r, rs[2]}
		}},
		{"a scenario twice", func(rs []*results.Results) []*results.Results { return []*results.Results{rs[0], rs[1], rs[0]} }},
		{"more parts than the suite has", func(rs []*results.Results) []*results.Results {
			r := *rs[2]
			r.Scenario.Name = "s3"
			return append(slices.Clone(rs), &r)
		}},
	} {
		spoilt := c.spoil(rs)
		got, at, split := Suite(spoilt, nil)
		want := Family(spoilt, Options{})
		if split || !strings.HasPrefix(at[0], "in one Holm family") {
			t.Errorf("%s: split %v, judged %q, want one Holm family", c.name, split, at[0])
		}
		for i := range want {
			for k := range want[i] {
				if got[i][k].Outcome != want[i][k].Outcome || got[i][k].Evidence != want[i][k].Evidence {
					t.Errorf("%s: scenario %d claim %d judged %s (%s), one family says %s", c.name, i, k, got[i][k].Outcome, got[i][k].Evidence, want[i][k].Outcome)
				}
			}
		}
	}
}

// TestSuiteCalibration: a claims suite whose scenarios are each run until
// decided at their share of the suite's level, and judged as their runs
// judged them, keeps the suite's false-alarm rate. Seeded simulated
// suites (400, 100 with -short) of 4 scenarios, each made until decided
// (up to 8 paired rounds, looks after rounds 3 to 8, the drift of a round
// shared by its variants): a claim exactly at its factor in each (holding
// and failing are both wrong), beside a claim that holds by 20% in two of
// them; the noise of a round normal (sd 0.08) or skewed (30% of the
// rounds 4 sd lower, 10% 4 sd higher). The share of suites with any false
// "fails", and with any false "holds", must not pass DefaultAlpha plus
// two standard errors. The margin claims are decided in about a fifth of
// the suites (19 to 28% over 400: the skew-safe test is conservative at 8
// rounds and a quarter of 5%); fewer than a tenth would mean the
// shares are not spent.
func TestSuiteCalibration(t *testing.T) {
	t.Parallel()
	trials := 400
	if testing.Short() {
		trials = 100
	}
	const parts, maxRounds = 4, 8
	limit := DefaultAlpha + 2*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/float64(trials))
	truths := [][]float64{{1}, {1, 0.8}, {1}, {1, 0.8}}
	for i, c := range []struct {
		name  string
		noise func(*rand.Rand) float64
	}{
		{"normal", mixtureNoise(0.08, 0, 0)},
		{"30% of rounds 4 sd lower", mixtureNoise(0.08, 0.3, -4)},
		{"10% of rounds 4 sd higher", mixtureNoise(0.08, 0.1, 4)},
	} {
		rng := rand.New(rand.NewPCG(4242, uint64(i)))
		fails, holds, margin, decided := 0, 0, 0, 0
		for range trials {
			rs := make([]*results.Results, parts)
			for p := range rs {
				rs[p] = suitePart(rng, fmt.Sprintf("s%d", p), parts, maxRounds, truths[p], c.noise)
			}
			judged, at, split := Suite(rs, nil)
			if !split {
				t.Fatalf("%s: the parts of a suite were not judged as a split suite: %q", c.name, at)
			}
			failed, held := false, false
			for p := range rs {
				f, h := wrongOutcomes(judged[p], truths[p])
				failed, held = failed || f, held || h
				for k, cr := range judged[p] {
					if truths[p][k] != 1 {
						margin++
						if cr.Outcome == Holds {
							decided++
						}
					}
				}
			}
			if failed {
				fails++
			}
			if held {
				holds++
			}
		}
		f, h := float64(fails)/float64(trials), float64(holds)/float64(trials)
		d := float64(decided) / float64(margin)
		t.Logf("%-28s suites with any false fail %.4f, any false hold %.4f (limit %.4f); claims holding by 20%% decided %.3f", c.name, f, h, limit, d)
		if f > limit || h > limit {
			t.Errorf("%s: any false fail %.4f, any false hold %.4f over %d suites: above %.4f", c.name, f, h, trials, limit)
		}
		if d < 0.1 {
			t.Errorf("%s: the claims holding by 20%% were decided in %.3f of the suites: the shares are not spent", c.name, d)
		}
	}
}
