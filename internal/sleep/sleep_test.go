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

func TestUntilPast(t *testing.T) {
	Until(time.Now().Add(-time.Second)) // returns at once
	For(-time.Second)
	For(0)
}

func BenchmarkFor100us(b *testing.B) {
	for b.Loop() {
		For(100 * time.Microsecond)
	}
}
