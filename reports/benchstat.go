package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// BaseBenchFile and CandBenchFile are files a comparison writes beside
// verdicts.json: Go benchmark lines of each side (writeBench), for
// benchstat.
const (
	BaseBenchFile = "base.bench.txt"
	CandBenchFile = "cand.bench.txt"
)

// ErrOneSided is wrapped by the error of a comparison that did not write
// its benchmark files because a side of a pair has no valid run.
var ErrOneSided = errors.New("one-sided comparison")

// validRuns counts the valid runs among runs.
func validRuns(runs []results.Run) int {
	n := 0
	for i := range runs {
		if runs[i].Valid {
			n++
		}
	}
	return n
}

// benchName names a pair's lines in both benchmark files: the variant
// alone when both sides are the same variant (two builds), else the
// candidate and its baseline, so that benchstat's row says which variant
// each file's column holds ("variant=least_conn/baseline=reuseport": the
// base file's values are reuseport's).
func benchName(p compare.Pair) string {
	if p.Baseline == "" || p.Baseline == p.Variant || strings.HasPrefix(p.Baseline, p.Variant+compare.BuildSeparator) {
		return "variant=" + p.Variant
	}
	return "variant=" + p.Variant + "/baseline=" + p.Baseline
}

// twoSided returns the pairs with a valid run on both sides, and an error
// naming every other one: benchstat would show that side's column alone,
// which reads like a comparison and is none.
func twoSided(pairs []compare.Pair) ([]compare.Pair, error) {
	var missing []string
	var ok []compare.Pair
	for _, p := range pairs {
		m := len(missing)
		if validRuns(p.Base) == 0 {
			missing = append(missing, fmt.Sprintf("baseline %q of %q has no valid run (%d run(s))", p.Baseline, p.Variant, len(p.Base)))
		}
		if validRuns(p.Cand) == 0 {
			missing = append(missing, fmt.Sprintf("candidate %q has no valid run (%d run(s))", p.Variant, len(p.Cand)))
		}
		if len(missing) == m {
			ok = append(ok, p)
		}
	}
	if len(pairs) == 0 {
		missing = append(missing, "nothing to compare")
	}
	if len(missing) == 0 {
		return ok, nil
	}
	what := "not writing " + BaseBenchFile + " and " + CandBenchFile
	if len(ok) > 0 {
		what = fmt.Sprintf("%s and %s hold the %d complete pair(s) only", BaseBenchFile, CandBenchFile, len(ok))
	}
	return ok, fmt.Errorf("reports: %s (%w: benchstat would show one column alone): %s", what, ErrOneSided, strings.Join(missing, "; "))
}

// writeBench writes one Go benchmark line per valid run, so that benchstat
// reads them:
//
//	BenchmarkLB/variant=least_conn 1 2345000 p50-ns 12345000 p99-ns 23456000 p99.9-ns 0 error-ratio
//
// Only measured figures are written: the request rate is the seeded
// offered schedule, the same in every run, and is left out. name labels
// the lines after "BenchmarkLB/" (spaces become underscores): give the two
// sides of a comparison the same name, in two files, and
// `benchstat base.txt cand.txt` compares them (see benchName).
func writeBench(w io.Writer, name string, runs []results.Run) error {
	label := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, name)
	var b bytes.Buffer
	for i := range runs {
		r := &runs[i]
		if !r.Valid {
			continue
		}
		fmt.Fprintf(&b, "BenchmarkLB/%s 1", label)
		for _, m := range results.Metrics {
			if m.BenchUnit == "" {
				continue
			}
			v, ok := m.Value(r)
			if !ok || math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(v, 'f', -1, 64), m.BenchUnit)
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}
