package reports

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

func TestAnswers(t *testing.T) {
	v := func(variant, metric string, o compare.Outcome, ratio, lo, hi, tol float64, rounds int) compare.Verdict {
		return compare.Verdict{Variant: variant, Baseline: "rp", Metric: metric, Outcome: o, Ratio: ratio, CILow: lo, CIHigh: hi, Tolerance: tol, Rounds: rounds}
	}
	pct := v("lc", results.MetricP99, compare.Pass, 0.9, 0.85, 0.95, 0.1, 4)
	pct.Level = 0.9667
	tests := []struct {
		name     string
		vs       []compare.Verdict
		headline []string
		want     []answer
	}{
		{"better", []compare.Verdict{v("lc", results.MetricP99, compare.Pass, 0.525, 0.39, 0.707, 0.1, 4)}, nil,
			[]answer{{"lc: p99 0.525× rp's [0.390, 0.707], better (decided after 4 rounds)", "good"}}},
		{"no worse", []compare.Verdict{v("lc", results.MetricP99, compare.Pass, 1.02, 0.95, 1.08, 0.1, 6)}, nil,
			[]answer{{"lc: p99 1.020× rp's [0.950, 1.080], no worse (within 10%) (decided after 6 rounds)", "good"}}},
		{"worse", []compare.Verdict{v("lc", results.MetricP99, compare.Fail, 1.7, 1.4, 2.1, 0.1, 3)}, nil,
			[]answer{{"lc: p99 1.700× rp's [1.400, 2.100], worse (by more than 10%) (decided after 3 rounds)", "bad"}}},
		{"undecided", []compare.Verdict{v("lc", results.MetricP99, compare.Inconclusive, 1.05, 0.9, 1.2, 0.1, 12)}, nil,
			[]answer{{"lc: p99 1.050× rp's [0.900, 1.200], undecided after 12 rounds", ""}}},
		{"one round, unpaired", []compare.Verdict{v("lc", results.MetricP99, compare.Inconclusive, 1.05, 0.9, 1.2, 0.1, 1), v("x", results.MetricP99, compare.Pass, 0.5, 0.4, 0.6, 0.1, 0)}, nil,
			[]answer{{"lc: p99 1.050× rp's [0.900, 1.200], undecided after 1 round", ""}, {"x: p99 0.500× rp's [0.400, 0.600], better", "good"}}},
		{"level said", []compare.Verdict{pct}, nil,
			[]answer{{"lc: p99 0.900× rp's [0.850, 0.950] 96.67%, better (decided after 4 rounds)", "good"}}},
		// Higher is better: better when the whole interval is above 1.
		{"throughput", []compare.Verdict{v("lc", results.MetricThroughput, compare.Pass, 1.3, 1.1, 1.5, 0.1, 3)}, []string{results.MetricThroughput},
			[]answer{{"lc: throughput 1.300× rp's [1.100, 1.500], better (decided after 3 rounds)", "good"}}},
		{"throughput below 1 is not better", []compare.Verdict{v("lc", results.MetricThroughput, compare.Pass, 0.97, 0.93, 0.99, 0.1, 3)}, []string{results.MetricThroughput},
			[]answer{{"lc: throughput 0.970× rp's [0.930, 0.990], no worse (within 10%) (decided after 3 rounds)", "good"}}},
		// A difference is never "better": its pass says within.
		{"error rate", []compare.Verdict{v("lc", results.MetricErrorRate, compare.Pass, 0, -0.001, 0.001, 0.01, 3)}, []string{results.MetricErrorRate},
			[]answer{{"lc: error_rate against rp's, no worse (within 1 pt) (decided after 3 rounds)", "good"}}},
		// The scenario's verdict metrics are the headline, then p99,
		// then the pair's first verdict; the line reads as its worst part.
		{"headline", []compare.Verdict{
			v("lc", results.MetricP50, compare.Fail, 2.1, 1.4, 3.2, 0.1, 3),
			v("lc", results.MetricP99, compare.Pass, 0.5, 0.4, 0.6, 0.1, 3),
			v("lc", results.MetricP999, compare.Inconclusive, 1, 0.8, 1.3, 0.1, 3),
		}, []string{results.MetricP99, results.MetricP999},
			[]answer{{"lc: p99 0.500× rp's [0.400, 0.600], better (decided after 3 rounds); p99.9 1.000× rp's [0.800, 1.300], undecided after 3 rounds", ""}}},
		{"p99 without a headline", []compare.Verdict{
			v("lc", results.MetricP50, compare.Fail, 2.1, 1.4, 3.2, 0.1, 3),
			v("lc", results.MetricP99, compare.Pass, 0.5, 0.4, 0.6, 0.1, 3),
		}, nil, []answer{{"lc: p99 0.500× rp's [0.400, 0.600], better (decided after 3 rounds)", "good"}}},
		{"first without p99", []compare.Verdict{
			v("lc", results.MetricP50, compare.Fail, 2.1, 1.4, 3.2, 0.1, 3),
			v("lc", results.MetricP999, compare.Pass, 0.5, 0.4, 0.6, 0.1, 3),
		}, []string{results.MetricThroughput}, []answer{{"lc: p50 2.100× rp's [1.400, 3.200], worse (by more than 10%) (decided after 3 rounds)", "bad"}}},
		{"worst part", []compare.Verdict{
			v("lc", results.MetricP99, compare.Pass, 0.5, 0.4, 0.6, 0.1, 3),
			v("lc", results.MetricP999, compare.Fail, 1.5, 1.2, 1.9, 0.1, 3),
			v("lc", results.MetricP50, compare.Inconclusive, 1, 0.8, 1.3, 0.1, 3),
		}, []string{results.MetricP99, results.MetricP999, results.MetricP50},
			[]answer{{"lc: p99 0.500× rp's [0.400, 0.600], better (decided after 3 rounds); p99.9 1.500× rp's [1.200, 1.900], worse (by more than 10%) (decided after 3 rounds); p50 1.000× rp's [0.800, 1.300], undecided after 3 rounds", "bad"}}},
		{"none", nil, nil, []answer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := answers(tt.vs, tt.headline); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("answers:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestAnswerFirst checks that the terminal table and summary.md start
// with the answer, above the table and the verdicts' counts.
func TestAnswerFirst(t *testing.T) {
	d := docOf(t, fakeResults(), testVerdicts())
	want := answers(d.Verdicts, nil)
	if len(want) != 1 {
		t.Fatalf("fixture: %d answers, want 1", len(want))
	}
	var text bytes.Buffer
	if err := WriteText(&text, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	// The scenario's two lines, a blank one, then the answer.
	if len(lines) < 7 || lines[3] != "answer:" || lines[4] != "  "+want[0].Text || !strings.HasPrefix(strings.TrimSpace(lines[6]), "variant") {
		t.Errorf("the text does not start with the answer:\n%s", text.String())
	}
	var md bytes.Buffer
	if err := writeMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	a, v := strings.Index(md.String(), "- **"+mdEscape(want[0].Text)+"**"), strings.Index(md.String(), "**Verdicts:")
	if a < 0 || v < 0 || a > v {
		t.Errorf("summary.md: answer at %d, verdicts' counts at %d, want the answer first:\n%s", a, v, md.String())
	}
}
