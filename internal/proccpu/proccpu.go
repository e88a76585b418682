// Package proccpu reads the CPU time processes have used: user plus
// system time of a process and of every descendant it has now, so that a
// supervisor's forked workers (gunicorn's, nginx's) count with it. Whoever
// shares the processes' PID namespace can read it: the local driver, and a
// workers' supervisor in its container or pod.
//
// A process's time is read from its CPU-time clock (clock_getcpuclockid),
// in nanoseconds, and from /proc/PID/stat's clock ticks (10 ms) only when
// the clock cannot be read: over a short run an engine such as nginx
// spends a few milliseconds, which ticks round to 0 or 10 ms, so a cost
// per request read from them would be off by tens of microseconds.
package proccpu

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Tick is USER_HZ's tick, the unit of the CPU times in /proc/PID/stat
// (utime, stime) and /proc/stat (steal among them): a hundredth of a
// second on every Linux ABI (it is not the kernel's HZ).
const Tick = time.Second / 100

// Self returns the CPU time of this process (all its threads) so far.
func Self() (time.Duration, error) { return Process(os.Getpid()) }

// Process returns the CPU time pid has used so far (its threads
// included, its children not).
func Process(pid int) (time.Duration, error) {
	st, err := read(pid)
	if err != nil {
		return 0, err
	}
	return precise(pid, st.cpu), nil
}

// precise is pid's CPU time from its CPU-time clock (all its threads,
// those that ended included), or ticks, its time from /proc/PID/stat, when
// the clock cannot be read (the process is gone meanwhile).
func precise(pid int, ticks time.Duration) time.Duration {
	// The kernel's clock id of a process's CPU-time clock: its pid,
	// complemented, shifted past the clock kind, CPUCLOCK_SCHED (2).
	var ts unix.Timespec
	if err := unix.ClockGettime(int32((^pid)<<3|2), &ts); err != nil {
		return ticks
	}
	return time.Duration(ts.Nano())
}

// Tree returns the CPU time of pid and of every process descending from it
// now.
func Tree(pid int) (time.Duration, error) {
	all, err := readAll()
	if err != nil {
		return 0, err
	}
	if _, ok := all[pid]; !ok {
		return 0, fmt.Errorf("proccpu: no process %d", pid)
	}
	children := map[int][]int{}
	for p, st := range all {
		children[st.ppid] = append(children[st.ppid], p)
	}
	var total time.Duration
	todo := []int{pid}
	seen := map[int]bool{}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		total += precise(p, all[p].cpu)
		todo = append(todo, children[p]...)
	}
	return total, nil
}

type stat struct {
	state byte
	ppid  int
	cpu   time.Duration
}

// State says, from /proc, how pid looks to someone it does not answer:
// "stopped (SIGSTOP or a debugger)", "in uninterruptible sleep",
// "sleeping", "running", "a zombie", or "gone" when it no longer exists.
func State(pid int) string {
	st, err := read(pid)
	if err != nil {
		return "gone"
	}
	switch st.state {
	case 'T', 't':
		return "stopped (SIGSTOP or a debugger)"
	case 'D':
		return "in uninterruptible sleep"
	case 'S', 'I':
		return "sleeping"
	case 'R':
		return "running"
	case 'Z', 'X':
		return "a zombie"
	}
	return "in state " + string(st.state)
}

func readAll() (map[int]stat, error) {
	paths, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	out := map[int]stat{}
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if st, err := read(pid); err == nil {
			out[pid] = st
		}
	}
	return out, nil
}

// read parses /proc/PID/stat: the fields after the command name, which is
// in parentheses and may hold spaces and parentheses itself.
func read(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parse(b)
}

func parse(b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("proccpu: malformed stat %q", b)
	}
	f := bytes.Fields(b[i+1:])
	// After ")": state(3) ppid(4) ... utime(14) stime(15), so f[0] is
	// field 3.
	if len(f) < 13 {
		return stat{}, fmt.Errorf("proccpu: short stat %q", b)
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	ut, err2 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err3 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return stat{}, fmt.Errorf("proccpu: malformed stat %q", b)
	}
	return stat{state: f[0][0], ppid: ppid, cpu: time.Duration(ut+st) * Tick}, nil
}
