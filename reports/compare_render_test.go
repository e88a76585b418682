package reports

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
)

func fixedVerdicts(t *testing.T) []compare.Verdict {
	t.Helper()
	rng := rand.New(rand.NewPCG(19, 0))
	pairs := []compare.Pair{
		{Variant: "least_conn", Baseline: "least_conn@base", Base: resultstest.Runs(rng, "a", 5, 1, 0.05), Cand: resultstest.Runs(rng, "b", 5, 1.3, 0.05)},
		{Variant: "reuse|port", Baseline: "reuse|port@base", Base: resultstest.Runs(rng, "c", 2, 1, 0.05), Cand: resultstest.Runs(rng, "d", 5, 1, 0.05)},
	}
	vs, err := compare.Compare(pairs, compare.Options{Metrics: []string{results.MetricP99, results.MetricErrorRate}})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestComparisonOutputsGolden(t *testing.T) {
	vs := fixedVerdicts(t)
	var text, md, js bytes.Buffer
	if err := writeVerdictsText(&text, vs, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt.golden", text.Bytes())
	if err := writeComparisonMarkdown(&md, "main vs pr", vs, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md.golden", md.Bytes())
	if !strings.Contains(md.String(), `reuse\|port`) {
		t.Error("markdown does not escape the table separator in a name")
	}
	// JSON verdicts read back as written.
	if err := compare.WriteVerdicts(&js, vs); err != nil {
		t.Fatal(err)
	}
	back, err := compare.ParseVerdicts("verdicts.json", js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(vs) || back[0] != vs[0] {
		t.Errorf("verdicts did not round-trip:\n%+v\n%+v", back, vs)
	}
}

// TestVerdictLineRemade: the line that states the verdict says how many
// runs were made again and why, most frequent cause first, in the text
// and in the markdown; with none it is as before.
func TestVerdictLineRemade(t *testing.T) {
	vs := fixedVerdicts(t)
	for _, tc := range []struct {
		remade   map[string]int
		text, md string
	}{
		{nil, "verdict: FAIL (1 fail, 2 inconclusive, 1 pass)\n", "**Verdict: REGRESSION** (1 fail, 2 inconclusive, 1 pass)\n"},
		{map[string]int{"generator fell behind": 0}, "verdict: FAIL (1 fail, 2 inconclusive, 1 pass)\n", ""},
		{map[string]int{"host steal": 1}, "verdict: FAIL (1 fail, 2 inconclusive, 1 pass; 1 run re-made: host steal ×1)\n", ""},
		{map[string]int{"host steal": 1, "generator fell behind": 2, "another lbbench run on the host": 1},
			"verdict: FAIL (1 fail, 2 inconclusive, 1 pass; 4 runs re-made: generator fell behind ×2, another lbbench run on the host ×1, host steal ×1)\n",
			"**Verdict: REGRESSION** (1 fail, 2 inconclusive, 1 pass; 4 runs re-made: generator fell behind ×2, another lbbench run on the host ×1, host steal ×1)\n"},
	} {
		var text, md bytes.Buffer
		if err := writeVerdictsText(&text, vs, tc.remade); err != nil {
			t.Fatal(err)
		}
		if err := writeComparisonMarkdown(&md, "main vs pr", vs, tc.remade); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "\n"+tc.text) {
			t.Errorf("remade %v: text lacks %q:\n%s", tc.remade, tc.text, text.String())
		}
		if !strings.Contains(md.String(), "\n"+tc.md) {
			t.Errorf("remade %v: markdown lacks %q:\n%s", tc.remade, tc.md, md.String())
		}
	}
}

func TestWriteBench(t *testing.T) {
	runs := []results.Run{resultstest.Run("a", 1, 0), resultstest.Run("a", 1.1, 10), resultstest.Run("a", 9, 0)}
	runs[2].Valid = false
	var b bytes.Buffer
	if err := writeBench(&b, "variant=least conn", runs); err != nil {
		t.Fatal(err)
	}
	// The Go benchmark format: name, iterations, then value-unit pairs.
	sc := bufio.NewScanner(&b)
	lines := 0
	for sc.Scan() {
		lines++
		f := strings.Fields(sc.Text())
		if len(f) != 2+2*4 || f[0] != "BenchmarkLB/variant=least_conn" || f[1] != "1" {
			t.Fatalf("line %q", sc.Text())
		}
		units := map[string]float64{}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				t.Fatalf("value %q: %v", f[i], err)
			}
			units[f[i+1]] = v
		}
		r := runs[lines-1]
		if _, ok := units["req/s"]; ok {
			t.Errorf("line %d: req/s, the offered schedule, is not a measurement", lines)
		}
		if units["p99-ns"] != float64(r.Latency.Quantile(0.99)) || units["error-ratio"] != float64(r.Errors)/1000 {
			t.Errorf("line %d: %v", lines, units)
		}
	}
	if lines != 2 {
		t.Errorf("%d lines, want one per valid run (2)", lines)
	}
}
