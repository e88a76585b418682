// Package sleep waits for short, exact durations.
//
// Go's time.Sleep and timers wake through the network poller, whose wait has
// millisecond granularity on Linux: a 50µs sleep can take over a millisecond.
// That is too coarse both for pacing an open-loop schedule and for a worker
// asked to spend 2ms. Both waits here sleep through the runtime's timer for
// all but the last stretch (Coarse) and end on one of the kernel's
// high-resolution timers, a timerfd(2) read through the runtime's network
// poller: the goroutine is parked and holds no thread.
//
// The load generator's pacing (Until, UntilContext) ended in a blocking
// nanosleep(2) until December 2026, its thread woken by the kernel at
// once even with every CPU busy. A blocking sleep keeps the runtime's
// monitor thread waking every 20µs for as long as it lasts and makes the
// runtime hand the sleeper's P to another thread: on the project's 2-CPU
// virtual machine that cost the built-in worker about 0.3 ms of CPU per
// 2 ms request, and the generator about a fifth of its CPU at 5,000
// requests a second (perf). Parked, the generator's send-lag p99 at
// 10,000/s fell too (3.8 ms to 0.9 ms in make bench-self), as its other
// goroutines no longer waited for a P. The price: with every CPU busy, a
// wake-up through the poller can be late by a scheduler slice in the
// tail, which the generator's send lag records. nanosleep remains the
// fallback where the kernel refuses a timerfd.
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
// comes first; it returns ctx's error if ctx ended before t. The last
// Coarse of the wait (a bounded stretch) is spent on a timerfd, where ctx
// is not watched. Safe for concurrent use.
func UntilContext(ctx context.Context, t time.Time) error {
	if err := coarse(ctx, t); err != nil {
		return err
	}
	park(t)
	return nil
}

// For sleeps for d, at or just over it, as Until does. Safe for concurrent
// use.
func For(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.Now().Add(d)
	coarse(context.Background(), t)
	park(t)
}

// park waits for t on a timerfd read through the runtime's poller, the
// goroutine parked, or in nanosleep if the kernel refuses a timerfd or
// reading it fails.
func park(t time.Time) {
	if tf := getTimer(); tf != nil {
		err := tf.until(t)
		putTimer(tf, err)
		if err == nil {
			return
		}
	}
	nanosleepUntil(t)
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
