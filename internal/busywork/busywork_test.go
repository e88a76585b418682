package busywork

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuClock reads a CPU clock in nanoseconds.
func cpuClock(t testing.TB, id int32) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		t.Fatalf("clock %d: %v", id, err)
	}
	return ts.Nano()
}

// TestSpendUsesCPU: the thread (and so the process) has used at least d
// of CPU time when Spend(d) returns, and not much more: the CPU time
// overshoots by one round of work, whatever else the machine runs.
func TestSpendUsesCPU(t *testing.T) {
	if !ThreadClock() {
		t.Skip("no thread CPU clock here: Spend measures wall time")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, d := range []time.Duration{50 * time.Microsecond, 2 * time.Millisecond, 20 * time.Millisecond} {
		thread, proc := cpuClock(t, unix.CLOCK_THREAD_CPUTIME_ID), cpuClock(t, unix.CLOCK_PROCESS_CPUTIME_ID)
		Spend(d)
		spentThread := time.Duration(cpuClock(t, unix.CLOCK_THREAD_CPUTIME_ID) - thread)
		spentProc := time.Duration(cpuClock(t, unix.CLOCK_PROCESS_CPUTIME_ID) - proc)
		if spentThread < d || spentProc < d {
			t.Errorf("Spend(%s): thread used %s, process %s of CPU: want at least %s", d, spentThread, spentProc, d)
		}
		// A generous bound: CPU time only grows while the thread runs, so
		// a loaded machine makes Spend slower, not costlier.
		if over := spentThread - d; over > 5*time.Millisecond {
			t.Errorf("Spend(%s): thread used %s of CPU, %s too much", d, spentThread, over)
		}
	}
}

// TestSpendUnderContention: more spenders than CPUs, each preempted in
// turn, still each use their full d of CPU (wall time alone would have
// counted the time they waited).
func TestSpendUnderContention(t *testing.T) {
	if !ThreadClock() {
		t.Skip("no thread CPU clock here: Spend measures wall time")
	}
	const d = 5 * time.Millisecond
	n := 2*runtime.GOMAXPROCS(0) + 1
	spent := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ts0, ts1 unix.Timespec
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts0)
			Spend(d)
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts1)
			spent[i] = time.Duration(ts1.Nano() - ts0.Nano())
		})
	}
	wg.Wait()
	for i, s := range spent {
		if s < d {
			t.Errorf("spender %d of %d used %s of CPU, want at least %s", i, n, s, d)
		}
	}
}

// TestSpendLoop drives the loop with a clock of its own: it reads the
// clock until d has passed on it, never for d <= 0, caps d at Max, and
// falls back to wall time when the clock cannot be read.
func TestSpendLoop(t *testing.T) {
	// A clock that advances 1ms per reading.
	counting := func(reads *int) func() (int64, bool) {
		return func() (int64, bool) {
			*reads++
			return int64(*reads) * int64(time.Millisecond), true
		}
	}
	for _, tc := range []struct {
		d     time.Duration
		reads int
	}{
		{0, 0}, {-time.Second, 0},
		{time.Millisecond, 2},                    // the start, then 1ms later
		{10 * time.Millisecond, 11},              // the start, then 10 readings
		{10*time.Millisecond + 1, 12},            // rounds up to the next reading
		{3 * Max, int(Max/time.Millisecond) + 1}, // capped
	} {
		reads := 0
		spend(tc.d, counting(&reads))
		if reads != tc.reads {
			t.Errorf("spend(%s): %d readings of the clock, want %d", tc.d, reads, tc.reads)
		}
	}

	// No clock: wall time.
	const d = 3 * time.Millisecond
	start := time.Now()
	spend(d, func() (int64, bool) { return 0, false })
	if took := time.Since(start); took < d {
		t.Errorf("spend(%s) without a CPU clock returned after %s of wall time", d, took)
	}
}
