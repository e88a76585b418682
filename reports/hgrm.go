package reports

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/results"
)

// Defaults for WriteHgrm.
const (
	// DefaultUnitRatio divides the histograms' microseconds into
	// milliseconds, the unit HdrHistogram's plotters expect by convention.
	DefaultUnitRatio = 1000.0
	// DefaultTicksPerHalfDistance is the number of percentile rows per
	// halving of the distance to 100%, as in HdrHistogram's own tools.
	DefaultTicksPerHalfDistance = 5
)

// WriteHgrm writes h as an HdrHistogram "percentile distribution" text
// (the .hgrm format HdrHistogram's plotters read): a header, one row per
// percentile step with the value, the percentile (0 to 1), the count of
// values at or below the value and 1/(1-percentile), then a footer with
// mean, standard deviation, max and total count. Values are h's
// microseconds divided by unitRatio; zero means DefaultUnitRatio
// (milliseconds).
//
// The steps are HdrHistogram's (DefaultTicksPerHalfDistance rows per
// halving of the distance to 100%), plus the headline percentiles p50,
// p90, p99, p99.9, p99.99 and p99.999 wherever the count resolves them.
// Each row's value is exactly h's value at the row's percentile, so the
// file reads back to the same percentiles.
func WriteHgrm(w io.Writer, h *results.Histogram, unitRatio float64) error {
	if unitRatio == 0 {
		unitRatio = DefaultUnitRatio
	}
	if unitRatio < 0 || math.IsNaN(unitRatio) || math.IsInf(unitRatio, 0) {
		return fmt.Errorf("reports: unit ratio must be > 0, got %g", unitRatio)
	}
	if h == nil || h.Histogram == nil {
		h = results.NewHistogram()
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	if n := h.TotalCount(); n > 0 {
		// cum[i] counts values up to bars[i].To, for TotalCount.
		bars := h.Distribution()
		cum := make([]int64, len(bars))
		var c int64
		for i, b := range bars {
			c += b.Count
			cum[i] = c
		}
		countTo := func(v int64) int64 {
			i, _ := slices.BinarySearchFunc(bars, v, func(b hdrhistogram.Bar, v int64) int { return cmp.Compare(b.To, v) })
			if i == len(bars) {
				return n
			}
			return cum[i]
		}
		max := h.Max()
		for _, p := range hgrmPercentiles(n) {
			v := h.ValueAtQuantile(100 * p)
			if p == 1 {
				fmt.Fprintf(bw, "%12.3f %1.12f %10d\n", float64(max)/unitRatio, 1.0, n)
				break
			}
			fmt.Fprintf(bw, "%12.3f %1.12f %10d %14.2f\n", float64(v)/unitRatio, p, countTo(v), 1/(1-p))
		}
	}
	fmt.Fprintf(bw, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n#[Max     = %12.3f, Total count    = %12d]\n",
		h.Mean()/unitRatio, h.StdDev()/unitRatio, float64(h.Max())/unitRatio, h.TotalCount())
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: write hgrm: %w", err)
	}
	return nil
}

// hgrmPercentiles lists the rows of a distribution of n values, from 0 to
// 1: HdrHistogram's steps, which halve their size each time the distance
// to 100% halves, merged with the headline percentiles, up to the last
// percentile n values resolve (1/(1-p) <= n), then 1.
func hgrmPercentiles(n int64) []float64 {
	var ps []float64
	limit := 1 - 1/float64(n)
	for pct := 0.0; pct/100 <= limit && pct < 100; {
		ps = append(ps, pct/100)
		half := math.Exp2(math.Floor(math.Log2(100/(100-pct))) + 1)
		pct += 100 / (DefaultTicksPerHalfDistance * half)
	}
	for _, m := range hdrMarks {
		if m.P <= limit*(1+1e-12) && !slices.Contains(ps, m.P) {
			ps = append(ps, m.P)
		}
	}
	slices.Sort(ps)
	return append(ps, 1)
}

// Hgrm is a parsed percentile distribution.
type Hgrm struct {
	// Rows are the distribution's rows in file order.
	Rows []HgrmRow
	// Mean, StdDev and Max are from the footer, in the file's unit.
	Mean, StdDev, Max float64
	// TotalCount is the footer's count of recorded values.
	TotalCount int64
}

// HgrmRow is one row of a percentile distribution.
type HgrmRow struct {
	// Value is the highest value at this percentile, in the file's unit.
	Value float64
	// Percentile is from 0 to 1.
	Percentile float64
	// TotalCount is the number of values at or below Value.
	TotalCount int64
}

// ValueAt returns the value of the first row whose percentile is at least
// p (0 to 1), or the last row's value; false when there are no rows.
func (d *Hgrm) ValueAt(p float64) (float64, bool) {
	if len(d.Rows) == 0 {
		return 0, false
	}
	for _, r := range d.Rows {
		if r.Percentile >= p {
			return r.Value, true
		}
	}
	return d.Rows[len(d.Rows)-1].Value, true
}

// ParseHgrm reads a percentile distribution written by WriteHgrm or by
// HdrHistogram's outputPercentileDistribution in other languages. It accepts
// rows with or without the 1/(1-percentile) column and ignores the header.
func ParseHgrm(r io.Reader) (*Hgrm, error) {
	d := &Hgrm{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, "#["):
			if err := parseHgrmFooter(d, text); err != nil {
				return nil, fmt.Errorf("reports: hgrm line %d: %w", line, err)
			}
			continue
		case strings.HasPrefix(text, "Value"):
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 && len(f) != 4 {
			return nil, fmt.Errorf("reports: hgrm line %d: want 3 or 4 fields, got %d", line, len(f))
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		n, err3 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("reports: hgrm line %d: %w", line, err)
		}
		if math.IsNaN(v) || math.IsNaN(p) || p < 0 || p > 1 || n < 0 {
			return nil, fmt.Errorf("reports: hgrm line %d: value %g, percentile %g or count %d out of range", line, v, p, n)
		}
		if k := len(d.Rows); k > 0 && (p < d.Rows[k-1].Percentile || n < d.Rows[k-1].TotalCount) {
			return nil, fmt.Errorf("reports: hgrm line %d: percentiles and counts must not decrease", line)
		}
		d.Rows = append(d.Rows, HgrmRow{Value: v, Percentile: p, TotalCount: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reports: read hgrm: %w", err)
	}
	return d, nil
}

// parseHgrmFooter reads lines like "#[Mean    =        2.113, StdDeviation   =        5.212]".
func parseHgrmFooter(d *Hgrm, text string) error {
	body := strings.TrimSuffix(strings.TrimPrefix(text, "#["), "]")
	for part := range strings.SplitSeq(body, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var err error
		switch k {
		case "Mean":
			d.Mean, err = strconv.ParseFloat(v, 64)
		case "StdDeviation":
			d.StdDev, err = strconv.ParseFloat(v, 64)
		case "Max":
			d.Max, err = strconv.ParseFloat(v, 64)
		case "Total count":
			d.TotalCount, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return fmt.Errorf("footer %s: %w", k, err)
		}
	}
	return nil
}
