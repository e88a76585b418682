package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/internal/logtail"
	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
)

// DefaultCheckTimeout bounds a process's configuration check.
const DefaultCheckTimeout = 30 * time.Second

// proc is one process a plan started.
type proc struct {
	spec    topologies.Process
	cmd     *exec.Cmd
	logPath string
	logf    *os.File
	exited  chan struct{}
	waitErr error            // set before exited is closed
	hung    *results.Failure // set by killHung: why it was killed
}

// start starts spec's process for run id: its working directory (with
// the plan's files) under the log directory, its output in a log beside
// it, on the targets' CPUs.
func (d *Driver) start(ctx context.Context, id string, spec topologies.Process) (*proc, error) {
	name := id + "-" + spec.Role
	dir, err := safepath.Join(d.logDir, name)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("local: %s: working directory: %w", id, err)
	}
	subst := driver.Subst(dir)
	if err := driver.WritePlanFiles(dir, spec, subst); err != nil {
		return nil, fmt.Errorf("local: %s: %w", id, err)
	}
	args := spec.Args()
	for i, a := range args {
		args[i] = subst(a)
	}
	exe := d.exe
	if spec.Exe != "" {
		exe = spec.Exe
	}
	spec.Stats = subst(spec.Stats)
	if ca := spec.CheckArgs(); len(ca) > 0 {
		if err := check(ctx, exe, dir, ca, subst); err != nil {
			return nil, fmt.Errorf("local: %s: %s: %w", id, spec.Role, err)
		}
	}
	logPath, err := safepath.Join(d.logDir, name+".log")
	if err != nil {
		return nil, fmt.Errorf("local: %s: %w", id, err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("local: %s: %w", id, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := d.pin.Start(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("local: %s: start %s: %w", id, spec.Role, err)
	}
	p := &proc{spec: spec, cmd: cmd, logPath: logPath, logf: logf, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// check runs exe with the check arguments in dir and returns an error
// holding its output (the engine's own message) unless it exits 0.
func check(ctx context.Context, exe, dir string, args []string, subst func(string) string) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultCheckTimeout)
	defer cancel()
	a := make([]string, len(args))
	for i, x := range args {
		a[i] = subst(x)
	}
	cmd := exec.CommandContext(ctx, exe, a...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("configuration check %s %s failed (%w):\n%s", exe, strings.Join(a, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitReady polls the process's health URL until it answers 200, the
// process exits, ctx ends or timeout passes.
func (p *proc) waitReady(ctx context.Context, timeout time.Duration) error {
	err := driver.WaitHTTP(ctx, p.spec.Health, timeout, p.exited)
	if errors.Is(err, driver.ErrExited) {
		return fmt.Errorf("exited early (%v)", p.waitErr)
	}
	return err
}

// failure reports whether the process has exited, and how.
func (p *proc) failure() (results.Failure, bool) {
	select {
	case <-p.exited:
	default:
		return results.Failure{}, false
	}
	if p.hung != nil {
		return *p.hung, true
	}
	exit := "exited"
	if p.cmd.ProcessState != nil {
		exit = p.cmd.ProcessState.String()
	} else if p.waitErr != nil {
		exit = p.waitErr.Error()
	}
	f := results.Failure{Process: fmt.Sprintf("%s (pid %d)", p.spec.Role, p.cmd.Process.Pid), Exit: exit, LogTail: p.tailLines()}
	return driver.NameDeadWorker(f, p.spec.Role), true
}

// killHung kills p's process group, alive but not answering, and returns
// its failure: how it looked before the kill, and its log's tail.
func (p *proc) killHung() results.Failure {
	pid := p.cmd.Process.Pid
	f := driver.Unresponsive(fmt.Sprintf("%s (pid %d)", p.spec.Role, pid), proccpu.State(pid))
	syscall.Kill(-pid, syscall.SIGKILL)
	<-p.exited
	f.LogTail = p.tailLines()
	p.hung = &f
	return f
}

// tailLines returns the last lines of the process's output.
func (p *proc) tailLines() []string { return logtail.File(p.logPath, logtail.DefaultLines) }

// logTail returns the last lines of the process's output, indented, for an
// error message.
func (p *proc) logTail() string {
	return logtail.Format(p.spec.Role+" output ("+p.logPath+")", p.tailLines())
}

// stop signals the process group to drain, then kills it if it has not
// exited by the deadline or as soon as ctx ends.
func (p *proc) stop(ctx context.Context) error {
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	// A stopped process (SIGSTOP, a debugger) handles SIGTERM only once
	// continued.
	syscall.Kill(-pgid, syscall.SIGCONT)
	t := time.NewTimer(driver.DefaultStopTimeout)
	defer t.Stop()
	var err error
	select {
	case <-p.exited:
	case <-ctx.Done():
		err = fmt.Errorf("%s: killed: %w", p.spec.Role, ctx.Err())
	case <-t.C:
		err = fmt.Errorf("%s: killed after %s without exiting", p.spec.Role, driver.DefaultStopTimeout)
	}
	// The leader may be gone while a worker still runs: kill the group
	// regardless, then wait for the leader.
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.exited
	p.logf.Close()
	return err
}
