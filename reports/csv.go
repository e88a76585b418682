package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/csvcell"
)

// csvHeader is the first row of writeCSV's output. Latencies are in
// milliseconds with microsecond resolution, rates per second.
var csvHeader = []string{
	"scope", "variant", "run", "rep", "runs", "valid_runs", "requests", "errors", "error_rate",
	"intended_rate", "achieved_rate", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms",
	"send_lag_p99_ms", "skew", "invalid",
}

// csvSteal is the column writeCSV adds, after csvHeader's, when some run
// had host steal to show (hostSteals): each run's share of its CPUs' time, in
// percent; empty in variant rows and where not measured.
const csvSteal = "host_steal_pct"

// writeCSV writes a spreadsheet-friendly summary: one row per variant
// (scope "variant": valid runs merged, as in every report) followed by one
// row per run (scope "run"), in the order they ran. Invalid runs appear
// with their reasons in the invalid column; csvSteal follows when some
// run had host steal. Text cells that a spreadsheet would read as a
// formula are escaped (package csvcell); numbers stay numbers.
func writeCSV(w io.Writer, d *Doc) error {
	r, sums := d.Results, d.Summaries
	steals, anySteal := hostSteals(r)
	cw := csv.NewWriter(w)
	header := slices.Clone(csvHeader)
	if anySteal {
		header = append(header, csvSteal)
	}
	cw.Write(csvcell.Row(header))
	for _, s := range sums {
		var intended float64
		for _, run := range r.RunsOf(s.Name) {
			if run.Valid || s.Valid == 0 {
				intended += run.IntendedRate
			}
		}
		if n := len(s.Merged); n > 0 {
			intended /= float64(n)
		}
		row := []string{
			"variant", s.Name, "", "", strconv.Itoa(s.Runs), strconv.Itoa(s.Valid),
			strconv.FormatUint(s.Requests, 10), strconv.FormatUint(s.Errors, 10), rate(s.Errors, s.Requests),
			num(intended, 2), num(s.Rate, 2),
			ms(s.Latency.Mean), ms(s.Latency.P50), ms(s.Latency.P90), ms(s.Latency.P99), ms(s.Latency.P999), ms(s.Latency.Max),
			ms(s.SendLagP99), skewCSV(s.Skew), strings.Join(s.Invalid, "; "),
		}
		if anySteal {
			row = append(row, "")
		}
		cw.Write(csvcell.Row(row))
	}
	for _, run := range r.Runs {
		valid := "0"
		if run.Valid {
			valid = "1"
		}
		var lag time.Duration
		if run.SendLag != nil && run.SendLag.Histogram != nil {
			lag = run.SendLag.Quantile(0.99)
		}
		row := []string{
			"run", run.Variant, run.ID, strconv.Itoa(run.Rep), "1", valid,
			strconv.FormatUint(run.Requests, 10), strconv.FormatUint(run.Errors, 10), rate(run.Errors, run.Requests),
			num(run.IntendedRate, 2), num(run.AchievedRate, 2),
			ms(run.Summary.Mean), ms(run.Summary.P50), ms(run.Summary.P90), ms(run.Summary.P99), ms(run.Summary.P999), ms(run.Summary.Max),
			ms(lag), skewCSV(run.Skew()), strings.Join(run.Invalid, "; "),
		}
		if anySteal {
			cell := ""
			if st, ok := steals[run.ID]; ok {
				cell = num(100*st.Share, 3)
			}
			row = append(row, cell)
		}
		cw.Write(csvcell.Row(row))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("reports: write csv: %w", err)
	}
	return nil
}

// ms formats d in milliseconds with microsecond resolution.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)
}

func num(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func rate(errs, reqs uint64) string {
	if reqs == 0 {
		return "0"
	}
	return strconv.FormatFloat(float64(errs)/float64(reqs), 'g', 6, 64)
}

// skewCSV is a skew a spreadsheet parses: "inf" when a worker got nothing,
// empty when unknown.
func skewCSV(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsNaN(x) || x == 0:
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}
