// Package reaper makes a process the reaper of the orphans below it. A
// process whose parent exits without waiting for it (a gunicorn or nginx
// worker whose master died, a daemonized helper) is re-parented to the
// nearest ancestor that asked to be a child subreaper, or to PID 1. In a
// container, "lbbench serve" or "lbbench guard" is PID 1 and nothing else
// would wait for such orphans: they would stay zombies, holding their PIDs
// (and, before they exit, their sockets) for the container's life.
//
// Start reaps only processes the caller does not own: a child the caller
// started with os/exec is waited for by its exec.Cmd, and reaping it here
// would take its exit status. An untracked zombie is reaped once seen on
// two scans in a row (ScanEvery apart), so that a child that exits at
// once, before its pid is known to the caller, is not taken from it.
package reaper

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ScanEvery is how often Start looks for zombies: a look reads
// /proc/self/task/*/children and the stat of each child, a few tens of
// microseconds. (A SIGCHLD handler would need os/signal, which only the
// programs use.)
const ScanEvery = time.Second

// Start makes this process a child subreaper and reaps, until ctx ends,
// each zombie child for which owned reports false. It returns a function
// that reports how many it has reaped so far.
func Start(ctx context.Context, owned func(pid int) bool) (reaped func() int, err error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, err
	}
	count := make(chan int, 1)
	count <- 0
	go func() {
		t := time.NewTicker(ScanEvery)
		defer t.Stop()
		seen := map[int]bool{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n := 0
			seen, n = reap(seen, owned)
			count <- <-count + n
		}
	}()
	return func() int { n := <-count; count <- n; return n }, nil
}

// reap waits for each zombie child not owned that was also in seen (the
// last scan's unowned zombies) and returns this scan's unowned zombies
// not reaped, and how many it reaped.
func reap(seen map[int]bool, owned func(pid int) bool) (map[int]bool, int) {
	next := map[int]bool{}
	n := 0
	for _, pid := range zombieChildren() {
		if owned(pid) {
			continue
		}
		if !seen[pid] {
			next[pid] = true
			continue
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && got == pid {
			n++
		}
	}
	return next, n
}

// zombieChildren lists this process's children that have exited and not
// been waited for: those whose state is Z.
func zombieChildren() []int {
	var out []int
	for _, pid := range children() {
		if zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// children lists this process's children, from /proc/self/task/*/children.
func children() []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/self/task/[0-9]*/children")
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// zombie reports whether pid has exited and awaits its wait.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// KillOrphans kills (SIGKILL) every child of this process that is still
// running and waits up to wait for each to exit: called by a subreaper
// once the command it ran has exited and been waited for, its remaining
// children are orphans re-parented to it (nginx's workers whose master
// died without stopping them), which would otherwise outlive it. It
// returns how many it killed.
func KillOrphans(wait time.Duration) int {
	pids := children()
	deadline := time.Now().Add(wait)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if got == pid || err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return len(pids)
}
