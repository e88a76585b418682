package proccpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// StealClock reads the time a hypervisor ran something else while this
// machine's CPUs had work (steal time, /proc/stat), summed over the CPUs
// this process may run on. On a virtual machine a burst of it delays the
// generator's sends as a busy CPU would, but it shows in no process's
// CPU time. Outside a VM it stays 0.
type StealClock struct{ cpus map[int]bool }

// NewStealClock is a StealClock over this process's CPU affinity.
func NewStealClock() StealClock {
	var set unix.CPUSet
	c := StealClock{cpus: map[int]bool{}}
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for i := 0; i < len(set)*64; i++ {
			if set.IsSet(i) {
				c.cpus[i] = true
			}
		}
	}
	return c
}

// CPUs is how many CPUs the clock sums over.
func (c StealClock) CPUs() int { return len(c.cpus) }

// Now is the steal time of the clock's CPUs so far.
func (c StealClock) Now() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseSteal(b, c.cpus)
}

// ByCPU is the steal time so far (since boot) of each of the clock's
// CPUs, by CPU number: what a process reports so that a reader can take
// the union of several processes' CPUs on one host, each CPU once.
func (c StealClock) ByCPU() (map[int]time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	return parseStealByCPU(b, c.cpus)
}

// parseSteal sums the steal column of /proc/stat's per-CPU lines for
// cpus.
func parseSteal(b []byte, cpus map[int]bool) (time.Duration, error) {
	by, err := parseStealByCPU(b, cpus)
	var sum time.Duration
	for _, d := range by {
		sum += d
	}
	return sum, err
}

// parseStealByCPU reads the steal column (the eighth time) of
// /proc/stat's per-CPU lines for cpus, by CPU.
func parseStealByCPU(b []byte, cpus map[int]bool) (map[int]time.Duration, error) {
	out := map[int]time.Duration{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
		if err != nil || !cpus[n] {
			continue
		}
		st, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("proccpu: /proc/stat: %s: %w", f[0], err)
		}
		out[n] = time.Duration(st) * Tick
	}
	return out, sc.Err()
}
