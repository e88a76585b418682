package compare

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
)

var update = flag.Bool("update", false, "rewrite the calibration table in docs/verdicts.md")

// roundsOf makes n rounds of two variants: the baseline's latency scale
// drifts from round to round (log sd drift), the candidate is shift times
// it with its own noise (log sd sigma).
func roundsOf(rng *rand.Rand, n int, shift, sigma, drift float64) Pair {
	p := Pair{Variant: "cand", Baseline: "base", Paired: true}
	for r := 1; r <= n; r++ {
		d := math.Exp(drift * rng.NormFloat64())
		b := resultstest.Run("base", d, 0)
		c := resultstest.Run("cand", shift*d*math.Exp(sigma*rng.NormFloat64()), 0)
		b.Rep, c.Rep = r, r
		p.Base, p.Cand = append(p.Base, b), append(p.Cand, c)
	}
	return p
}

// TestPairedDecides: large changes are decided in a few rounds although
// the machine drifts by ±30% from round to round (which the unpaired
// method cannot see through), and the method is named.
func TestPairedDecides(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	for _, tc := range []struct {
		name  string
		shift float64
		want  Outcome
	}{
		{"much faster", 0.55, Pass},
		{"much slower", 1.6, Fail},
		{"unchanged", 1, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := roundsOf(rng, 5, tc.shift, 0.02, 0.3)
			vs, err := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP99}})
			if err != nil {
				t.Fatal(err)
			}
			v := vs[0]
			if v.Outcome != tc.want || v.Method != MethodPaired || v.Rounds != 5 {
				t.Fatalf("%s (%s, %d rounds), want %s paired: %s", v.Outcome, v.Method, v.Rounds, tc.want, v.Detail)
			}
			if !(v.CILow <= v.Ratio && v.Ratio <= v.CIHigh) || math.Abs(v.Ratio/tc.shift-1) > 0.05 {
				t.Errorf("ratio %g [%g, %g], want about %g", v.Ratio, v.CILow, v.CIHigh, tc.shift)
			}
			unpaired := p
			unpaired.Paired = false
			uv, _ := Compare([]Pair{unpaired}, Options{Metrics: []string{results.MetricP99}})
			t.Logf("paired: %s %s; unpaired: %s %s", v.Outcome, v.Detail, uv[0].Outcome, uv[0].Detail)
		})
	}
}

// TestPairedFewRoundsAndMissingSides: fewer than MinRounds complete
// rounds is inconclusive; a round with one side invalid is left out and
// counted.
func TestPairedFewRoundsAndMissingSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 0))
	p := roundsOf(rng, 3, 2, 0.01, 0)
	p.Cand[1].Valid = false
	vs, _ := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP99}})
	if v := vs[0]; v.Outcome != Inconclusive || v.Rounds != 2 || !strings.Contains(v.Detail, "too few paired rounds") || !strings.Contains(v.Detail, "1 rounds left out") {
		t.Fatalf("%s, %d rounds: %s", v.Outcome, v.Rounds, v.Detail)
	}
}

// TestPairedMedianCheck: one round far off cannot decide alone: four
// rounds unchanged and one 3x slower move the mean past a 10% tolerance,
// but the verdict waits.
func TestPairedMedianCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	p := roundsOf(rng, 12, 1, 0.001, 0)
	for _, r := range []int{2, 5, 9} {
		p.Cand[r] = resultstest.Run("cand", 3, 0)
		p.Cand[r].Rep = r + 1
	}
	vs, _ := Compare([]Pair{p}, Options{Metrics: []string{results.MetricP99}, Alpha: 0.5})
	if v := vs[0]; v.Outcome == Fail {
		t.Fatalf("three bad rounds of twelve failed the verdict: %s", v.Detail)
	}
}

// TestPairedCalibration is the simulated half of the calibration table in
// docs/verdicts.md (the real A/A half is measured by hand, see there):
// A/A comparisons with realistic round-to-round drift and noise, sequential
// (a look after every round from 3 to 10) and fixed (5 rounds, one look),
// normal and heavy-tailed noise, fail in no more than alpha of the trials;
// and the rounds a 10%, 20% and 40% regression needs. Seeded, so the table
// is reproducible; go test -run TestPairedCalibration -update rewrites it.
func TestPairedCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates some 60000 comparisons")
	}
	const alpha, tol = 0.05, 0.10
	var table strings.Builder
	table.WriteString("| round-to-round sd of log ratio | noise | design | A/A false-fail rate (95% CI) | fail rate of a change of exactly the tolerance (95% CI) | rounds to fail a 10% / 20% / 40% regression (median; 80% power) |\n|--:|:--|:--|:--|:--|:--|\n")
	for _, sigma := range []float64{0.04, 0.08, 0.16} {
		for _, tails := range []bool{false, true} {
			for _, design := range []struct {
				name     string
				min, max int
			}{{"sequential, rounds 3 to 10", 3, 10}, {"fixed, 5 rounds", 5, 5}} {
				sim := Simulation{Sigma: sigma, Drift: 0.3, Tails: tails, MinRounds: design.min, MaxRounds: design.max,
					Alpha: alpha, Tolerance: tol, Trials: 2000, Seed: 1}
				aa := sim.Run(1)
				rate, lo, hi := aa.FailRate()
				if lo > alpha {
					t.Errorf("sd %g tails %v %s: A/A false-fail rate %.4f [%.4f, %.4f] is above alpha %g", sigma, tails, design.name, rate, lo, hi, alpha)
				}
				edge := sim.Run(1 + tol)
				erate, elo, ehi := edge.FailRate()
				if elo > alpha {
					t.Errorf("sd %g tails %v %s: a change of exactly the tolerance failed in %.4f [%.4f, %.4f] of the trials, above alpha %g", sigma, tails, design.name, erate, elo, ehi, alpha)
				}
				sim.Trials = 1000
				var power []string
				for _, change := range []float64{0.1, 0.2, 0.4} {
					med, p80 := sim.Run(1 + change).RoundsToFail()
					power = append(power, fmt.Sprintf("%s; %s", roundsString(med, design.max), roundsString(p80, design.max)))
				}
				noise := "normal"
				if tails {
					noise = "t, 3 df"
				}
				fmt.Fprintf(&table, "| %.2f | %s | %s | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %s |\n", sigma, noise, design.name, rate, lo, hi, erate, elo, ehi, strings.Join(power, " / "))
			}
		}
	}
	t.Logf("\n%s", table.String())
	checkDocTable(t, "calibration", table.String())
}

func roundsString(n, max int) string {
	if n == 0 {
		return fmt.Sprintf(">%d", max)
	}
	return fmt.Sprint(n)
}

// checkDocTable checks that docs/verdicts.md holds table between the
// markers <!-- name: begin --> and <!-- name: end -->, or rewrites it there
// with -update.
func checkDocTable(t *testing.T, name, table string) {
	t.Helper()
	path := filepath.Join("..", "docs", "verdicts.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+": begin -->\n", "<!-- "+name+": end -->"
	i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s markers", path, name)
	}
	got := string(b[i+len(begin) : j])
	if got == table {
		return
	}
	if *update {
		out := string(b[:i+len(begin)]) + table + string(b[j:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the %s table in %s is not what the simulation gives (go test ./compare -run %s -update):\n%s", name, path, t.Name(), table)
}
