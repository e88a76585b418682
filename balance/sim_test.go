package balance

import (
	"testing"
	"time"
)

// TestNewBackendsDrivePolicies: backends built outside a Proxy carry their
// index and pool, and Acquire/Release move the counts least_conn reads.
func TestNewBackendsDrivePolicies(t *testing.T) {
	pool := NewBackends("sim", []string{"a", "b", "c", "a"})
	for i, b := range pool {
		if b.Index() != i || b.Pool() != "sim" || b.Active() != 0 {
			t.Fatalf("backend %d: index %d pool %q active %d", i, b.Index(), b.Pool(), b.Active())
		}
	}
	if pool[0].hash == pool[3].hash {
		t.Error("a repeated address shares its hashing identity")
	}
	lc, err := NewPolicy("least_conn", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pool[:3] {
		b.Acquire()
	}
	pool[1].Release()
	if got := lc.Pick(pool[:3], nil); got != pool[1] {
		t.Errorf("least_conn picked %d, want the released backend 1", got.Index())
	}
	if pool[0].Requests() != 1 || pool[0].PeakActive() != 1 {
		t.Errorf("requests %d peak %d, want 1 and 1", pool[0].Requests(), pool[0].PeakActive())
	}
}

// TestSetClock: peak_ewma reads the given clock, so its decay follows
// simulated time; other policies have no clock.
func TestSetClock(t *testing.T) {
	p, err := NewPolicy("peak_ewma", map[string]string{"decay": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	var now int64 = 1
	if !SetClock(p, func() int64 { return now }) {
		t.Fatal("peak_ewma reports no clock")
	}
	pool := NewBackends("sim", []string{"a", "b"})
	pe := p.(*PeakEWMA)
	pe.Observe(pool[0], 100*time.Millisecond)
	if cheaperThan(pe, pool[0], 99*time.Millisecond) || !cheaperThan(pe, pool[0], 101*time.Millisecond) {
		t.Error("cost right after a 100ms observation is not between 99ms and 101ms")
	}
	now += int64(time.Second) // one decay constant later, in simulated time only
	if cheaperThan(pe, pool[0], 36*time.Millisecond) || !cheaperThan(pe, pool[0], 37*time.Millisecond) {
		t.Error("cost one decay after a 100ms observation is not between 36ms and 37ms, want 36.8ms")
	}
	for _, name := range []string{"least_conn", "round_robin", "p2c"} {
		q, _ := NewPolicy(name, nil)
		if SetClock(q, func() int64 { return 1 }) {
			t.Errorf("%s reports a clock", name)
		}
	}
}
