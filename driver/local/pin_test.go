package local

import (
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPinningStartsChildOnTargetCPUs(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < 2 {
		t.Skip("one CPU: nothing to separate")
	}
	p := &Pinning{}
	for cpu := range 1024 {
		if all.IsSet(cpu) {
			if p.Generator.Count() == 0 {
				p.Generator.Set(cpu)
			} else {
				p.Targets.Set(cpu)
			}
		}
	}
	if auto, ok := AutoPinning(); ok != (all.Count() >= MinPinCPUs) || (ok && auto.Generator.Count() != 1) {
		t.Errorf("AutoPinning on %d CPUs: %v, ok=%v", all.Count(), auto, ok)
	}
	// Forced, the split happens from 2 CPUs, the same way.
	if split, ok := SplitPinning(2); ok != (all.Count() >= 2) || (ok && (split.Generator != p.Generator || split.Targets != p.Targets)) {
		t.Errorf("SplitPinning(2) on %d CPUs: %v, ok=%v; want %v", all.Count(), split, ok, p)
	}
	var before unix.CPUSet
	unix.SchedGetaffinity(0, &before)
	cmd := exec.Command("sleep", "5")
	if err := p.Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var child unix.CPUSet
	if err := unix.SchedGetaffinity(cmd.Process.Pid, &child); err != nil {
		t.Fatal(err)
	}
	if child != p.Targets {
		t.Errorf("child on cpus %s, want %s", cpuList(child), cpuList(p.Targets))
	}
	var after unix.CPUSet
	unix.SchedGetaffinity(0, &after)
	if after != before {
		t.Errorf("the starting thread kept cpus %s, had %s", cpuList(after), cpuList(before))
	}
	if s := p.String(); !strings.Contains(s, "generator: cpus ") || !strings.Contains(s, "targets: cpus ") {
		t.Errorf("String() = %q", s)
	}
}

func TestCPUList(t *testing.T) {
	var s unix.CPUSet
	for _, c := range []int{0, 2, 3, 4, 7} {
		s.Set(c)
	}
	if got := cpuList(s); got != "0,2-4,7" {
		t.Errorf("cpuList = %q", got)
	}
}
