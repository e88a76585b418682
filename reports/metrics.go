package reports

import (
	"strconv"
	"time"

	"github.com/lbbench/lbbench/results"
)

// Metric names Compare knows.
const (
	MetricP50        = "p50"
	MetricP99        = "p99"
	MetricP999       = "p99.9"
	MetricThroughput = "throughput"
	MetricErrorRate  = "error_rate"
)

// metric describes how a per-run figure is compared.
type metric struct {
	name string
	// higherIsWorse: latency and error rate; throughput is the other way.
	higherIsWorse bool
	// absolute compares the difference of medians (error rate, often 0)
	// rather than their ratio; the tolerance is then absolute too.
	absolute bool
	// benchUnit is the unit of the metric in Go benchmark lines; empty
	// leaves it out of them.
	benchUnit string
	value     func(r *results.Run) (float64, bool)
}

func quantileMetric(name string, q float64, unit string) metric {
	return metric{name: name, higherIsWorse: true, benchUnit: unit, value: func(r *results.Run) (float64, bool) {
		if r.Latency == nil || r.Latency.Histogram == nil || r.Latency.TotalCount() == 0 {
			return 0, false
		}
		return float64(r.Latency.Quantile(q)), true
	}}
}

var metrics = []metric{
	quantileMetric(MetricP50, 0.50, "p50-ns"),
	quantileMetric(MetricP99, 0.99, "p99-ns"),
	quantileMetric(MetricP999, 0.999, "p99.9-ns"),
	// Throughput is the seeded schedule's rate less errors: identical in
	// every valid run, so not written for benchstat.
	{name: MetricThroughput, value: func(r *results.Run) (float64, bool) {
		if r.Duration <= 0 || r.Errors > r.Requests {
			return 0, false
		}
		return float64(r.Requests-r.Errors) / r.Duration.Seconds(), true
	}},
	{name: MetricErrorRate, higherIsWorse: true, absolute: true, benchUnit: "error-ratio", value: func(r *results.Run) (float64, bool) {
		if r.Requests == 0 {
			return 0, false
		}
		return float64(r.Errors) / float64(r.Requests), true
	}},
}

func lookupMetric(name string) (metric, bool) {
	for _, m := range metrics {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// Metrics returns the names of every metric Compare knows, in report
// order.
func Metrics() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return names
}

// MetricValue returns run r's value of the named metric: latency
// percentiles (from the run's corrected-latency histogram) in nanoseconds,
// throughput in successful requests per second of the measured window, the
// error rate as a fraction of requests. ok is false for an unknown metric
// or a run without the data.
func MetricValue(r *results.Run, name string) (v float64, ok bool) {
	m, found := lookupMetric(name)
	if !found {
		return 0, false
	}
	return m.value(r)
}

// badness maps a ratio or difference to how much worse the candidate is:
// +0.2 is 20% worse (or 0.2 more error rate), negative is better.
func (m metric) badness(x float64) float64 {
	switch {
	case m.absolute:
		return x
	case m.higherIsWorse:
		return x - 1
	default:
		return 1 - x
	}
}

// badInterval is the interval of badness for an interval of the estimate.
func (m metric) badInterval(ci Interval) Interval {
	a, b := m.badness(ci.Low), m.badness(ci.High)
	return Interval{min(a, b), max(a, b)}
}

func tolString(m metric, tol float64) string {
	if m.absolute {
		return strconv.FormatFloat(100*tol, 'g', 3, 64) + " pt"
	}
	return strconv.FormatFloat(100*tol, 'g', 3, 64) + "%"
}

func metricString(m metric, v float64) string {
	switch {
	case m.absolute:
		return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
	case m.name == MetricThroughput:
		return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
	}
	return Dur(time.Duration(v))
}
