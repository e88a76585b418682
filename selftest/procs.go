package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/driver"
)

// child is a server process started for the self-benchmark, in a process
// group of its own so that stop ends whatever it started.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startChild starts exe with args, its output appended to logPath.
func startChild(name, logPath, exe string, args ...string) (*child, error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("selftest: start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		log.Close()
		close(c.done)
	}()
	return c, nil
}

// exited reports why c has stopped, or nil while it runs.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("selftest: %s exited: %v (its log: %s)", c.name, c.err, c.cmd.Stdout.(*os.File).Name())
	default:
		return nil
	}
}

// stop ends c's process group: SIGTERM, then SIGKILL after 5 s.
func (c *child) stop() {
	pg := -c.cmd.Process.Pid
	syscall.Kill(pg, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(pg, syscall.SIGKILL)
		<-c.done
	}
	// Whatever the group left (a worker the supervisor did not reap).
	syscall.Kill(pg, syscall.SIGKILL)
}

// usage is what a finished process spent, from wait4.
type usage struct {
	cpu    time.Duration
	maxRSS int64 // bytes
}

// runToEnd runs exe with args to its end, its standard output to stdout
// (nil: discarded) and its standard error to logPath, and returns what it
// spent; a non-zero exit is an error that quotes the log's tail.
func runToEnd(ctx context.Context, logPath string, stdout io.Writer, exe string, args ...string) (usage, error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return usage{}, fmt.Errorf("selftest: %w", err)
	}
	defer log.Close()
	fmt.Fprintf(log, "$ %s %s\n", exe, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = stdout, log
	if stdout == nil {
		cmd.Stdout = io.Discard
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return usage{}, fmt.Errorf("selftest: %s: %w", filepath.Base(exe), err)
	}
	// The peak RSS is read from the process's own high-water mark while
	// it runs: wait4's ru_maxrss would be at least this program's, whose
	// memory the child shared until its exec.
	stop := make(chan struct{})
	peak := make(chan int64, 1)
	go func() { peak <- watchHWM(cmd.Process.Pid, stop) }()
	err = cmd.Wait()
	close(stop)
	hwm := <-peak
	if cmd.ProcessState == nil {
		return usage{}, fmt.Errorf("selftest: %s: %w", filepath.Base(exe), err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var u usage
	if ru != nil {
		u = usage{
			cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
			maxRSS: hwm,
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return u, ctx.Err()
		}
		return u, fmt.Errorf("selftest: %s %s: %w%s", filepath.Base(exe), strings.Join(args, " "), err, logTail(logPath))
	}
	return u, nil
}

// watchHWM reads pid's VmHWM (peak resident set) every 50 ms until stop
// is closed and returns the last reading, in bytes.
func watchHWM(pid int, stop <-chan struct{}) int64 {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var last int64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			if kb, ok := vmHWM(b); ok {
				last = max(last, kb<<10)
			}
		}
		select {
		case <-stop:
			return last
		case <-t.C:
		}
	}
}

// vmHWM finds "VmHWM: N kB" in a /proc/PID/status.
func vmHWM(status []byte) (int64, bool) {
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// logTail is the last lines of a log, for an error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "\n  " + strings.Join(lines[max(0, len(lines)-5):], "\n  ")
}

// freePort is a TCP port of 127.0.0.1 nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("selftest: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitOK waits up to 10 s for url to answer 200 (driver.WaitHTTP), or
// c to exit.
func waitOK(ctx context.Context, c *child, url string) error {
	err := driver.WaitHTTP(ctx, url, 10*time.Second, c.done)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // interrupted: no need to say more
	case errors.Is(err, driver.ErrExited):
		return c.exited()
	}
	return fmt.Errorf("selftest: %s: %w", c.name, err) // WaitHTTP names the URL and the wait
}
