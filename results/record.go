package results

import (
	"time"

	"github.com/lbbench/lbbench/workloads"
)

// NewMeasurement returns the empty measurement of a stream offering spec
// (defaulted and valid), as the generator's and the simulator's recorders
// start it: the measured window, every histogram allocated, one Class per
// class of spec in order and, for a steps arrival, one Step per step at
// spec's rates, each starting where the one before ends.
func NewMeasurement(spec workloads.Spec) Measurement {
	m := Measurement{
		Duration:     spec.Duration,
		Latency:      NewHistogram(),
		Uncorrected:  NewHistogram(),
		SendLag:      NewHistogram(),
		ErrorLatency: NewHistogram(),
		Wait:         NewHistogram(),
		ConnWait:     NewHistogram(),
		ByWorker:     map[int]uint64{},
	}
	for _, c := range spec.Classes {
		m.Classes = append(m.Classes, Class{Name: c.Name, Latency: NewHistogram(), Wait: NewHistogram()})
	}
	if spec.Arrival.Kind == workloads.Steps {
		start := time.Duration(0)
		for _, s := range spec.Arrival.Steps {
			m.Steps = append(m.Steps, Step{RatePerSec: float64(s.RatePerSec), Start: start, Duration: s.Duration, Latency: NewHistogram()})
			start += s.Duration
		}
	}
	return m
}

// Sample is one measured request as a recorder hands it to
// Measurement.Record.
type Sample struct {
	// Scheduled is the request's intended send time since the start of the
	// measured window; it picks the step of a steps arrival.
	Scheduled time.Duration
	// Latency runs from the intended send time (the corrected latency),
	// Uncorrected from when the request went on the wire, and SendLag is
	// how late the generator handed it to its client (see Measurement).
	Latency, Uncorrected, SendLag time.Duration
	// Failed marks a failed request, of kind ErrorKind (a key of
	// Measurement.ErrorKinds).
	Failed    bool
	ErrorKind string
	// Waited says the worker stamped the answer: Wait (see Measurement)
	// is known; ConnWaited that it stamped when it accepted the
	// connection too: ConnWait is known.
	Waited, ConnWaited bool
	Wait, ConnWait     time.Duration
	// Class is the request's index in Measurement.Classes and Client its
	// named client's in Measurement.Clients; -1 (or any index out of
	// range) for none.
	Class, Client int
}

// Record counts s into m, made by NewMeasurement (and, for named clients,
// with its Clients added): the totals and their histograms, the error kind,
// and the request's class, client and, for a steps arrival, the step it was
// scheduled in. The generator's and the simulator's recorders both record
// through it. Record allocates only for an error kind it has not seen yet;
// it is not safe for concurrent use.
func (m *Measurement) Record(s Sample) {
	m.Requests++
	m.Latency.RecordDuration(s.Latency)
	m.Uncorrected.RecordDuration(s.Uncorrected)
	m.SendLag.RecordDuration(s.SendLag)
	if s.Failed {
		m.Errors++
		if m.ErrorKinds == nil {
			m.ErrorKinds = map[string]uint64{}
		}
		m.ErrorKinds[s.ErrorKind]++
		m.ErrorLatency.RecordDuration(s.Latency)
	}
	if s.Waited && m.Wait != nil {
		m.Wait.RecordDuration(s.Wait)
	}
	if s.ConnWaited && m.ConnWait != nil {
		m.ConnWait.RecordDuration(s.ConnWait)
	}
	if s.Class >= 0 && s.Class < len(m.Classes) {
		c := &m.Classes[s.Class]
		tally(&c.Requests, &c.Errors, c.Latency, s.Latency, s.Failed)
		if s.Waited && c.Wait != nil {
			c.Wait.RecordDuration(s.Wait)
		}
	}
	if s.Client >= 0 && s.Client < len(m.Clients) {
		c := &m.Clients[s.Client]
		tally(&c.Requests, &c.Errors, c.Latency, s.Latency, s.Failed)
	}
	if len(m.Steps) > 0 {
		st := &m.Steps[m.stepAt(s.Scheduled)]
		tally(&st.Requests, &st.Errors, st.Latency, s.Latency, s.Failed)
	}
}

// tally counts one request that took d into a breakdown's counters.
func tally(requests, errors *uint64, h *Histogram, d time.Duration, failed bool) {
	*requests++
	h.RecordDuration(d)
	if failed {
		*errors++
	}
}

// stepAt returns the index of the step that a request scheduled at offset
// at from the start of the measured window belongs to: the last one
// starting at or before at (the first for a negative at). m must have
// steps.
func (m *Measurement) stepAt(at time.Duration) int {
	i := 0
	for i < len(m.Steps)-1 && at >= m.Steps[i+1].Start {
		i++
	}
	return i
}
