package balance

// This file lets the simulator in package model run the policies on
// simulated time.

// clocked is implemented by policies that read the time (peak_ewma).
type clocked interface {
	setClock(now func() int64)
}

func (pe *PeakEWMA) setClock(now func() int64) { pe.now = now }

// SetClock makes p read the time from now instead of the monotonic clock,
// and reports whether p reads the time at all (only peak_ewma does; other
// policies are left as they are). now returns nanoseconds, must be > 0 and
// must never go backwards. The simulator uses it to run a policy on
// simulated time. Call it before p is used.
func SetClock(p Policy, now func() int64) bool {
	c, ok := p.(clocked)
	if ok {
		c.setClock(now)
	}
	return ok
}
