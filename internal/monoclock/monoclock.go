// Package monoclock reads CLOCK_MONOTONIC as nanoseconds: the clock every
// process on a Linux host shares, containers included (they share the
// host's kernel and have no time namespace of their own), so that stamps
// written by one process (a worker) can be compared with another's (the
// next worker, the generator). Stamps from two hosts cannot be compared;
// Host names the clock, so that a reader can tell whether a stamp is of
// its own.
package monoclock

import (
	"os"
	"strconv"
	"strings"
	"sync"
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

// calibrate reads CLOCK_MONOTONIC between two readings of Go's clock and
// ties it to their midpoint, keeping the narrowest of a few tries: a
// process preempted between one reading and the other (a container
// starting on busy CPUs) would otherwise be off by as long as it waited,
// every stamp it writes with it, and a worker's wait stamped so early or
// late falls outside its request's span and is left out. The error is
// at most half the narrowest bracket, well under clockSlop's 100 µs.
func calibrate() calibration {
	var best calibration
	bestGap := time.Duration(-1)
	for range calibrationTries {
		var ts unix.Timespec
		t0 := time.Now()
		err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		t1 := time.Now()
		if err != nil {
			return calibration{t: t0}
		}
		if gap := t1.Sub(t0); bestGap < 0 || gap < bestGap {
			best, bestGap = calibration{t: t0.Add(gap / 2), mono: ts.Nano()}, gap
		}
		if bestGap <= time.Microsecond {
			break
		}
	}
	return best
}

// calibrationTries is how many brackets calibrate reads at most.
const calibrationTries = 32

// Now returns CLOCK_MONOTONIC in nanoseconds, or a count from this
// process's start if the clock could not be read (then Valid is false).
func Now() int64 { return base.mono + int64(time.Since(base.t)) }

// Of is t on CLOCK_MONOTONIC in nanoseconds, for a t of this process
// (read with its monotonic reading, as time.Now gives it).
func Of(t time.Time) int64 { return base.mono + int64(t.Sub(base.t)) }

// Valid says whether Now reads CLOCK_MONOTONIC.
func Valid() bool { return base.mono != 0 }

// bootIDFile holds the kernel's random ID of the current boot. It is not
// namespaced: every process and container of one boot of one host reads
// the same ID, and another host, or the same host after a reboot, reads
// another.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// timeNSFile lists the clock offsets of the process's time namespace
// (Linux 5.6+): a process in a time namespace with a monotonic offset
// reads another CLOCK_MONOTONIC than its host.
const timeNSFile = "/proc/self/timens_offsets"

// host reads the two files once, on the first call of Host (a worker's
// first answer, the generator's first stamp), not when a program starts.
var host = sync.OnceValue(func() string { return hostID(bootIDFile, timeNSFile) })

// Host names this process's CLOCK_MONOTONIC: two processes whose Host is
// equal (and not empty) read the same clock, so their stamps compare; ""
// when it cannot be told. It is the first 8 hex digits of the boot's ID,
// followed by "@OFFSET" when the process's time namespace moves the
// monotonic clock by OFFSET nanoseconds.
func Host() string { return host() }

// hostID computes Host from the boot ID and time namespace files.
func hostID(bootFile, nsFile string) string {
	b, err := os.ReadFile(bootFile)
	if err != nil {
		return ""
	}
	id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if len(id) < 8 {
		return ""
	}
	id = strings.ToLower(id[:8])
	for _, c := range id {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	ns, err := os.ReadFile(nsFile)
	if err != nil {
		return id // no time namespaces on this kernel: the host's clock
	}
	for _, line := range strings.Split(string(ns), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || (f[0] != "monotonic" && f[0] != "1") {
			continue
		}
		sec, err1 := strconv.ParseInt(f[1], 10, 64)
		nsec, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return "" // cannot tell the offset
		}
		if off := sec*1e9 + nsec; off != 0 {
			return id + "@" + strconv.FormatInt(off, 10)
		}
	}
	return id
}
