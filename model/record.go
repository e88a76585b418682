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
	m       results.Measurement
	clients []int    // stream -> index in m.Clients, or -1
	workers []uint64 // measured responses per worker; m.ByWorker at the end

	// Exact sums for Stats, in nanoseconds.
	sumLatency, sumWait, sumService float64
	count                           uint64

	// Latency by completion time since the window's start, in intervals
	// of intervalLength.
	intervals *results.IntervalRecorder
}

func newRecorder(spec workloads.Spec, streams []workloads.Stream, workers int) *recorder {
	r := &recorder{
		workers:   make([]uint64, workers),
		warmup:    int64(spec.WarmupTime()),
		timeout:   int64(spec.Timeout),
		m:         results.NewMeasurement(spec),
		intervals: results.NewIntervalRecorder(intervalLength(spec.Duration)),
	}
	for _, s := range streams {
		idx := -1
		if s.Name != "" {
			idx = len(r.m.Clients)
			r.m.Clients = append(r.m.Clients, results.Client{Name: s.Name, Share: s.Share, Latency: results.NewHistogram()})
		}
		r.clients = append(r.clients, idx)
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

	// The model lets a request that failed finish; a real client would
	// have given up at the timeout and counted an error.
	sample := results.Sample{
		Scheduled: durationNs(q.intended - r.warmup),
		Latency:   lat, Uncorrected: uncorr, // the send lag is zero
		Failed: failed, Class: int(q.class), Client: r.clients[q.stream],
	}
	if failed {
		sample.ErrorKind = "timeout"
	}
	r.m.Record(sample)
	r.workers[q.worker]++
	// Events run in time order, so completions arrive in order.
	r.intervals.Record(durationNs(e.now-r.warmup), lat, failed)

	r.count++
	r.sumLatency += float64(latency)
	r.sumWait += float64(q.start - q.intended)
	r.sumService += float64(q.service)
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

// finish closes the open interval and fills the rates and summaries.
func (r *recorder) finish() (*results.Measurement, error) {
	ivs, err := r.intervals.Finish()
	if err != nil {
		return nil, err
	}
	m := &r.m
	m.Intervals = ivs
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
	m.Summarize()
	return m, nil
}

func durationNs(ns int64) time.Duration { return time.Duration(ns) }
