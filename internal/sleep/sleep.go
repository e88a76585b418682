// Package sleep waits for short, exact durations.
//
// Go's time.Sleep and timers wake through the network poller, whose wait has
// millisecond granularity on Linux: a 50µs sleep can take over a millisecond.
// That is too coarse both for pacing an open-loop schedule and for a worker
// asked to spend 2ms. Until sleeps through the timer for all but the last
// stretch and then calls nanosleep(2) directly, which the kernel's
// high-resolution timers end within tens of microseconds.
package sleep

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// Coarse is the part of a wait left to nanosleep: longer than the runtime
// timer's worst overshoot, so the timer never wakes late past the deadline.
const Coarse = 2 * time.Millisecond

// Until returns at or just after t. The calling goroutine holds an OS
// thread for at most Coarse of the wait. Nothing interrupts it: a wait that
// must end on cancellation uses UntilContext. Safe for concurrent use.
func Until(t time.Time) {
	UntilContext(context.Background(), t)
}

// UntilContext returns at or just after t, or as soon as ctx ends, whichever
// comes first; it returns ctx's error if ctx ended before t. Only the last
// Coarse of the wait (a bounded stretch) is spent in nanosleep, where ctx is
// not watched. Safe for concurrent use.
func UntilContext(ctx context.Context, t time.Time) error {
	// time.Until saturates at the extremes of time.Duration: compare with
	// Coarse rather than subtract it, so a deadline far in the past never
	// wraps round into a wait of centuries.
	if d := time.Until(t); d > Coarse {
		timer := time.NewTimer(d - Coarse)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		d = min(d, Coarse) // the timer stage left at most Coarse
		ts := unix.NsecToTimespec(d.Nanoseconds())
		// EINTR (a signal arrived) just loops with the remaining time.
		_ = unix.Nanosleep(&ts, nil)
	}
}

// For sleeps for d; see Until.
func For(d time.Duration) {
	if d > 0 {
		Until(time.Now().Add(d))
	}
}
