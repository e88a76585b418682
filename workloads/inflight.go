package workloads

import (
	"math"
)

// DefaultMaxQueued is how many requests beyond its connections a generator
// stream lets wait for a free connection, when Clients.MaxInFlight is not
// set. A waiting request costs the generator some 20 KiB (its goroutine and
// request), so the default bounds that memory near 20 MiB; past it the
// generator holds new requests back instead, and the lateness shows as send
// lag (see InFlightCap).
const DefaultMaxQueued = 1024

// InFlightCap is the most requests one generator stream of s (Streams; a
// generator process of `run --generators K` each) keeps outstanding: sent
// or waiting for a connection, not yet answered. A request due while the
// stream is at its cap is held back until one ends; it leaves late, its
// send lag says by how much (latency stays measured from its intended time),
// and a run whose send-lag p99 passes the validity bound is marked invalid.
// So a server, or a generator, past saturation costs a bounded amount of
// memory rather than one goroutine per late request.
//
// Clients.MaxInFlight sets it. Otherwise it is derived from the workload:
// the peak rate × Timeout (by Little's law no more can be outstanding while
// each request ends by its timeout), but no more than the connections plus
// DefaultMaxQueued, and no fewer than the connections or a burst's size.
// It never exceeds MaxInFlight. s must have been through WithDefaults.
func (s Spec) InFlightCap() int {
	if n := s.Clients.MaxInFlight; n > 0 {
		return min(n, MaxInFlight)
	}
	conns := max(s.Clients.Connections, 1)
	n := conns + DefaultMaxQueued
	if r := s.Arrival.PeakRate() * s.Timeout.Seconds(); r >= 0 && r < float64(n) { // NaN fails both
		n = int(math.Ceil(r))
	}
	n = max(n, conns)
	if s.Arrival.Kind == Burst {
		n = max(n, s.Arrival.Size)
	}
	return min(n, MaxInFlight)
}

// PeakRate is the arrival's highest rate in requests per second: the rate
// of constant and poisson, the larger end of a ramp, the fastest step, and
// a burst's mean rate.
func (a Arrival) PeakRate() float64 {
	switch a.Kind {
	case Ramp:
		return float64(max(a.From, a.To))
	case Steps:
		var r float64
		for _, st := range a.Steps {
			r = max(r, float64(st.RatePerSec))
		}
		return r
	case Burst:
		return a.MeanRate(0)
	}
	return float64(a.RatePerSec)
}
