package reaper

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
)

// TestOrphansReapedOwnedLeft: this test process becomes a subreaper; a
// child owned by an exec.Cmd exits at once and stays a zombie until its
// Wait; a shell starts a grandchild and exits at once, so the grandchild
// is re-parented here. When it exits it is reaped, and the owned child is
// left for its Wait, which still gets its exit status.
func TestOrphansReapedOwnedLeft(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owned := exec.Command("sh", "-c", "exit 7")
	var mine atomic.Int64
	reaped, err := Start(ctx, func(pid int) bool { return int64(pid) == mine.Load() })
	if err != nil {
		t.Fatal(err)
	}
	if err := owned.Start(); err != nil {
		t.Fatal(err)
	}
	mine.Store(int64(owned.Process.Pid))
	// A zombie before the orphan below is one (or gone, if the reaper
	// took it: its Wait says so).
	testkit.WaitFor(t, "the owned child to exit", func() bool {
		p, there := testkit.Lookup(owned.Process.Pid)
		return !there || p.State == 'Z'
	})
	// The orphan: sh prints the pid of a 0.3 s sleep in the background
	// and exits without waiting for it.
	out, err := exec.Command("sh", "-c", "sleep 0.3 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	reapedOrphan := func() bool {
		_, there := testkit.Lookup(orphan)
		return !there && reaped() >= 1
	}
	if !testkit.Poll(testkit.WaitTimeout, reapedOrphan) {
		p, there := testkit.Lookup(orphan)
		t.Fatalf("orphan %d not reaped after %s (reaped %d; in /proc %v, state %q)", orphan, testkit.WaitTimeout, reaped(), there, p.State)
	}
	// The orphan is reaped on the second scan that saw it a zombie. The
	// owned child was a zombie already on the first, and the scan that
	// reaped the orphan had ended when reaped() counted it: an owned
	// child taken for an orphan would have been taken by then too, so
	// no further scan (a sleep of a few ScanEvery) is waited for.
	err = owned.Wait()
	if got := testkit.ExitStatus(err); got != 7 {
		t.Errorf("owned child's Wait = %v, want exit status 7 (its status taken by the reaper?)", err)
	}
}

// TestKillOrphans: a subreaper's orphan that is still running (a shell's
// background sleep, re-parented here) is killed and waited for.
func TestKillOrphans(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Start(ctx, func(int) bool { return false }); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if n := KillOrphans(5 * time.Second); n < 1 {
		t.Fatalf("killed %d, want the orphan %d", n, orphan)
	}
	if p, there := testkit.Lookup(orphan); there {
		t.Errorf("orphan %d still there after KillOrphans (state %q)", orphan, p.State)
	}
}
