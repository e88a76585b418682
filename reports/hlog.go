package reports

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// WriteIntervalLog writes run's interval histograms as an HdrHistogram
// interval log (format 1.3, the .hlog files HdrHistogram's log processors
// and HistogramLogAnalyzer read); s is the scenario run ran in. The start and base time are the start of
// the measured window; each line is an interval's start and length in
// seconds from it, its maximum in milliseconds, and its histogram
// (microseconds) in the standard compressed encoding.
func WriteIntervalLog(w io.Writer, run results.Run, s scenario.Scenario) error {
	start := run.Started.Add(s.Workload.WarmupTime())
	ms := start.UnixMilli()
	bw := bufio.NewWriter(w)
	lw := hdrhistogram.NewHistogramLogWriter(bw)
	for _, err := range []error{
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("[lbbench run %s, variant %s, rep %d; values in microseconds]", oneLine(run.ID), oneLine(run.Variant), run.Rep)),
		lw.OutputStartTime(ms),
		lw.OutputBaseTime(ms),
		lw.OutputLegend(),
	} {
		if err != nil {
			return fmt.Errorf("reports: write interval log: %w", err)
		}
	}
	for _, iv := range run.Intervals {
		h, err := iv.Histogram()
		if err != nil {
			return fmt.Errorf("reports: %s: interval at %s: %w", run.ID, iv.Start, err)
		}
		// The library's writer scales the max column from nanoseconds
		// only, so the line is written here: start, length, max (ms),
		// histogram.
		fmt.Fprintf(bw, "%.3f,%.3f,%.3f,%s\n", iv.Start.Seconds(), iv.Length.Seconds(),
			float64(h.Max())/1000, iv.Latency)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: write interval log: %w", err)
	}
	return nil
}

// oneLine keeps a log comment on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
