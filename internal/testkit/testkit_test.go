package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestPorts(t *testing.T) {
	t.Parallel()
	ports := FreePorts(t, 5)
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: not distinct and positive", ports)
		}
		seen[p] = true
	}
	p := ConsecutivePorts(t, 4)
	if p < PortsLow || p+4 > PortsLow+PortsSpan {
		t.Fatalf("consecutive ports from %d, outside %d..%d", p, PortsLow, PortsLow+PortsSpan)
	}
	for i := range 4 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+i))
		if err != nil {
			t.Fatalf("port %d of the run from %d: %v", p+i, p, err)
		}
		ln.Close()
	}
}

func TestWait(t *testing.T) {
	t.Parallel()
	n := 0
	WaitFor(t, "three tries", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("condition tried %d times, want 3", n)
	}
	if Poll(20*time.Millisecond, func() bool { return false }) {
		t.Error("a condition that never holds held")
	}
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprint(&b, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if b.Len() != 800 {
		t.Errorf("%d bytes written, want 800", b.Len())
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(WorkerHeader, "3")
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	if got := ServedBy(t, srv.URL+"/work?x=1"); got != "3" {
		t.Errorf("served by %q, want 3", got)
	}
	if status, w := Worker(t, srv.URL+"/missing"); status != http.StatusNotFound || w != "3" {
		t.Errorf("status %d, worker %q", status, w)
	}
	if _, _, err := Probe("unix", filepath.Join(t.TempDir(), "none.sock"), "/"); err == nil {
		t.Error("a probe of a missing socket succeeded")
	}
}

// TestFetch: the status, worker and whole body with the test's own
// client, on a keep-alive connection it reuses; a body cut short and a
// refused connection are errors.
func TestFetch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(WorkerHeader, "5")
		if r.URL.Path == "/short" {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "ab")
			return // the server closes the connection: the body ends at 2 of 10 bytes
		}
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "body")
	}))
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := srv.Client()
	for range 2 {
		got, err := Fetch(c, srv.URL+"/x")
		if err != nil || got != (Response{Status: http.StatusTeapot, Worker: "5", Body: "body"}) {
			t.Fatalf("Fetch = %+v, %v", got, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for two fetches with a keep-alive client, want 1", n)
	}
	if got, err := Fetch(c, srv.URL+"/short"); err == nil || got.Status != http.StatusOK || got.Body != "ab" {
		t.Errorf("a body cut short: %+v, %v; want the error with what was read", got, err)
	}
	if got, err := Fetch(c, "http://127.0.0.1:"+strconv.Itoa(FreePort(t))+"/"); err == nil {
		t.Errorf("a fetch from a closed port: %+v", got)
	}
}

// TestLookup: a child is found with its parent, then as a zombie once it
// is killed (not alive, but there), and is gone once waited for; a pid
// that is no process is not found.
func TestLookup(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if p, ok := Lookup(pid); !ok || p.PID != pid || p.PPID != os.Getpid() || !p.Live() {
		t.Fatalf("Lookup(%d) = %+v, %v", pid, p, ok)
	}
	cmd.Process.Kill()
	WaitFor(t, "the killed child to be a zombie", func() bool {
		p, ok := Lookup(pid)
		return ok && p.State == 'Z'
	})
	if Alive(pid) {
		t.Errorf("zombie %d alive", pid)
	}
	cmd.Wait()
	if p, ok := Lookup(pid); ok {
		t.Errorf("Lookup(%d) after Wait = %+v, want none", pid, p)
	}
	if p, ok := Lookup(-1); ok {
		t.Errorf("Lookup(-1) = %+v", p)
	}
}

func TestProcsAndExitStatus(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	kids := PIDs(Children(os.Getpid()))
	found := false
	for _, k := range kids {
		found = found || k == pid
	}
	if !found || !Alive(pid) {
		t.Fatalf("child %d not among %v (alive %v)", pid, kids, Alive(pid))
	}
	p := LiveProcs(func(p Proc) bool { return p.PID == pid })
	if len(p) != 1 || p[0].Subcommand() != "30" || p[0].Arg("sleep") != "30" || p[0].PPID != os.Getpid() {
		t.Fatalf("procs %+v", p)
	}
	cmd.Process.Kill()
	err := cmd.Wait()
	if Alive(pid) {
		t.Errorf("%d alive after Wait", pid)
	}
	if got := ExitStatus(err); got != -1 {
		t.Errorf("exit status of a killed command %d, want -1", got)
	}
	if got := ExitStatus(exec.Command("sh", "-c", "exit 3").Run()); got != 3 {
		t.Errorf("exit status %d, want 3", got)
	}
	if got := ExitStatus(nil); got != 0 {
		t.Errorf("exit status of nil %d", got)
	}
	if got := ExitStatus(errors.New("no such file")); got != -1 {
		t.Errorf("exit status of a command that did not start %d", got)
	}
}

// TestEnviron: a child started with a marker in its environment shows it
// in Environ; a pid that is gone gives nil.
func TestEnviron(t *testing.T) {
	// The shell says it runs once it has been exec'd: before that the
	// child's /proc/PID/environ is its parent's copy, or empty.
	cmd := exec.Command("sh", "-c", "echo ready; sleep 10")
	cmd.Env = append(os.Environ(), "TESTKIT_MARK=one", "TESTKIT_MARK=two")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep goes with it
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the child said %q, %v", line, err)
	}
	env := Environ(cmd.Process.Pid)
	if got := Getenv(env, "TESTKIT_MARK"); got != "two" {
		t.Errorf("TESTKIT_MARK = %q in %d variables, want the last one given, two", got, len(env))
	}
	if got := Getenv(env, "TESTKIT_MAR"); got != "" {
		t.Errorf("a prefix of a key matched: %q", got)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if env := Environ(cmd.Process.Pid); env != nil {
		t.Errorf("environment of a reaped process: %v", env)
	}
}

// TestBuildStatic: each call gives an executable of its own, both the one
// build (go build found it up to date the second time and left it); one
// removed, the other still runs.
func TestBuildStatic(t *testing.T) {
	t.Parallel()
	exe, remove, err := BuildStatic("./testdata/hello")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	again, removeAgain, err := BuildStatic("./testdata/hello")
	if err != nil {
		t.Fatal(err)
	}
	defer removeAgain()
	a, errA := os.Stat(exe)
	b, errB := os.Stat(again)
	if errA != nil || errB != nil || exe == again || !os.SameFile(a, b) {
		t.Fatalf("%s and %s (%v, %v): want two paths of one build", exe, again, errA, errB)
	}
	remove()
	if _, err := os.Stat(exe); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after its remove: %v", exe, err)
	}
	if out, err := exec.Command(again).Output(); err != nil || string(out) != "hello\n" {
		t.Errorf("%s: %q, %v", again, out, err)
	}
}
