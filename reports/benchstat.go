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
// verdicts.json: Go benchmark lines of each side (WriteBench), for
// benchstat.
const (
	BaseBenchFile = "base.bench.txt"
	CandBenchFile = "cand.bench.txt"
)

// WriteBench writes one Go benchmark line per valid run, so that benchstat
// reads them:
//
//	BenchmarkLB/variant=least_conn 1 2345000 p50-ns 12345000 p99-ns 23456000 p99.9-ns 0 error-ratio
//
// Only measured figures are written: the request rate is the seeded
// offered schedule, the same in every run, and is left out.
// name labels the lines (the variant; spaces become underscores). Give the
// two sides of a comparison the same names, in two files, and
// `benchstat base.txt cand.txt` compares them.
// ErrOneSided is wrapped by the error of a comparison that did not write
// its benchmark files because a side of a pair has no valid run.
var ErrOneSided = errors.New("one-sided comparison")

// ValidRuns counts the valid runs among runs.
func ValidRuns(runs []results.Run) int {
	n := 0
	for i := range runs {
		if runs[i].Valid {
			n++
		}
	}
	return n
}

// checkTwoSided returns an error naming every pair with no valid run on a
// side: benchstat would show that side's column alone, which reads like a
// comparison and is none.
func checkTwoSided(pairs []compare.Pair) error {
	var missing []string
	for _, p := range pairs {
		if ValidRuns(p.Base) == 0 {
			missing = append(missing, fmt.Sprintf("baseline %q of %q has no valid run (%d run(s))", p.Baseline, p.Variant, len(p.Base)))
		}
		if ValidRuns(p.Cand) == 0 {
			missing = append(missing, fmt.Sprintf("candidate %q has no valid run (%d run(s))", p.Variant, len(p.Cand)))
		}
	}
	if len(pairs) == 0 {
		missing = append(missing, "nothing to compare")
	}
	if len(missing) > 0 {
		return fmt.Errorf("reports: not writing %s and %s (%w: benchstat would show one column alone): %s",
			BaseBenchFile, CandBenchFile, ErrOneSided, strings.Join(missing, "; "))
	}
	return nil
}

func WriteBench(w io.Writer, name string, runs []results.Run) error {
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
		fmt.Fprintf(&b, "BenchmarkLB/variant=%s 1", label)
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
