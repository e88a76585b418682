package sleep

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestForIsPreciseEnough compares overshoot with time.Sleep's on the same
// machine, as a ratio: For and Until must never end early and, for short
// waits, must overshoot less than the runtime timer does.
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
	until := func(d time.Duration) { Until(time.Now().Add(d)) }
	ours, nano, timer := measure(For, d), measure(until, d), measure(time.Sleep, d)
	t.Logf("median overshoot of a %s sleep: For %s, Until %s, time.Sleep %s", d, ours, nano, timer)
	for name, o := range map[string]time.Duration{"For": ours, "Until": nano} {
		if o > timer && o > 300*time.Microsecond {
			t.Errorf("%s overshoots %s, more than time.Sleep's %s", name, o, timer)
		}
	}
}

// TestForParksOnATimerfd: For's last stretch is a wait on a timerfd read
// through the poller, which ends without error and goes back to the idle
// timers (a failed wait would close it and fall back to nanosleep), and 64
// such waits at once each end at or after their deadline.
func TestForParksOnATimerfd(t *testing.T) {
	for len(idle) > 0 {
		(<-idle).f.Close()
	}
	For(time.Millisecond)
	if len(idle) != 1 {
		t.Fatalf("after one For, %d idle timerfds; want 1 (the wait's own, back in the pool)", len(idle))
	}
	deadline := time.Now().Add(5 * time.Millisecond)
	var wg sync.WaitGroup
	var early atomic.Int32
	for range 64 {
		wg.Go(func() {
			For(time.Until(deadline))
			if time.Now().Before(deadline) {
				early.Add(1)
			}
		})
	}
	wg.Wait()
	if n := early.Load(); n != 0 {
		t.Errorf("%d of 64 concurrent waits ended before their deadline", n)
	}
	if n := len(idle); n < 1 || n > cap(idle) {
		t.Errorf("%d idle timerfds after 64 waits; want between 1 and %d", n, cap(idle))
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

// TestUntilFarPast: a deadline at the far end of time.Time's range (what a
// NaN offset becomes: time.Duration(NaN) is math.MinInt64 on amd64) returns
// at once. time.Until saturates there, and subtracting Coarse from it used
// to wrap round to a wait of 292 years.
func TestUntilFarPast(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		now := time.Now()
		Until(now.Add(math.MinInt64))
		Until(time.Time{})
		if err := UntilContext(context.Background(), now.Add(math.MinInt64)); err != nil {
			t.Errorf("UntilContext of a past deadline: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a deadline at the far end of the past did not return at once")
	}
}

// TestUntilContextCancel: a wait of an hour ends when its context does,
// with the context's error; an ended context ends even a short wait; a wait
// whose context lives returns nil at its deadline, not before.
func TestUntilContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	time.AfterFunc(50*time.Millisecond, cancel)
	errc := make(chan error, 1)
	go func() { errc <- UntilContext(ctx, start.Add(time.Hour)) }()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled wait of an hour did not end")
	}
	if err := UntilContext(ctx, time.Now().Add(time.Millisecond)); !errors.Is(err, context.Canceled) {
		t.Errorf("wait on an ended context returned %v, want context.Canceled", err)
	}
	const d = 20 * time.Millisecond
	t0 := time.Now()
	if err := UntilContext(context.Background(), t0.Add(d)); err != nil {
		t.Fatalf("uncancelled wait: %v", err)
	}
	if got := time.Since(t0); got < d {
		t.Errorf("uncancelled wait of %s returned after %s: early", d, got)
	}
}
