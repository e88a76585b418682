package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/results"
)

// Defaults for writeHistogramHgrm.
const (
	// DefaultUnitRatio divides the histograms' microseconds into
	// milliseconds, the unit HdrHistogram's plotters expect by convention.
	DefaultUnitRatio = 1000.0
	// defaultTicksPerHalfDistance is the number of percentile rows per
	// halving of the distance to 100%, as in HdrHistogram's own tools
	// (outputPercentileDistribution's default).
	defaultTicksPerHalfDistance = 5
)

// writeHistogramHgrm writes h as an HdrHistogram "percentile distribution" text
// (the .hgrm format HdrHistogram's plotters read), exactly as
// HdrHistogram's outputPercentileDistribution writes it with
// defaultTicksPerHalfDistance ticks: a header, one row per percentile
// tick with the value, the percentile (0 to 1), the count of values at or
// below the value and 1/(1-percentile), a last row at 100%, then a footer
// with mean, standard deviation, max, total count, buckets and
// sub-buckets. Values are h's values divided by unitRatio, printed with as
// many decimals as h has significant digits; zero means DefaultUnitRatio
// (milliseconds from lbbench's microseconds).
//
// The rows are HdrHistogram's percentile iteration: each tick is reached
// at the first recorded value whose cumulative count reaches it, the row
// shows that value's highest equivalent value and cumulative count, and
// several ticks can share a value. Numbers are rounded as Java's
// Formatter does (half up on the shortest decimal form), so the file is
// byte for byte what Java's HistogramLogProcessor prints for the same
// histogram and ratio.
func writeHistogramHgrm(w io.Writer, h *results.Histogram, unitRatio float64) error {
	if unitRatio == 0 {
		unitRatio = DefaultUnitRatio
	}
	if unitRatio < 0 || math.IsNaN(unitRatio) || math.IsInf(unitRatio, 0) {
		return fmt.Errorf("reports: unit ratio must be > 0, got %g", unitRatio)
	}
	if h == nil || h.Histogram == nil {
		h = results.NewHistogram()
	}
	return writeHgrm(w, h.Histogram, unitRatio)
}

// WriteHgrmOf is writeHistogramHgrm for any HdrHistogram (for example one of
// nanoseconds from Nanos): values are h's, in its own unit, divided by
// unitRatio, which must be > 0.
func WriteHgrmOf(w io.Writer, h *hdrhistogram.Histogram, unitRatio float64) error {
	if unitRatio <= 0 || math.IsNaN(unitRatio) || math.IsInf(unitRatio, 0) {
		return fmt.Errorf("reports: unit ratio must be > 0, got %g", unitRatio)
	}
	return writeHgrm(w, h, unitRatio)
}

// writeHgrm is writeHistogramHgrm for any HdrHistogram, in its own unit.
func writeHgrm(w io.Writer, h *hdrhistogram.Histogram, unitRatio float64) error {
	digits := int(h.SignificantFigures())
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	n := h.TotalCount()
	row := func(v int64, level float64, count int64) {
		p := level / 100
		fmt.Fprintf(bw, "%12s %2s %10d", javaFixed(float64(v)/unitRatio, digits), javaFixed(p, 12), count)
		if level != 100 {
			fmt.Fprintf(bw, " %14s", javaFixed(1/(1-p), 2))
		}
		bw.WriteByte('\n')
	}
	var mean, std float64
	if n > 0 {
		var bars []hdrhistogram.Bar
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				bars = append(bars, b)
			}
		}
		// The percentile iteration: level is the next tick; a recorded
		// value reaches every tick up to its cumulative percentile, but the
		// value that completes the count reaches only one, then 100%.
		level := 0.0
		var cum int64
	iterate:
		for _, b := range bars {
			cum += b.Count
			for 100*float64(cum)/float64(n) >= level {
				row(b.To, level, cum)
				ticks := int64(defaultTicksPerHalfDistance) * int64(math.Pow(2, float64(int64(math.Log(100/(100-level))/math.Log(2))+1)))
				level += 100 / float64(ticks)
				if cum == n {
					break iterate
				}
			}
		}
		row(bars[len(bars)-1].To, 100, n)
		// Mean and standard deviation over each value's median equivalent
		// value, summed in the order and precision HdrHistogram uses.
		var total float64
		for _, b := range bars {
			total += float64(medianEquivalent(b)) * float64(b.Count)
		}
		mean = total / float64(n)
		var dev2 float64
		for _, b := range bars {
			d := float64(medianEquivalent(b)) - mean
			dev2 += d * d * float64(b.Count)
		}
		std = math.Sqrt(dev2 / float64(n))
	}
	fmt.Fprintf(bw, "#[Mean    = %12s, StdDeviation   = %12s]\n", javaFixed(mean/unitRatio, digits), javaFixed(std/unitRatio, digits))
	fmt.Fprintf(bw, "#[Max     = %12s, Total count    = %12d]\n", javaFixed(float64(h.Max())/unitRatio, digits), n)
	buckets, subBuckets := hdrLayout(h)
	fmt.Fprintf(bw, "#[Buckets = %12d, SubBuckets     = %12d]\n", buckets, subBuckets)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: write hgrm: %w", err)
	}
	return nil
}

