package sleep

import (
	"slices"
	"testing"
	"time"
)

// TestForIsPreciseEnough compares overshoot with time.Sleep's on the same
// machine, as a ratio: For must never end early and, for short waits, must
// overshoot less than the runtime timer does.
func TestForIsPreciseEnough(t *testing.T) {
	if testing.Short() {
		t.Skip("timing sample")
	}
	measure := func(f func(time.Duration), d time.Duration) time.Duration {
		var over []time.Duration
		for range 100 {
			start := time.Now()
			f(d)
			o := time.Since(start) - d
			if o < 0 {
				t.Fatalf("slept %s of %s: woke early", d+o, d)
			}
			over = append(over, o)
		}
		slices.Sort(over)
		return over[50]
	}
	const d = 200 * time.Microsecond
	ours, runtime := measure(For, d), measure(time.Sleep, d)
	t.Logf("median overshoot of a %s sleep: For %s, time.Sleep %s", d, ours, runtime)
	if ours > runtime && ours > 300*time.Microsecond {
		t.Errorf("For overshoots %s, more than time.Sleep's %s", ours, runtime)
	}
}

// TestUntilPast: a deadline already past, and a duration of zero or less,
// return at once. Checked as an ordering with a wide margin: they return
// before a 10 s timer fires, where a wait mistaken for the magnitude of its
// negative duration (a minute) would not.
func TestUntilPast(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Until(time.Now().Add(-time.Minute))
		For(-time.Minute)
		For(0)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a past deadline or a duration <= 0 did not return at once")
	}
}

func BenchmarkFor100us(b *testing.B) {
	for b.Loop() {
		For(100 * time.Microsecond)
	}
}
