// Package monoclock reads CLOCK_MONOTONIC as nanoseconds: the clock every
// process on a Linux host shares, containers included (they share the
// host's kernel and have no time namespace of their own), so that stamps
// written by one process (a worker) can be compared with another's (the
// next worker, the generator). Stamps from two hosts cannot be compared.
package monoclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// base ties CLOCK_MONOTONIC to Go's monotonic clock (which is
// CLOCK_MONOTONIC on Linux too) once, so that Now reads it without a
// system call.
var base = calibrate()

type calibration struct {
	t    time.Time
	mono int64
}

func calibrate() calibration {
	var ts unix.Timespec
	t := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return calibration{t: t}
	}
	return calibration{t: t, mono: ts.Nano()}
}

// Now returns CLOCK_MONOTONIC in nanoseconds, or a count from this
// process's start if the clock could not be read (then Valid is false).
func Now() int64 { return base.mono + int64(time.Since(base.t)) }

// Of is t on CLOCK_MONOTONIC in nanoseconds, for a t of this process
// (read with its monotonic reading, as time.Now gives it).
func Of(t time.Time) int64 { return base.mono + int64(t.Sub(base.t)) }

// Valid says whether Now reads CLOCK_MONOTONIC.
func Valid() bool { return base.mono != 0 }