// medianEquivalent is the middle of a bar's range of equivalent values, as
// HdrHistogram's medianEquivalentValue.
func medianEquivalent(b hdrhistogram.Bar) int64 {
	return b.From + (b.To-b.From+1)>>1
}

// hdrLayout returns the number of buckets and of sub-buckets per bucket of
// h, computed from its configuration as HdrHistogram does.
func hdrLayout(h *hdrhistogram.Histogram) (buckets, subBuckets int64) {
	largest := 2 * math.Pow10(int(h.SignificantFigures()))
	subBuckets = int64(1) << int64(math.Ceil(math.Log(largest)/math.Log(2)))
	unitMagnitude := int64(math.Floor(math.Log(float64(h.LowestTrackableValue())) / math.Log(2)))
	untrackable := subBuckets << unitMagnitude
	buckets = 1
	for untrackable <= h.HighestTrackableValue() {
		if untrackable > math.MaxInt64/2 {
			return buckets + 1, subBuckets
		}
		untrackable <<= 1
		buckets++
	}
	return buckets, subBuckets
}

// javaFixed formats x with prec decimals as Java's Formatter does for
// "%.{prec}f": the shortest decimal form of x rounded half up (Go's
// formatting rounds the exact binary value instead, which differs on
// ties such as 1.2345).
func javaFixed(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		if math.IsNaN(x) {
			return "NaN"
		}
		if x > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	neg := math.Signbit(x) && x != 0
	if neg {
		x = -x
	}
	// Shortest digits d1d2... and exponent: x = 0.d1d2... × 10^exp.
	mant, expStr, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
	e, _ := strconv.Atoi(expStr)
	digits := []byte(strings.Replace(mant, ".", "", 1))
	exp := e + 1
	if x == 0 {
		digits, exp = []byte{'0'}, 1
	}
	// Integer and fraction digits, padded.
	var intPart, frac []byte
	if exp > 0 {
		for len(digits) < exp {
			digits = append(digits, '0')
		}
		intPart, frac = digits[:exp], digits[exp:]
	} else {
		intPart = []byte{'0'}
		frac = append([]byte(strings.Repeat("0", -exp)), digits...)
	}
	all := append(append([]byte{}, intPart...), frac...)
	keep := len(intPart) + prec
	if len(all) > keep {
		up := all[keep] >= '5'
		all = all[:keep]
		for i := len(all) - 1; up && i >= 0; i-- {
			if all[i] == '9' {
				all[i] = '0'
				continue
			}
			all[i]++
			up = false
		}
		if up {
			all = append([]byte{'1'}, all...)
		}
	}
	for len(all) < keep {
		all = append(all, '0')
	}
	ni := len(all) - prec
	s := string(all[:ni])
	if prec > 0 {
		s += "." + string(all[ni:])
	}
	if neg {
		s = "-" + s
	}
	return s
}

// parsedHgrm is a parsed percentile distribution.
type parsedHgrm struct {
	// Rows are the distribution's rows in file order.
	Rows []hgrmRow
	// Mean, StdDev and Max are from the footer, in the file's unit.
	Mean, StdDev, Max float64
	// TotalCount is the footer's count of recorded values.
	TotalCount int64
}

// hgrmRow is one row of a percentile distribution.
type hgrmRow struct {
	// Value is the highest value at this percentile, in the file's unit.
	Value float64
	// Percentile is from 0 to 1.
	Percentile float64
	// TotalCount is the number of values at or below Value.
	TotalCount int64
}

// ValueAt returns the value of the first row whose percentile is at least
// p (0 to 1), or the last row's value; false when there are no rows.
func (d *parsedHgrm) ValueAt(p float64) (float64, bool) {
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

// parseHgrm reads a percentile distribution written by writeHistogramHgrm or by
// HdrHistogram's outputPercentileDistribution in other languages. It accepts
// rows with or without the 1/(1-percentile) column and ignores the header.
func parseHgrm(r io.Reader) (*parsedHgrm, error) {
	d := &parsedHgrm{}
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
		d.Rows = append(d.Rows, hgrmRow{Value: v, Percentile: p, TotalCount: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reports: read hgrm: %w", err)
	}
	return d, nil
}

// parseHgrmFooter reads lines like "#[Mean    =        2.113, StdDeviation   =        5.212]".
func parseHgrmFooter(d *parsedHgrm, text string) error {
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
