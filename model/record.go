package model

import (
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// recorder fills a results.Measurement from simulated responses, as the
// generator's recorder does from real ones: measured requests are those
// due at or after the warm-up, latency runs from the intended send time,
// uncorrected latency from when the request got a connection, and the
// send lag is zero (the model sends every request on time).
type recorder struct {
	warmup  int64
	timeout int64
	ivLen   int64 // interval length, a whole number of results.IntervalLength; 0: keep no intervals
	m       results.Measurement
	clients []int    // stream -> index in m.Clients, or -1
	workers []uint64 // measured responses per worker; m.ByWorker at the end
	steps   []int64

	// Exact sums for Stats, in nanoseconds.
	sumLatency, sumWait, sumService float64
	count                           uint64

	// The open interval, by completion time since the window's start.
	iv                   *results.Histogram
	ivIndex              int
	ivRequests, ivErrors uint64
	ivErr                error
}

func newRecorder(spec workloads.Spec, streams []streamSpec, workers int) *recorder {
	r := &recorder{
		workers: make([]uint64, workers),
		warmup:  int64(spec.WarmupTime()),
		timeout: int64(spec.Timeout),
		ivLen:   int64(intervalLength(spec.Duration)),
		iv:      results.NewHistogram(),
		ivIndex: -1,
	}
	r.m = results.Measurement{
		Duration:     spec.Duration,
		Latency:      results.NewHistogram(),
		Uncorrected:  results.NewHistogram(),
		SendLag:      results.NewHistogram(),
		ErrorLatency: results.NewHistogram(),
		ByWorker:     map[int]uint64{},
	}
	for _, c := range spec.Classes {
		r.m.Classes = append(r.m.Classes, results.Class{Name: c.Name, Latency: results.NewHistogram()})
	}
	for _, s := range streams {
		idx := -1
		if s.name != "" {
			idx = len(r.m.Clients)
			r.m.Clients = append(r.m.Clients, results.Client{Name: s.name, Share: s.share, Latency: results.NewHistogram()})
		}
		r.clients = append(r.clients, idx)
	}
	if spec.Arrival.Kind == workloads.Steps {
		start := time.Duration(0)
		for _, s := range spec.Arrival.Steps {
			r.m.Steps = append(r.m.Steps, results.Step{RatePerSec: s.RatePerSec, Start: start, Duration: s.Duration, Latency: results.NewHistogram()})
			r.steps = append(r.steps, int64(start))
			start += s.Duration
		}
	}
	return r
}

// record records request q, completed at e.now.
func (r *recorder) record(e *engine, q *request) {
	if q.intended < r.warmup {
		r.m.WarmupRequests++
		return
	}
	latency := e.now - q.intended
	lat, uncorr := durationNs(latency), durationNs(e.now-q.wire)
	failed := r.timeout > 0 && latency > r.timeout

	m := &r.m
	m.Requests++
	m.Latency.RecordDuration(lat)
	m.Uncorrected.RecordDuration(uncorr)
	m.SendLag.RecordDuration(0)
	if failed {
		// The model lets the request finish; a real client would have
		// given up at the timeout and counted an error.
		m.Errors++
		if m.ErrorKinds == nil {
			m.ErrorKinds = map[string]uint64{}
		}
		m.ErrorKinds["timeout"]++
		m.ErrorLatency.RecordDuration(lat)
	}
	c := &m.Classes[q.class]
	count(&c.Requests, &c.Errors, c.Latency, lat, failed)
	if i := r.clients[q.stream]; i >= 0 {
		cl := &m.Clients[i]
		count(&cl.Requests, &cl.Errors, cl.Latency, lat, failed)
	}
	if len(r.steps) > 0 {
		at := q.intended - r.warmup
		i := 0
		for i < len(r.steps)-1 && at >= r.steps[i+1] {
			i++
		}
		s := &m.Steps[i]
		count(&s.Requests, &s.Errors, s.Latency, lat, failed)
	}
	r.workers[q.worker]++
	r.interval(e.now-r.warmup, lat, failed)

	r.count++
	r.sumLatency += float64(latency)
	r.sumWait += float64(q.start - q.intended)
	r.sumService += float64(q.service)
}

func count(requests, errors *uint64, h *results.Histogram, d time.Duration, failed bool) {
	*requests++
	h.RecordDuration(d)
	if failed {
		*errors++
	}
}

// MaxIntervals bounds the interval histograms of one simulated run: a run
// longer than MaxIntervals·results.IntervalLength gets intervals of a
// whole number of seconds, so that a long simulated run (an hour in a few
// seconds) does not spend its time encoding thousands of histograms.
const MaxIntervals = 300

// intervalLength is the interval length of a run whose measured window
// lasts d: results.IntervalLength, or a multiple of it for long runs.
func intervalLength(d time.Duration) time.Duration {
	n := (d + MaxIntervals*results.IntervalLength - 1) / (MaxIntervals * results.IntervalLength)
	return max(n, 1) * results.IntervalLength
}

// interval records a response completed at done (since the window's start)
// in its interval. Events run in time order, so completions arrive in
// order.
func (r *recorder) interval(done int64, latency time.Duration, failed bool) {
	if r.ivLen == 0 {
		return
	}
	i := max(int(done/r.ivLen), 0)
	if i > r.ivIndex {
		r.closeInterval()
		r.ivIndex = i
	}
	r.iv.RecordDuration(latency)
	r.ivRequests++
	if failed {
		r.ivErrors++
	}
}

func (r *recorder) closeInterval() {
	if r.ivIndex < 0 || r.ivRequests == 0 {
		return
	}
	b, err := r.iv.MarshalJSON()
	if err != nil {
		if r.ivErr == nil {
			r.ivErr = err
		}
	} else {
		r.m.Intervals = append(r.m.Intervals, results.Interval{
			Start:    time.Duration(int64(r.ivIndex) * r.ivLen),
			Length:   time.Duration(r.ivLen),
			Requests: r.ivRequests,
			Errors:   r.ivErrors,
			Latency:  string(b[1 : len(b)-1]), // the JSON string without its quotes
			P99:      r.iv.Quantile(0.99),
		})
	}
	r.iv.Reset()
	r.ivRequests, r.ivErrors = 0, 0
}

// finish closes the open interval and fills the rates and summaries.
func (r *recorder) finish() (*results.Measurement, error) {
	r.closeInterval()
	if r.ivErr != nil {
		return nil, r.ivErr
	}
	m := &r.m
	for i, n := range r.workers {
		if n > 0 {
			m.ByWorker[i] = n
		}
	}
	if m.Requests > 0 {
		// The model sends every request at its intended time.
		m.IntendedRate = float64(m.Requests) / m.Duration.Seconds()
		m.AchievedRate = m.IntendedRate
	}
	for i := range m.Classes {
		m.Classes[i].Summary = m.Classes[i].Latency.Summarize()
	}
	for i := range m.Clients {
		m.Clients[i].Summary = m.Clients[i].Latency.Summarize()
	}
	for i := range m.Steps {
		m.Steps[i].Summary = m.Steps[i].Latency.Summarize()
	}
	return m, nil
}

func durationNs(ns int64) time.Duration { return time.Duration(ns) }
