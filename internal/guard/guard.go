// Package guard runs a command and takes its process group down with it,
// even when lbbench is killed: the proxy topology runs nginx and HAProxy
// under "lbbench guard". A driver gives each process Pdeathsig, so it dies
// with lbbench; but nginx's worker processes outlive a killed master and go
// on serving. guard has the kernel send it SIGTERM when its parent dies
// (even by SIGKILL), passes that on to the command, and kills what is left
// of its process group if the command does not stop in time.
package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/internal/reaper"
	"golang.org/x/sys/unix"
)

// Subcommand is the lbbench subcommand that runs Run.
const Subcommand = "guard"

// Args returns the lbbench arguments that run command (the executable and
// its arguments) under guard: the subcommand, "--", then command.
func Args(command ...string) []string {
	return append([]string{Subcommand, "--"}, command...)
}

// ExitError carries the guarded command's exit status out of Run. Err, when
// set, says why; a nil Err means the command printed its own message.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// guardStopTimeout bounds how long guard waits for its command to exit
// after passing on SIGTERM, before it kills the whole process group.
const guardStopTimeout = 5 * time.Second

// guardArmed marks the second stage of guard (see runGuard).
const guardArmed = "--armed"

// Run runs "lbbench guard" with the arguments that follow the subcommand
// (Args builds them). It runs in two stages. The parent-death signal is a property of
// each thread, and the driver set SIGKILL on the thread that started this
// process, which would kill guard before it could act. So the first stage
// sets SIGTERM on its own thread and re-executes itself from that thread:
// after execve it is the only thread, with SIGTERM. The second stage
// (guardArmed PPID -- COMMAND...) runs the command.
func Run(ctx context.Context, args []string) error {
	if len(args) >= 2 && args[0] == guardArmed {
		ppid, err := strconv.Atoi(args[1])
		if err != nil {
			return fmt.Errorf("guard: bad parent pid %q", args[1])
		}
		if os.Getppid() != ppid {
			return errors.New("guard: the parent exited before the command started")
		}
		return superviseGuarded(ctx, trimDashes(args[2:]))
	}
	args = trimDashes(args)
	if len(args) == 0 {
		return errors.New("guard: no command given (usage: lbbench guard -- COMMAND [ARG...])")
	}
	runtime.LockOSThread() // prctl and execve on the same thread
	ppid := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return fmt.Errorf("guard: prctl: %w", err)
	}
	argv := append([]string{os.Args[0], Subcommand, guardArmed, strconv.Itoa(ppid), "--"}, args...)
	// /proc/self/exe is this very binary, even if a rebuild replaced the file.
	return fmt.Errorf("guard: re-exec: %w", syscall.Exec("/proc/self/exe", argv, os.Environ()))
}

func trimDashes(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		return args[1:]
	}
	return args
}

// superviseGuarded runs args in this process's group and returns its exit
// status. ctx ends on SIGTERM or SIGINT (main's NotifyContext): from the
// driver stopping the group, or from the kernel when lbbench died.
func superviseGuarded(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("guard: no command given")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// nginx's and HAProxy's workers whose master died come here rather
	// than to an init that may not reap them (guard is PID 1 in a
	// container). A subreaper before the command starts: one that exits
	// at once leaves its children to init otherwise (seen in CI). The
	// reaper reaps a zombie only on its second look, a second apart: by
	// then the command's pid is known.
	var cmdPID atomic.Int64
	reapCtx, stopReaping := context.WithCancel(context.Background())
	defer stopReaping()
	if _, err := reaper.Start(reapCtx, func(pid int) bool { return int64(pid) == cmdPID.Load() }); err != nil {
		fmt.Fprintln(os.Stderr, "lbbench guard: cannot reap orphans:", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	cmdPID.Store(int64(cmd.Process.Pid))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// nginx's master stops its workers on SIGTERM before it exits.
		cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(guardStopTimeout)
		defer t.Stop()
		select {
		case err = <-done:
		case <-t.C:
			// Kills this process too: there is nothing left to do.
			syscall.Kill(0, syscall.SIGKILL)
		}
	}
	// The command has exited. Its children that outlived it (nginx's
	// workers, when their master was killed rather than stopped) are
	// orphans re-parented here: take them down too.
	if n := reaper.KillOrphans(time.Second); n > 0 {
		fmt.Fprintf(os.Stderr, "lbbench guard: killed %d process(es) that %s left running\n", n, args[0])
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return &ExitError{Code: code} // the command has said why
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("guard: %s: %w", args[0], err)}
	}
	if err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	return nil
}
