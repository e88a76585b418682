// Package sleep waits for short, exact durations.
//
// Go's time.Sleep and timers wake through the network poller, whose wait has
// millisecond granularity on Linux: a 50µs sleep can take over a millisecond.
// That is too coarse both for pacing an open-loop schedule and for a worker
// asked to spend 2ms. Both waits here sleep through the runtime's timer for
// all but the last stretch (Coarse) and end on one of the kernel's
// high-resolution timers, in one of two ways:
//
//   - Until and UntilContext (the load generator's pacing) end in
//     nanosleep(2): the goroutine holds its OS thread, which the kernel
//     wakes and runs at once even when every CPU is busy.
//   - For (a worker's service time) ends on a timerfd(2) read through the
//     runtime's network poller: the goroutine is parked and holds no
//     thread. A blocking nanosleep keeps the runtime's monitor thread
//     waking every 20µs for as long as it lasts, which cost the built-in
//     worker about 0.3 ms of CPU per 2 ms request on a 2-CPU virtual
//     machine. The price: with every CPU busy, a wake-up through the
//     poller is more often late by a scheduler slice (milliseconds) in the
//     tail.
package sleep

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// Coarse is the part of a wait left to the kernel's timer: longer than the
// runtime timer's worst overshoot, so the timer never wakes late past the
// deadline.
const Coarse = 2 * time.Millisecond

// Until returns at or just after t. Nothing interrupts it: a wait that
// must end on cancellation uses UntilContext. Safe for concurrent use.
func Until(t time.Time) {
	UntilContext(context.Background(), t)
}

// UntilContext returns at or just after t, or as soon as ctx ends, whichever
// comes first; it returns ctx's error if ctx ended before t. Only the last
// Coarse of the wait (a bounded stretch) is spent in nanosleep, holding the
// OS thread, where ctx is not watched. Safe for concurrent use.
func UntilContext(ctx context.Context, t time.Time) error {
	if err := coarse(ctx, t); err != nil {
		return err
	}
	nanosleepUntil(t)
	return nil
}

// For sleeps for d, at or just over it, like Until, but the last stretch
// parks the goroutine on a timerfd instead of holding its thread (the
// package's comment says when that matters). Safe for concurrent use.
func For(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.Now().Add(d)
	coarse(context.Background(), t)
	if tf := getTimer(); tf != nil {
		err := tf.until(t)
		putTimer(tf, err)
		if err == nil {
			return
		}
	}
	nanosleepUntil(t) // the kernel refused a timerfd, or reading it failed
}

// coarse waits on the runtime's timer until Coarse before t, or until ctx
// ends (then it returns ctx's error).
func coarse(ctx context.Context, t time.Time) error {
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
	return ctx.Err()
}

// nanosleepUntil waits for t in nanosleep(2), holding the OS thread.
func nanosleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		d = min(d, Coarse) // the timer stage left at most Coarse
		ts := unix.NsecToTimespec(d.Nanoseconds())
		// EINTR (a signal arrived) just loops with the remaining time.
		_ = unix.Nanosleep(&ts, nil)
	}
}
