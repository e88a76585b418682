package reports

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// NanosPerValue is how many nanoseconds one unit of lbbench's histograms
// (microseconds) is; interval logs are written in nanoseconds.
const NanosPerValue = 1000

// writeIntervalLog writes run's interval histograms as an HdrHistogram
// interval log (format 1.3, the .hlog files HdrHistogram's log processors
// and HistogramLogAnalyzer read); s is the scenario run ran in. The start
// and base time are the start of the measured window, written as Java's
// HistogramLogWriter writes them (seconds with milliseconds); each line
// is an interval's start and length in seconds from it, its maximum in
// milliseconds, and its histogram in the standard compressed (V2)
// encoding.
//
// Values in the log are nanoseconds, the unit HdrHistogram's tools
// assume (their default output ratio, 1e6, then prints milliseconds):
// each interval histogram is rescaled with Nanos.
func writeIntervalLog(w io.Writer, run results.Run, s scenario.Scenario) error {
	start := run.Started.Add(s.Workload.WarmupTime())
	ms := start.UnixMilli()
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "#[Histogram log format version %s]\n", hdrhistogram.HISTOGRAM_LOG_FORMAT_VERSION)
	fmt.Fprintf(bw, "#[lbbench run %s, variant %s, rep %d; values in nanoseconds]\n", oneLine(run.ID), oneLine(run.Variant), run.Rep)
	fmt.Fprintf(bw, "#[StartTime: %.3f (seconds since epoch), %s]\n", float64(ms)/1000, time.UnixMilli(ms).UTC().Format("Mon Jan 02 15:04:05 MST 2006"))
	fmt.Fprintf(bw, "#[BaseTime: %.3f (seconds since epoch)]\n", float64(ms)/1000)
	bw.WriteString(`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"` + "\n")
	for _, iv := range run.Intervals {
		h, err := iv.Histogram()
		if err != nil {
			return fmt.Errorf("reports: %s: interval at %s: %w", run.ID, iv.Start, err)
		}
		ns, err := Nanos(h)
		if err != nil {
			return fmt.Errorf("reports: %s: interval at %s: %w", run.ID, iv.Start, err)
		}
		enc, err := ns.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fmt.Errorf("reports: %s: interval at %s: %w", run.ID, iv.Start, err)
		}
		fmt.Fprintf(bw, "%.3f,%.3f,%.3f,%s\n", iv.Start.Seconds(), iv.Length.Seconds(),
			float64(ns.Max())/1e6, enc)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: write interval log: %w", err)
	}
	return nil
}

// Nanos rescales h (microseconds) to a histogram of nanoseconds with the
// same significant digits, for tools that assume nanoseconds: each
// recorded microsecond range [a, b] is recorded at b×1000 ns, so
// percentiles read from it are never below lbbench's own.
func Nanos(h *results.Histogram) (*hdrhistogram.Histogram, error) {
	ns := hdrhistogram.New(1, results.HistHighest*NanosPerValue, results.HistDigits)
	if h == nil || h.Histogram == nil {
		return ns, nil
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		if err := ns.RecordValues(b.To*NanosPerValue, b.Count); err != nil {
			return nil, fmt.Errorf("rescale to nanoseconds: %w", err)
		}
	}
	return ns, nil
}

// oneLine keeps a log comment on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
