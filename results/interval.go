package results

import "time"

// IntervalRecorder keeps the latency of a stream's requests by completion
// time in intervals of a fixed length from the start of the measured
// window, each encoded (EncodeInterval) as soon as it closes, so that memory
// does not grow with run length. The generator's recorder (package harness)
// and the simulator's (package model) both record through it.
//
// Requests are expected in about completion order: one that completes in a
// later interval closes the open one, and one that arrives after its
// interval was closed goes into the open one. Record does not allocate;
// closing an interval allocates its encoding. An IntervalRecorder is not
// safe for concurrent use: each stream has its own, merged afterwards
// (Measurement.Merge).
type IntervalRecorder struct {
	length time.Duration // 0: keep none

	h                *Histogram // the open interval
	index            int        // the open interval's index, -1 before the first
	requests, errors uint64
	intervals        []Interval
	err              error
}

// NewIntervalRecorder returns an empty recorder of intervals of the given
// length (IntervalLength for measured runs). A length <= 0 keeps no
// intervals: Record does nothing and Finish returns none.
func NewIntervalRecorder(length time.Duration) *IntervalRecorder {
	r := &IntervalRecorder{length: max(length, 0), index: -1}
	if r.length > 0 {
		r.h = NewHistogram()
	}
	return r
}

// Length is the recorder's interval length; 0 when it keeps none.
func (r *IntervalRecorder) Length() time.Duration { return r.length }

// Record records a request that completed at done (since the start of the
// measured window; a negative done counts in the first interval) after
// latency, failed or not.
func (r *IntervalRecorder) Record(done, latency time.Duration, failed bool) {
	if r.length == 0 {
		return
	}
	i := max(int(done/r.length), 0)
	if i > r.index {
		r.close()
		r.index = i
	}
	r.h.RecordDuration(latency)
	r.requests++
	if failed {
		r.errors++
	}
}

// close encodes the open interval, unless it is empty, and empties it.
func (r *IntervalRecorder) close() {
	if r.index < 0 || r.requests == 0 {
		return
	}
	iv, err := EncodeInterval(time.Duration(r.index)*r.length, r.length, r.h, r.requests, r.errors)
	if err != nil {
		if r.err == nil {
			r.err = err
		}
	} else {
		r.intervals = append(r.intervals, iv)
	}
	r.h.Reset()
	r.requests, r.errors = 0, 0
}

// Finish closes the open interval and returns the intervals that had
// requests, by start, or the first encoding error. Call it once, after the
// last Record.
func (r *IntervalRecorder) Finish() ([]Interval, error) {
	r.close()
	if r.err != nil {
		return nil, r.err
	}
	return r.intervals, nil
}
