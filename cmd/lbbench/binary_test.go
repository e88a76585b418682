package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/neighbours"
	"github.com/lbbench/lbbench/internal/testkit"
)

// The end-to-end tests run the built binary (bin) only through this file:
// lb for a command run to its end, cmdOf for one whose process a test
// drives itself (signals, a custom wait), start for one left running in
// the background. A program that runs lbbench in turn (scripts/gate, a
// workflow's step in bash) runs through here too, as an invocation's exe.

// runLimit bounds a command run to its end: a safety net against a hang,
// which fails the test, not a timing assertion.
const runLimit = 5 * time.Minute

// invocation is one command line of the binary and what it runs with.
type invocation struct {
	// exe is the program run, bin when empty.
	exe   string
	args  []string
	env   []string // added to the test's environment
	dir   string   // working directory ("" for the test's)
	stdin io.Reader
	// limit bounds the run (runLimit when zero): past it the process
	// group is killed and the test fails, a hang being the fault.
	limit time.Duration
}

// String is the command line, for a test's messages: "lbbench ARGS" for
// the binary, else the program's name and its arguments.
func (inv invocation) String() string {
	name := "lbbench"
	if inv.exe != "" {
		name = filepath.Base(inv.exe)
	}
	return strings.Join(append([]string{name}, inv.args...), " ")
}

// outcome is what a finished command gave.
type outcome struct {
	out            string // stdout and stderr as interleaved in time
	stdout, stderr string
	code           int // exit status, -1 when a signal ended it
}

// lb runs the binary with args to its end.
func lb(t testing.TB, args ...string) outcome {
	t.Helper()
	return invocation{args: args}.run(t)
}

// testEnv names, in the environment of every process a test starts (and
// so of the workers and generators lbbench starts in turn, which inherit
// it), the test that started it: testProcs finds a test's own processes
// while other tests run in parallel.
const testEnv = "LBBENCH_E2E_TEST"

// cmdOf is the command of inv for test t, in its own process group (so
// that the test's end can kill what it leaves), not yet started.
func (inv invocation) cmdOf(t testing.TB) *exec.Cmd {
	exe := inv.exe
	if exe == "" {
		exe = bin
	}
	cmd := exec.Command(exe, inv.args...)
	cmd.Dir = inv.dir
	// Each top-level test registers its runs in a directory of its own:
	// the tests that run in parallel do not invalidate each other's runs
	// as concurrent (a test of that gives its own LBBENCH_RUNS_DIR).
	top, _, _ := strings.Cut(t.Name(), "/")
	runs := neighbours.EnvDir + "=" + filepath.Join(os.Getenv(neighbours.EnvDir), top)
	cmd.Env = append(append(append(os.Environ(), runs), inv.env...), testEnv+"="+t.Name())
	cmd.Stdin = inv.stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// run runs inv to its end within its limit (invocation.start and
// running.waitWithin).
func (inv invocation) run(t testing.TB) outcome {
	t.Helper()
	limit := inv.limit
	if limit <= 0 {
		limit = runLimit
	}
	r := inv.start(t)
	code := r.waitWithin(t, limit)
	if _, exited := r.err.(*exec.ExitError); r.err != nil && !exited {
		t.Fatalf("%s: %v", inv, r.err)
	}
	return outcome{out: r.out.String(), stdout: r.stdout.String(), stderr: r.stderr.String(), code: code}
}

// mustRun is run for a command that must succeed: any other exit fails the
// test with its output.
func (inv invocation) mustRun(t testing.TB) outcome {
	t.Helper()
	r := inv.run(t)
	if r.code != 0 {
		t.Fatalf("%s: exit %d:\n%s", inv, r.code, r.out)
	}
	return r
}

// lbOK is lb for a command that must succeed.
func lbOK(t testing.TB, args ...string) outcome {
	t.Helper()
	return invocation{args: args}.mustRun(t)
}

// running is a command started in the background. Its process is waited
// for by running alone: wait, waitWithin and done tell of its end.
type running struct {
	cmdline string // invocation.String
	process *os.Process
	out     *testkit.Buffer // stdout and stderr so far, interleaved
	stdout  *testkit.Buffer // stdout so far
	stderr  *testkit.Buffer // stderr so far
	done    chan struct{}   // closed when the process has ended
	err     error           // Wait's, once done is closed
}

// start starts inv in the background; the test's end kills its process
// group and waits for it.
func (inv invocation) start(t testing.TB) *running {
	t.Helper()
	cmd := inv.cmdOf(t)
	r := &running{cmdline: inv.String(), out: new(testkit.Buffer), stdout: new(testkit.Buffer), stderr: new(testkit.Buffer), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(r.stdout, r.out), io.MultiWriter(r.stderr, r.out)
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", inv, err)
	}
	r.process = cmd.Process
	go func() { r.err = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		syscall.Kill(-r.process.Pid, syscall.SIGKILL)
		<-r.done
	})
	return r
}

// start runs the binary with args in the background (invocation.start).
func start(t testing.TB, args ...string) *running {
	t.Helper()
	return invocation{args: args}.start(t)
}

// signal sends sig to the command's process (not its group).
func (r *running) signal(sig os.Signal) error { return r.process.Signal(sig) }

// wait waits for the command to end and returns Wait's error.
func (r *running) wait() error {
	<-r.done
	return r.err
}

// waitWithin waits for the command to end within d and returns its exit
// status; past d the group is killed and the test fails.
func (r *running) waitWithin(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return testkit.ExitStatus(r.err)
	case <-time.After(d):
		syscall.Kill(-r.process.Pid, syscall.SIGKILL)
		<-r.done
		t.Fatalf("%s: still running after %v:\n%s", r.cmdline, d, r.out.String())
	}
	return -1
}

// runBin runs the binary to its end in dir with extra env and returns its
// interleaved output and exit status.
func runBin(t testing.TB, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	r := invocation{args: args, env: env, dir: dir}.run(t)
	return r.out, r.code
}

// lbbench runs the binary to its end and returns its stdout, stderr and
// exit status apart.
func lbbench(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := lb(t, args...)
	return r.stdout, r.stderr, r.code
}

// binCmd is the command of the binary with args (invocation.cmdOf), for a
// test that drives the process itself.
func binCmd(t testing.TB, args ...string) *exec.Cmd { return invocation{args: args}.cmdOf(t) }

// testProcs lists the live processes running the binary that test t, or
// one of its subtests, started (testEnv), directly or through lbbench.
func testProcs(t testing.TB) []testkit.Proc {
	return testkit.LiveProcs(func(p testkit.Proc) bool {
		if p.Exe != bin {
			return false
		}
		name := testkit.Getenv(testkit.Environ(p.PID), testEnv)
		return name == t.Name() || strings.HasPrefix(name, t.Name()+"/")
	})
}
