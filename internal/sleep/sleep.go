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
	"time"

	"golang.org/x/sys/unix"
)

// Coarse is the part of a wait left to nanosleep: longer than the runtime
// timer's worst overshoot, so the timer never wakes late past the deadline.
const Coarse = 2 * time.Millisecond

// Until returns at or just after t. The calling goroutine holds an OS
// thread for at most Coarse of the wait. Safe for concurrent use.
func Until(t time.Time) {
	if d := time.Until(t) - Coarse; d > 0 {
		time.Sleep(d)
	}
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
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
