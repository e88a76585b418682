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
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
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

// calibrationNoises are the round-to-round noises every paired design
// is calibrated on (measurement.md, "Error rates that hold"): normal,
// heavy-tailed, skewed one way and the other, two-humped, and the real
// A/A rounds of testdata centred (the pool is filled in by the test).
func calibrationNoises(pool []float64) []struct {
	name string
	sim  Simulation
} {
	return []struct {
		name string
		sim  Simulation
	}{
		{"normal", Simulation{Sigma: 0.08}},
		{"t, 3 df", Simulation{Sigma: 0.08, Tails: true}},
		{"10% of rounds 4 sd lower", Simulation{Sigma: 0.08, Skew: Mixture{Share: 0.1, Distance: -4}}},
		{"10% of rounds 4 sd higher", Simulation{Sigma: 0.08, Skew: Mixture{Share: 0.1, Distance: 4}}},
		{"30% of rounds 4 sd lower", Simulation{Sigma: 0.08, Skew: Mixture{Share: 0.3, Distance: -4}}},
		{"real A/A rounds, centred", Simulation{Pool: pool}},
	}
}

// calibrationDesigns are the fixed and sequential designs calibrated.
var calibrationDesigns = []struct {
	name     string
	min, max int
}{{"fixed, 3 rounds", 3, 3}, {"fixed, 5 rounds", 5, 5}, {"fixed, 10 rounds", 10, 10},
	{"sequential, rounds 3 to 4", 3, 4}, {"sequential, rounds 3 to 10", 3, 10}}

