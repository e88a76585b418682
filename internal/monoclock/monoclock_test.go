package monoclock

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestNowIsClockMonotonic: Now agrees with a direct read of
// CLOCK_MONOTONIC to well within a millisecond, and never goes back.
func TestNowIsClockMonotonic(t *testing.T) {
	if !Valid() {
		t.Fatal("CLOCK_MONOTONIC could not be read")
	}
	prev := Now()
	for range 1000 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		now := Now()
		if d := now - ts.Nano(); d < -500_000 || d > 500_000 {
			t.Fatalf("Now %d, CLOCK_MONOTONIC %d: %d ns apart", now, ts.Nano(), d)
		}
		if now < prev {
			t.Fatalf("Now went back from %d to %d", prev, now)
		}
		prev = now
	}
}
