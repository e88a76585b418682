// Package busywork spends CPU time on purpose: a known extra cost per
// request that the built-in proxy and worker add when asked to ("lbbench
// run --baseline REF --inject-cost ROLE=D"), so that a gate judging CPU
// per request can be shown to fail a known cost regression.
//
// Spend measures the calling thread's own CPU time
// (CLOCK_THREAD_CPUTIME_ID), with the goroutine locked to its thread for
// the duration: time the thread spends descheduled, preempted by the
// kernel or by the Go scheduler, does not count, so a busy machine makes
// the spending take longer, never cost less. Where that clock cannot be
// read (ThreadClock is false) it falls back to wall time on the monotonic
// clock, which a preemption does shorten.
package busywork

import (
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Max is the most CPU time one call may be asked to spend, and the bound
// of every injected cost: far above any per-request cost worth
// simulating, short enough that a mistyped unit cannot hold a thread for
// minutes.
const Max = time.Second

// sink keeps the work's result observable, so the compiler cannot drop
// it.
var sink atomic.Uint64

// ThreadClock reports whether this thread's CPU clock can be read, that
// is whether Spend measures CPU time rather than wall time.
func ThreadClock() bool {
	_, ok := threadCPU()
	return ok
}

// Spend keeps the calling goroutine busy on its CPU, hashing, until its
// thread has used d of CPU time (or, without the thread's CPU clock, until
// d of wall time has passed). It overshoots by at most one round of work
// and one reading of the clock, about a microsecond. d <= 0 returns at
// once; d is capped at Max.
func Spend(d time.Duration) { spend(d, threadCPU) }

// spend is Spend reading the CPU clock with clock (tests give one that
// fails, for the fallback).
func spend(d time.Duration, clock func() (int64, bool)) {
	if d <= 0 {
		return
	}
	d = min(d, Max)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := sink.Load() | 1
	defer func() { sink.Store(x) }()
	start, ok := clock()
	if !ok {
		for began := time.Now(); time.Since(began) < d; {
			x = work(x)
		}
		return
	}
	until := start + int64(d)
	for {
		x = work(x)
		now, ok := clock()
		if !ok || now >= until {
			return
		}
	}
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// work is one round of busy work between two readings of the clock: a few
// hundred steps of a 64-bit xorshift from x (never 0), well under a
// microsecond.
func work(x uint64) uint64 {
	for range 256 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
