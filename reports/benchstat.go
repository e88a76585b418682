package reports

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

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
//	BenchmarkLB/variant=least_conn 1 2345000 p50-ns 12345000 p99-ns ... 950.1 req/s 0 error-ratio
//
// name labels the lines (the variant; spaces become underscores). Give the
// two sides of a comparison the same names, in two files, and
// `benchstat base.txt cand.txt` compares them.
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
		for _, m := range metrics {
			v, ok := m.value(r)
			if !ok || math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(v, 'f', -1, 64), m.benchUnit)
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}
