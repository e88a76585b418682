package proccpu

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/internal/testkit"
)

func TestParse(t *testing.T) {
	st, err := parse([]byte("42 (a (b) c) S 7 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0"))
	if err != nil || st.ppid != 7 || st.cpu != 3*time.Second {
		t.Fatalf("%+v, %v; want ppid 7, 3s", st, err)
	}
	if _, err := parse([]byte("42 (x")); err == nil {
		t.Error("malformed stat parsed")
	}
}

// TestTreeCountsChildren: a child burning CPU counts in its parent's tree
// but not in the parent's own time.
func TestTreeCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var c time.Duration
	if !testkit.Poll(30*time.Second, func() bool {
		var err error
		if c, err = Process(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		return c >= 100*time.Millisecond
	}) {
		t.Fatalf("the child used %s of CPU in 30 s", c)
	}
	// Self first: the tree, read after, holds at least this much of this
	// process's time (read the other way round, a clock tick of this
	// process between the two reads made the check fail).
	self, _ := Self()
	tree, err := Tree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree < self+100*time.Millisecond {
		t.Errorf("tree %s, self %s: the child's CPU is not in the tree", tree, self)
	}
}

// TestState: a child is sleeping, then stopped after SIGSTOP; a pid that
// does not exist is gone.
func TestState(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	waitState(t, pid, "sleeping")
	syscall.Kill(pid, syscall.SIGSTOP)
	waitState(t, pid, "stopped (SIGSTOP or a debugger)")
	cmd.Process.Kill()
	cmd.Wait()
	if got := State(pid); got != "gone" {
		t.Errorf("State of a reaped pid = %q, want gone", got)
	}
}

func waitState(t *testing.T, pid int, want string) {
	t.Helper()
	if !testkit.Poll(5*time.Second, func() bool { return State(pid) == want }) {
		t.Fatalf("State(%d) = %q, want %q", pid, State(pid), want)
	}
}

func TestParseSteal(t *testing.T) {
	stat := []byte("cpu  100 0 50 900 1 0 2 30 0 0\ncpu0 60 0 20 450 1 0 1 12 0 0\ncpu1 40 0 30 450 0 0 1 18 0 0\nintr 5\n")
	for _, tc := range []struct {
		cpus map[int]bool
		want time.Duration
	}{
		{map[int]bool{0: true}, 120 * time.Millisecond},
		{map[int]bool{1: true}, 180 * time.Millisecond},
		{map[int]bool{0: true, 1: true}, 300 * time.Millisecond},
		{map[int]bool{7: true}, 0},
	} {
		got, err := parseSteal(stat, tc.cpus)
		if err != nil || got != tc.want {
			t.Errorf("cpus %v: %v, %v; want %v", tc.cpus, got, err, tc.want)
		}
	}
	c := NewStealClock()
	if c.CPUs() < 1 {
		t.Fatalf("affinity of %d CPUs", c.CPUs())
	}
	if _, err := c.Now(); err != nil {
		t.Fatal(err)
	}
	by, err := c.ByCPU()
	if err != nil || len(by) != c.CPUs() {
		t.Fatalf("ByCPU: %v, %v; want one entry for each of the %d CPUs", by, err, c.CPUs())
	}
	if by, err := parseStealByCPU(stat, map[int]bool{0: true, 1: true, 7: true}); err != nil || len(by) != 2 || by[0] != 120*time.Millisecond || by[1] != 180*time.Millisecond {
		t.Errorf("by CPU: %v, %v; want cpu 0 120ms, cpu 1 180ms and no cpu 7", by, err)
	}
}

// TestProcessPrecise: a process's time is its CPU-time clock, to the
// nanosecond: Process of this process lies between two readings of its
// own CPU clock taken around it (ticks of 10 ms would fall below the
// first by up to a tick).
func TestProcessPrecise(t *testing.T) {
	for i := range 5 {
		var before, after unix.Timespec
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &before)
		got, err := Process(os.Getpid())
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &after)
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := time.Duration(before.Nano()), time.Duration(after.Nano()); got < lo || got > hi {
			t.Fatalf("try %d: Process(self) = %v, outside its own clock's [%v, %v]", i, got, lo, hi)
		}
	}
	if _, err := Process(1 << 30); err == nil {
		t.Error("no error for a pid that does not exist")
	}
}
