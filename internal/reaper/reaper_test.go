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
// shell starts a grandchild and exits at once, so the grandchild is
// re-parented here. When it exits it is reaped, and a child owned by an
// exec.Cmd is left for its Wait, which still gets its exit status.
func TestOrphansReapedOwnedLeft(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owned := exec.Command("sh", "-c", "exit 7")
	var mine atomic.Int64
	reaped, err := Start(ctx, func(pid int) bool { return int64(pid) == mine.Load() })
	if err != nil {
		t.Fatal(err)
	}
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
	if err := owned.Start(); err != nil {
		t.Fatal(err)
	}
	mine.Store(int64(owned.Process.Pid))
	reapedOrphan := func() bool {
		_, there := testkit.Lookup(orphan)
		return !there && reaped() >= 1
	}
	if !testkit.Poll(testkit.WaitTimeout, reapedOrphan) {
		p, there := testkit.Lookup(orphan)
		t.Fatalf("orphan %d not reaped after %s (reaped %d; in /proc %v, state %q)", orphan, testkit.WaitTimeout, reaped(), there, p.State)
	}
	time.Sleep(3 * ScanEvery) // the owned child has long exited: left alone
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
