package neighbours

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv, set to a registry directory, makes the test binary a run of
// its own (helper): it joins there as scenario "helper", prints "joined",
// and leaves when its standard input ends.
const helperEnv = "NEIGHBOURS_TEST_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helper(dir))
	}
	os.Exit(m.Run())
}

func helper(dir string) int {
	r, _, err := Join(dir, Run{PID: os.Getpid(), Scenario: "helper", Started: time.Now()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("joined")
	io.Copy(io.Discard, os.Stdin)
	if err := r.Leave(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// otherRun is another process registered in dir: the test binary as
// helper, joined when otherRun returns. Closing stdin makes it leave and
// exit; the test's cleanup kills it if it is still there.
type otherRun struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startOther(t *testing.T, dir string) *otherRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "joined\n" {
		t.Fatalf("helper said %q, %v; want joined", line, err)
	}
	return &otherRun{cmd: cmd, stdin: stdin}
}

// leave makes o leave the registry and waits for it to exit.
func (o *otherRun) leave(t *testing.T) {
	t.Helper()
	o.stdin.Close()
	if err := o.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

func me(t *testing.T, dir string) (*Registration, []Run) {
	t.Helper()
	r, others, err := Join(dir, Run{PID: os.Getpid(), Scenario: "test", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Leave() })
	return r, others
}

func pids(runs []Run) []int {
	var out []int
	for _, r := range runs {
		out = append(out, r.PID)
	}
	return out
}

// TestTwoProcesses: a run that joins sees the one already there, live,
// with its pid and scenario; once that one has left, it is seen no more.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	other := startOther(t, dir)
	r, others := me(t, dir)
	if len(others) != 1 || others[0].PID != other.cmd.Process.Pid || others[0].Scenario != "helper" {
		t.Fatalf("joined beside %+v, want the helper (pid %d)", others, other.cmd.Process.Pid)
	}
	if !strings.HasPrefix(others[0].String(), fmt.Sprintf("pid %d, scenario helper, since ", other.cmd.Process.Pid)) {
		t.Errorf("described as %q", others[0])
	}
	other.leave(t)
	if live, err := r.Live(); err != nil || len(live) != 0 {
		t.Errorf("after the helper left: %+v, %v; want none", live, err)
	}
}

// TestWatchSeesWhoCameAndWent: a window learns of a run that joined and
// left inside it (from the line that run appended to this one's file), and
// of one there when it began; a window after both is clean, and a run
// that came and went before a window is not in it.
func TestWatchSeesWhoCameAndWent(t *testing.T) {
	dir := t.TempDir()
	r, _ := me(t, dir)
	before := startOther(t, dir)
	before.leave(t)

	end := r.Watch()
	inside := startOther(t, dir)
	insidePID := inside.cmd.Process.Pid
	inside.leave(t)
	got := end()
	if len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("pid %d, scenario helper", insidePID)) {
		t.Errorf("window saw %q, want only the helper that came and went inside it (pid %d)", got, insidePID)
	}

	there := startOther(t, dir)
	end = r.Watch()
	got = end()
	if len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("pid %d,", there.cmd.Process.Pid)) {
		t.Errorf("window saw %q, want the helper there throughout (pid %d)", got, there.cmd.Process.Pid)
	}
	there.leave(t)
	if got := r.Watch()(); len(got) != 0 {
		t.Errorf("a window alone saw %q", got)
	}
}

// TestDeadRunsNotReported: the file of a run killed while registered (its
// lock gone with it), and one written by hand as a dead run's would be,
// are not reported and are removed; so is a file of a run that died while
// joining.
func TestDeadRunsNotReported(t *testing.T) {
	dir := t.TempDir()
	killed := startOther(t, dir)
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.cmd.Wait()
	line := fmt.Sprintf(`{"pid":%d,"scenario":"dead","started":"2026-01-02T03:04:05Z"}`+"\n", 1<<22+1)
	for _, name := range []string{"4194305-0011223344556677.run", ".4194305-8899aabbccddeeff.new"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The run that died joining did so a while ago (joinGrace).
	long := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(dir, ".4194305-8899aabbccddeeff.new"), long, long); err != nil {
		t.Fatal(err)
	}
	r, others := me(t, dir)
	if len(others) != 0 {
		t.Errorf("joined beside %+v, want none: every other run here is dead", others)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 1 || left[0] != r.name {
		t.Errorf("registry holds %q, want only this run's %s", left, r.name)
	}
}

// TestJoiningFileLeftAlone: the file of a run joining now, made but not
// yet locked, is neither removed nor locked by another run's scan (two
// runs started together: the second's rename failed, "no such file",
// when the first's scan removed it), and is not reported as a run.
func TestJoiningFileLeftAlone(t *testing.T) {
	dir := t.TempDir()
	joining := filepath.Join(dir, ".4194306-0011223344556677.new")
	line := fmt.Sprintf(`{"pid":%d,"scenario":"joining","started":"2026-01-02T03:04:05Z"}`+"\n", 1<<22+2)
	if err := os.WriteFile(joining, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	_, others := me(t, dir)
	if len(others) != 0 {
		t.Errorf("joined beside %+v, want none: the joining run is not registered yet", others)
	}
	f, err := os.OpenFile(joining, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("the joining run's file was removed: %v", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("the joining run cannot lock its file: %v", err)
	}
}

// TestUntrustedFiles: what anyone may put in the shared directory is not
// taken for a run: a symlink, a directory, a live file whose line is not
// a plausible run (a control character in its name), lines appended that
// are not runs.
func TestUntrustedFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(target, []byte("keep\n"), 0o644)
	os.Symlink(target, filepath.Join(dir, "1-aa.run"))
	os.Mkdir(filepath.Join(dir, "2-bb.run"), 0o755)
	other := startOther(t, dir)
	r, others := me(t, dir)
	if !slices.Equal(pids(others), []int{other.cmd.Process.Pid}) {
		t.Errorf("joined beside %+v, want the helper alone", others)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("a symlink's target was written: %q", b)
	}
	end := r.Watch()
	f, err := os.OpenFile(filepath.Join(dir, r.name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "not json\n{\"pid\":7,\"scenario\":\"\\u001b[2Jx\",\"started\":\"2026-01-02T03:04:05Z\"}\n{\"pid\":-1,\"scenario\":\"x\",\"started\":\"2026-01-02T03:04:05Z\"}\n")
	f.Close()
	if got := end(); len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("pid %d,", other.cmd.Process.Pid)) {
		t.Errorf("window saw %q, want the helper alone", got)
	}
	other.leave(t)
}

// TestDir: LBBENCH_RUNS_DIR names the directory; by default it is under
// the temporary directory.
func TestDir(t *testing.T) {
	t.Setenv(EnvDir, "")
	if got := Dir(); got != filepath.Join(os.TempDir(), "lbbench-runs") {
		t.Errorf("default %q", got)
	}
	t.Setenv(EnvDir, "/elsewhere")
	if got := Dir(); got != "/elsewhere" {
		t.Errorf("with %s: %q", EnvDir, got)
	}
}

// TestLeaveIdempotent: Leave twice is fine, and a run that left is seen
// by nobody.
func TestLeaveIdempotent(t *testing.T) {
	dir := t.TempDir()
	r, _ := me(t, dir)
	if err := r.Leave(); err != nil {
		t.Fatal(err)
	}
	if err := r.Leave(); err != nil {
		t.Errorf("second Leave: %v", err)
	}
	s, others := me(t, dir)
	if len(others) != 0 {
		t.Errorf("a run that left is seen: %+v", others)
	}
	s.Leave()
}
