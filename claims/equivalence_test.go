package claims

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/scenario"
)

// TestEquivalenceCalibration: "a ~ b within 10%" judged by two one-sided
// tests. With the truth exactly on a margin (ratio 1.1 or 1/1.1) the claim
// holds, and fails, each in at most alpha plus two standard errors of 2000
// seeded comparisons (400 with -short), for 3, 5 and 10 rounds of normal
// and skewed (10% of rounds 4 sd off, both signs) round-to-round noise of
// sd 0.05; with the truth at 1 it holds in most comparisons of 10 rounds;
// and judged from runs (judgeClaim) it agrees with the rule.
func TestEquivalenceCalibration(t *testing.T) {
	chk, err := scenario.ParseCheck("throughput(a) ~ throughput(b) within 10%")
	if err != nil {
		t.Fatal(err)
	}
	trials := 2000
	if testing.Short() {
		trials = 400
	}
	const alpha, sd = 0.05, 0.05
	limit := alpha + 2*math.Sqrt(alpha*(1-alpha)/float64(trials))
	for _, rounds := range []int{3, 5, 10} {
		for _, skew := range []float64{0, -4, 4} {
			noise := mixtureNoise(sd, 0.1, skew)
			for _, truth := range []float64{1.1, 1 / 1.1} {
				rng := rand.New(rand.NewPCG(uint64(rounds), math.Float64bits(truth+skew)))
				held, failed := 0, 0
				for range trials {
					a, b := map[int]float64{}, map[int]float64{}
					for r := 1; r <= rounds; r++ {
						drift := math.Exp(0.3 * rng.NormFloat64())
						a[r], b[r] = truth*drift*math.Exp(noise(rng)), drift
					}
					switch o := equivalenceOutcome(chk, a, b, alpha); o {
					case Holds:
						held++
					case Fails:
						failed++
					}
				}
				h, f := float64(held)/float64(trials), float64(failed)/float64(trials)
				t.Logf("%2d rounds, skew %+g, truth %.3f: held %.4f, failed %.4f (limit %.4f)", rounds, skew, truth, h, f, limit)
				if h > limit || f > limit {
					t.Errorf("%d rounds, skew %g, truth on the margin %.3f: held %.4f, failed %.4f, above %.4f", rounds, skew, truth, h, f, limit)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	held := 0
	for range trials {
		a, b := map[int]float64{}, map[int]float64{}
		for r := 1; r <= 10; r++ {
			drift := math.Exp(0.3 * rng.NormFloat64())
			a[r], b[r] = drift*math.Exp(sd*rng.NormFloat64()), drift
		}
		if equivalenceOutcome(chk, a, b, alpha) == Holds {
			held++
		}
	}
	if power := float64(held) / float64(trials); power < 0.7 {
		t.Errorf("equal sides over 10 rounds of sd %g: held %.3f, want most", sd, power)
	} else {
		t.Logf("equal sides, 10 rounds: held %.3f", power)
	}
	// From runs, through judgeClaim: equal sides hold; a 30% gap fails.
	for _, tc := range []struct {
		truth float64
		want  Outcome
	}{{1, Holds}, {1.3, Fails}} {
		r := familyResults(rand.New(rand.NewPCG(9, 9)), 10, 1, []float64{tc.truth})
		c := scenario.Claim{Say: "about the same", Check: "throughput(a0) ~ throughput(b0) within 10%"}
		r.Scenario.Claims = []scenario.Claim{c}
		chk, _ := scenario.ParseCheck(c.Check)
		if got := judgeClaim(r, c, chk, alpha); got.Outcome != tc.want || !strings.Contains(got.Evidence, "claimed within [0.909, 1.100]") {
			t.Errorf("truth %g: %s (%s), want %s", tc.truth, got.Outcome, got.Evidence, tc.want)
		}
	}
}

func equivalenceOutcome(chk scenario.Check, a, b map[int]float64, alpha float64) Outcome {
	var cr Result
	judgeEquivalence(chk, &cr, a, b, alpha, "", "")
	return cr.Outcome
}

// TestEquivalenceParse: the form, its margin, and what is refused.
func TestEquivalenceParse(t *testing.T) {
	c, err := scenario.ParseCheck("p99(a) ~ 0.5 * p99(b) within 10%")
	if err != nil || c.Op != "~" || c.Within != 0.1 || c.Right == nil || c.Right.Factor != 0.5 || c.Model {
		t.Fatalf("%+v %v", c, err)
	}
	if c, err := scenario.ParseCheck("pmax(a, 4) ~ model within 0.03"); err != nil || !c.Model || c.Margin != 0.03 || c.Within != 0 {
		t.Fatalf("model form: %+v %v", c, err)
	}
	for in, want := range map[string]string{
		"p99(a) ~ p99(b)":              "needs its margin",
		"p99(a) ~ p99(b) within 10":    "percentage",
		"p99(a) ~ p99(b) within 0%":    "above 0%",
		"p99(a) ~ p99(b) within 200%":  "at most 100%",
		"p99(a) ~ 5ms":                 "another variant's figure",
		"pmax(a, 4) ~ model":           "~ model within 0.03",
		"pmax(a, 4) ~ model within 3%": "not a percentage",
		"pmax(a, 4) ~ model within 1":  "above 0 and below 1",
	} {
		if _, err := scenario.ParseCheck(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestRatioClaimCalibration: a ratio claim "a < 0.8 × b" whose truth is
// exactly 0.8 holds, and fails, each in at most alpha plus two standard
// errors of 2000 seeded comparisons (400 with -short), over 3, 5 and 10
// paired rounds of normal, heavy-tailed (t, 3 df) and skewed (10% of
// rounds 4 sd off, both signs; 30% 4 sd lower) noise of sd 0.08, with a
// drift the rounds share.
func TestRatioClaimCalibration(t *testing.T) {
	chk, err := scenario.ParseCheck("p99(a) < 0.8 * p99(b)")
	if err != nil {
		t.Fatal(err)
	}
	trials := 2000
	if testing.Short() {
		trials = 400
	}
	const alpha, sd = 0.05, 0.08
	limit := alpha + 2*math.Sqrt(alpha*(1-alpha)/float64(trials))
	noises := map[string]func(*rand.Rand) float64{
		"normal": mixtureNoise(sd, 0, 0),
		"t3": func(rng *rand.Rand) float64 {
			z, chi := rng.NormFloat64(), 0.0
			for range 3 {
				g := rng.NormFloat64()
				chi += g * g
			}
			return sd * z / math.Sqrt(chi/3) / math.Sqrt(3)
		},
		"10% 4 sd lower":  mixtureNoise(sd, 0.1, -4),
		"10% 4 sd higher": mixtureNoise(sd, 0.1, 4),
		"30% 4 sd lower":  mixtureNoise(sd, 0.3, -4),
	}
	for name, noise := range noises {
		for _, rounds := range []int{3, 5, 10} {
			rng := rand.New(rand.NewPCG(uint64(rounds), uint64(len(name))))
			held, failed := 0, 0
			for range trials {
				a, b := map[int]float64{}, map[int]float64{}
				for r := 1; r <= rounds; r++ {
					drift := math.Exp(0.3 * rng.NormFloat64())
					a[r], b[r] = 0.8*drift*math.Exp(noise(rng)), drift
				}
				switch o, _, _, _, _ := decideRatio(chk, a, b, alpha); o {
				case Holds:
					held++
				case Fails:
					failed++
				}
			}
			h, f := float64(held)/float64(trials), float64(failed)/float64(trials)
			t.Logf("%-16s %2d rounds: held %.4f, failed %.4f (limit %.4f)", name, rounds, h, f, limit)
			if h > limit || f > limit {
				t.Errorf("%s, %d rounds, truth on the factor: held %.4f, failed %.4f, above %.4f", name, rounds, h, f, limit)
			}
		}
	}
}

// mixtureNoise draws round-to-round noise of sd sd and mean zero: a share
// p of the rounds d sd of the common part away from the rest (a negative
// d: below); p or d zero is normal noise.
func mixtureNoise(sd, p, d float64) func(*rand.Rand) float64 {
	c := sd / math.Sqrt(1+d*d*p*(1-p))
	return func(rng *rand.Rand) float64 {
		x := rng.NormFloat64() - d*p
		if rng.Float64() < p {
			x += d
		}
		return c * x
	}
}