// TestPairedCalibration is the simulated calibration table of
// docs/verdicts.md: for every noise of calibrationNoises and every design
// of calibrationDesigns, 2000 seeded comparisons of a change of exactly
// the tolerance (the mean log ratio on the bound, the worst case both
// ways), whose fail and pass rates are both false decisions and must be
// at most alpha plus two standard errors of the simulation; and the
// rounds a 20% and a 40% regression needs. Seeded, so the table is
// reproducible; go test -run TestPairedCalibration -update rewrites it.
func TestPairedCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates some 100000 comparisons")
	}
	const alpha, tol, trials = 0.05, 0.10, 2000
	limit := alpha + 2*math.Sqrt(alpha*(1-alpha)/trials)
	var pool []float64
	for _, r := range realAARounds(t) {
		pool = append(pool, logsOf(r)...)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| noise of the per-round log ratio | design | false fail at the tolerance (95%% CI) | false pass at the tolerance (95%% CI) | rounds to fail a 20%% / 40%% regression (median; 80%% power) |\n|:--|:--|:--|:--|:--|\n")
	for ni, noise := range calibrationNoises(pool) {
		for _, design := range calibrationDesigns {
			sim := noise.sim
			sim.Drift, sim.MinRounds, sim.MaxRounds, sim.Alpha, sim.Tolerance, sim.Trials, sim.Seed = 0.3, design.min, design.max, alpha, tol, trials, uint64(1+ni)
			edge := sim.Run(1 + tol)
			frate, flo, fhi := edge.FailRate()
			prate, plo, phi := edge.PassRate()
			if frate > limit || prate > limit {
				t.Errorf("%s, %s: at the tolerance false fail %.4f, false pass %.4f; the level allows %.4f (alpha + 2 se)", noise.name, design.name, frate, prate, limit)
			}
			sim.Trials = 1000
			var power []string
			for _, change := range []float64{0.2, 0.4} {
				med, p80 := sim.Run(1 + change).RoundsToFail()
				power = append(power, fmt.Sprintf("%s; %s", roundsString(med, design.max), roundsString(p80, design.max)))
			}
			fmt.Fprintf(&table, "| %s | %s | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %s |\n", noise.name, design.name, frate, flo, fhi, prate, plo, phi, strings.Join(power, " / "))
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

// TestSkewSafeCost writes the price of the skew-safe test into
// docs/verdicts.md: its critical values beside Student's t for the rounds
// and levels verdicts use (-update rewrites the table).
func TestSkewSafeCost(t *testing.T) {
	var table strings.Builder
	table.WriteString("| rounds | Student's t at 5% / 1% / 0.1% | skew-safe at 5% / 1% / 0.1% | ratio at 5% / 1% / 0.1% |\n|--:|:--|:--|:--|\n")
	for _, n := range []int{3, 4, 5, 6, 8, 10, 15, 20, 30} {
		var st, ss, ratio []string
		for _, a := range []float64{0.05, 0.01, 0.001} {
			s := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - a)
			q := stats.SkewSafeQuantile(n, a)
			if !(q >= s) {
				t.Errorf("%d rounds at %g: skew-safe %g below Student's %g", n, a, q, s)
			}
			st, ss, ratio = append(st, fmt.Sprintf("%.2f", s)), append(ss, fmt.Sprintf("%.2f", q)), append(ratio, fmt.Sprintf("%.2f", q/s))
		}
		fmt.Fprintf(&table, "| %d | %s | %s | %s |\n", n, strings.Join(st, " / "), strings.Join(ss, " / "), strings.Join(ratio, " / "))
	}
	checkDocTable(t, "skewsafe", table.String())
}

// TestPairedCPUPerRequest: CPU per request of one role is a comparison
// metric (the gate's cost check). A candidate whose proxy spends 30% more
// CPU per request, at a round-to-round sd of 0.045 (what the gate's proxy
// measured), fails within 4 paired rounds while its p99 passes; the same
// build against itself does not fail; a tolerance given for every
// relative metric covers it; an unknown role is refused by name.
func TestPairedCPUPerRequest(t *testing.T) {
	metric := "cpu_per_request(proxy)"
	rounds := func(rng *rand.Rand, n int, shift float64) Pair {
		p := Pair{Variant: "cand", Baseline: "base", Paired: true}
		for r := 1; r <= n; r++ {
			drift := math.Exp(0.1 * rng.NormFloat64())
			b, c := resultstest.Run("base", 1, 0), resultstest.Run("cand", 1, 0)
			b.Rep, c.Rep = r, r
			b.CPU = []results.ProcessCPU{{Role: results.RoleProxy, Worker: -1, Time: time.Duration(125e3 * drift * 1000)}}
			c.CPU = []results.ProcessCPU{{Role: results.RoleProxy, Worker: -1, Time: time.Duration(125e3 * drift * shift * math.Exp(0.045*rng.NormFloat64()) * 1000)}}
			p.Base, p.Cand = append(p.Base, b), append(p.Cand, c)
		}
		return p
	}
	rng := rand.New(rand.NewPCG(30, 1))
	vs, err := Compare([]Pair{rounds(rng, 4, 1.3)}, Options{Metrics: []string{results.MetricP99, metric}})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdictOf(t, vs, metric); v.Outcome != Fail || math.Abs(v.Ratio/1.3-1) > 0.1 || v.Tolerance != DefaultTolerance {
		t.Errorf("proxy +30%%: %s ratio %.3f tolerance %g: %s", v.Outcome, v.Ratio, v.Tolerance, v.Detail)
	}
	if v := verdictOf(t, vs, results.MetricP99); v.Outcome == Fail {
		t.Errorf("p99 unchanged yet %s: %s", v.Outcome, v.Detail)
	}
	fails := 0
	for range 200 {
		vs, err := Compare([]Pair{rounds(rng, 4, 1)}, Options{Metrics: []string{metric}})
		if err != nil {
			t.Fatal(err)
		}
		if vs[0].Outcome == Fail {
			fails++
		}
	}
	if fails > 0 {
		t.Errorf("A/A: %d of 200 comparisons of CPU per request failed", fails)
	}
	tol, err := Tolerances([]string{"5%"})
	if err != nil {
		t.Fatal(err)
	}
	if o := (Options{Metrics: []string{metric}, Tolerances: tol}).WithDefaults(); o.Tolerances[metric] != 0.05 || o.Validate() != nil {
		t.Errorf("a tolerance for every metric gives %s %g (%v)", metric, o.Tolerances[metric], o.Validate())
	}
	if _, err := Compare([]Pair{rounds(rng, 4, 1)}, Options{Metrics: []string{"cpu_per_request(nobody)"}}); err == nil || !strings.Contains(err.Error(), "cpu_per_request(proxy)") {
		t.Errorf("unknown role: %v", err)
	}
}
