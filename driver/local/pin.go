package local

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pinning places the generator and the targets on disjoint CPUs, so that
// the workers' and the proxy's CPU time cannot delay the generator's sends
// (and the other way round).
type Pinning struct {
	Generator, Targets unix.CPUSet
}

// MinPinCPUs is the fewest CPUs AutoPinning pins on. On 2 CPUs a split is
// a gamble on the workload: with the machine otherwise busy, a proxy
// without upstream keep-alive squeezed onto one CPU had a p99 of 1.3 s
// against 87 ms unpinned; on the quiet machine the default scenario split
// the same way ("run --pin cpusets") kept every run valid, halved the send
// lag (p99 0.7 to 1.0 ms against 1.5 to 1.7 ms) and left the p99s within
// the run-to-run spread (128, 73.1, 77.6 ms against 132, 74.5, 78.2 ms).
// Below 4 CPUs it is therefore asked for, not automatic.
const MinPinCPUs = 4

// AutoPinning splits the CPUs this process may use: the first for the
// generator, the rest for the targets. ok is false with fewer than
// MinPinCPUs CPUs.
func AutoPinning() (p *Pinning, ok bool) { return SplitPinning(MinPinCPUs) }

// SplitPinning is AutoPinning with a minimum of min CPUs (at least 2):
// "--pin cpusets" splits even 2 CPUs.
func SplitPinning(min int) (p *Pinning, ok bool) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < max(min, 2) {
		return nil, false
	}
	p = &Pinning{}
	first := true
	for cpu := range 1024 {
		if !all.IsSet(cpu) {
			continue
		}
		if first {
			p.Generator.Set(cpu)
			first = false
		} else {
			p.Targets.Set(cpu)
		}
	}
	return p, true
}

// String describes the pinning for the results, for example
// "generator: cpu 0; targets: cpus 1-3".
func (p *Pinning) String() string {
	if p == nil {
		return "none"
	}
	return "generator: cpus " + cpuList(p.Generator) + "; targets: cpus " + cpuList(p.Targets)
}

// CPUSets returns the generator's and the targets' CPUs as cpuset lists
// ("0", "1-3").
func (p *Pinning) CPUSets() (generator, targets string) {
	return cpuList(p.Generator), cpuList(p.Targets)
}

func cpuList(s unix.CPUSet) string {
	var parts []string
	for cpu := 0; cpu < 1024; cpu++ {
		if !s.IsSet(cpu) {
			continue
		}
		end := cpu
		for end+1 < 1024 && s.IsSet(end+1) {
			end++
		}
		if end == cpu {
			parts = append(parts, strconv.Itoa(cpu))
		} else {
			parts = append(parts, strconv.Itoa(cpu)+"-"+strconv.Itoa(end))
		}
		cpu = end
	}
	return strings.Join(parts, ",")
}

// PinSelf pins every thread of this process to the generator's CPUs.
// Threads the Go runtime starts later are cloned from pinned ones and
// inherit the mask.
func (p *Pinning) PinSelf() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("local: pin: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(t.Name()))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &p.Generator); err != nil && err != unix.ESRCH {
			return fmt.Errorf("local: pin thread %d: %w", tid, err)
		}
	}
	return nil
}

// Start starts cmd on the targets' CPUs: the child inherits the affinity of
// the thread that forks it, so that thread is pinned to the targets' CPUs
// for the fork and restored afterwards. A nil Pinning just starts cmd.
func (p *Pinning) Start(cmd *exec.Cmd) error {
	if p == nil {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("local: pin: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &p.Targets); err != nil {
		return fmt.Errorf("local: pin: %w", err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("local: unpin: %w", rerr)
	}
	return err
}
