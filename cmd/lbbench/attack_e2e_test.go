package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
)

// vegetaModule is the vegeta whose CLI reads what "attack --format vegeta"
// writes; the version is the one go.mod pins.
const vegetaModule = "github.com/tsenart/vegeta/v12"

var (
	vegetaOnce sync.Once
	vegetaPath string
	vegetaErr  error
)

// vegetaCLI installs the vegeta CLI at the version go.mod pins (from the
// module proxy or the module cache) into a temporary directory, once.
func vegetaCLI(t *testing.T) string {
	t.Helper()
	vegetaOnce.Do(func() {
		v, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", vegetaModule).Output()
		if err != nil {
			vegetaErr = fmt.Errorf("go list -m %s: %w", vegetaModule, err)
			return
		}
		dir := filepath.Join(filepath.Dir(bin), "vegeta-bin")
		install := exec.Command("go", "install", vegetaModule+"@"+strings.TrimSpace(string(v)))
		install.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0")
		if out, err := install.CombinedOutput(); err != nil {
			vegetaErr = fmt.Errorf("go install %s@%s: %w\n%s", vegetaModule, v, err, out)
			return
		}
		vegetaPath = filepath.Join(dir, "vegeta")
	})
	if vegetaErr != nil {
		t.Fatal(vegetaErr)
	}
	return vegetaPath
}

// startAttackWorkers runs "lbbench serve" with two workers and returns its port.
func startAttackWorkers(t *testing.T) int {
	t.Helper()
	port, admin := freePort(t), freePort(t)
	start(t, "serve", "--workers", "2", "--listen", "reuseport",
		"--port", strconv.Itoa(port), "--admin", "127.0.0.1:"+strconv.Itoa(admin))
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", admin))
	return port
}

// sh runs a shell command line in dir and returns its combined output and
// exit status.
func sh(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	c := exec.Command("sh", "-c", line)
	c.Dir = dir
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%s: %v", line, err)
	return "", 0
}

// TestAttackVegetaReport is the "done when": vegeta's http
// format on standard input, a vegeta rate, vegeta's gob results, read by
// the real "vegeta report" (at the version go.mod pins) and "vegeta plot",
// against real workers.
func TestAttackVegetaReport(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds vegeta, attacks for 3 s")
	}
	vegeta := vegetaCLI(t)
	port := startAttackWorkers(t)
	dir := t.TempDir()
	line := fmt.Sprintf(`echo "GET http://127.0.0.1:%d/work?ms=1" | %s attack --rate 50/1s --duration 3s -o r.bin --format vegeta && %s report < r.bin`, port, bin, vegeta)
	out, code := sh(t, dir, line)
	t.Logf("%s\n%s", line, out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, re := range []string{
		`Requests\s+\[total, rate, throughput\]\s+150, 50\.\d\d, `,
		`Success\s+\[ratio\]\s+100\.00%`,
		`Status Codes\s+\[code:count\]\s+200:150\s`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("vegeta report does not match %s", re)
		}
	}

	// vegeta plot reads the same file.
	out, code = sh(t, dir, vegeta+" plot < r.bin > plot.html")
	if code != 0 {
		t.Fatalf("vegeta plot: exit %d: %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "plot.html")); !bytes.Contains(bytes.ToLower(b), []byte("<html")) || !bytes.Contains(b, []byte("150")) {
		t.Errorf("vegeta plot wrote %d bytes, not a page of 150 requests", len(b))
	}

	// JSON lines and CSV as vegeta encodes them, from a --targets file:
	// vegeta report reads both (it detects the encoding).
	tf := filepath.Join(dir, "targets.txt")
	os.WriteFile(tf, []byte(fmt.Sprintf("# vegeta's http format\nGET http://127.0.0.1:%d/work?ms=1\nX-Test: 1\n", port)), 0o644)
	for _, f := range []struct{ format, typ string }{{"vegeta-json", "json"}, {"vegeta-csv", "csv"}} {
		out, code = sh(t, dir, fmt.Sprintf(`%s attack --targets targets.txt --rate 1/20ms --duration 1s -o r.%s --format %s </dev/null && %s report r.%s`, bin, f.typ, f.format, vegeta, f.typ))
		if code != 0 || !regexp.MustCompile(`Requests\s+\[total, rate, throughput\]\s+50, `).MatchString(out) ||
			!regexp.MustCompile(`Status Codes\s+\[code:count\]\s+200:50\s`).MatchString(out) {
			t.Errorf("%s: exit %d, want 50 requests, all 200:\n%s", f.format, code, out)
		}
	}
}

// TestAttackKeepsTargetPath: a --target URL with a path and query is
// sent as given (it used to get the class path appended, 400 with exit
// 0), and a run in which every request fails exits 1 and says so.
func TestAttackKeepsTargetPath(t *testing.T) {
	t.Parallel() // calls no waitNoProcs; the serial tests that do end before this starts
	port := startAttackWorkers(t)
	dir := t.TempDir()
	out, code := sh(t, dir, fmt.Sprintf(`%s attack --target "http://127.0.0.1:%d/work?ms=1" --rate 100 --duration 500ms -o m.json </dev/null`, bin, port))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	m, err := results.ReadMeasurement(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 50 || m.Errors != 0 {
		t.Errorf("%d requests, %d errors %v; want 50, none", m.Requests, m.Errors, m.ErrorKinds)
	}

	out, code = sh(t, dir, fmt.Sprintf(`%s attack --target "http://127.0.0.1:%d/work?ms=oops" --rate 100 --duration 300ms -o bad.json </dev/null`, bin, port))
	if code != 1 || !strings.Contains(out, "every one of the 30 measured requests failed (400: 30)") {
		t.Errorf("all failed: exit %d (want 1): %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); err != nil {
		t.Errorf("results of a failed run not written: %v", err)
	}
}

// TestAttackBadInput: each way of giving targets twice or a bad rate is
// refused with a message saying what to do, exit 2.
func TestAttackBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, line, want string }{
		{"target and stdin", `echo "GET http://127.0.0.1:1/" | %s attack --target http://127.0.0.1:1`, "give targets one way"},
		{"target and targets", `%s attack --target http://127.0.0.1:1 --targets t.txt </dev/null`, "not both"},
		{"no target", `%s attack </dev/null`, "give --target URL, --targets FILE, or targets on standard input"},
		{"bad targets", `echo "GET" | %s attack`, "bad target"},
		{"two entries", `printf "GET http://127.0.0.1:1/\nGET http://127.0.0.1:2/\n" | %s attack`, "one entry point"},
		{"max rate", `%s attack --target http://127.0.0.1:1 --rate 0 </dev/null`, "max-rate"},
		{"bad rate", `%s attack --target http://127.0.0.1:1 --rate 5/fortnight </dev/null`, "positive duration"},
		{"bad format", `%s attack --target http://127.0.0.1:1 --format gob </dev/null`, "want lbbench, vegeta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := sh(t, dir, fmt.Sprintf(tc.line, bin))
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d (want 2), output %q (want %q)", code, out, tc.want)
			}
		})
	}
}

// TestAttackHTTPSInsecure attacks a TLS server on 127.0.0.1 with its
// self-signed certificate: refused without --insecure (exit 1, every
// request failed), measured with it.
func TestAttackHTTPSInsecure(t *testing.T) {
	t.Parallel() // calls no waitNoProcs; the serial tests that do end before this starts
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RequestURI() != "/x?y=1" {
			http.Error(w, "wrong path "+r.URL.RequestURI(), http.StatusNotFound)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	out, code := sh(t, dir, fmt.Sprintf(`%s attack --target "%s/x?y=1" --insecure --rate 100 --duration 300ms -o m.json </dev/null`, bin, srv.URL))
	if code != 0 {
		t.Fatalf("--insecure: exit %d: %s", code, out)
	}
	if m, err := results.ReadMeasurement(filepath.Join(dir, "m.json")); err != nil || m.Requests != 30 || m.Errors != 0 {
		t.Errorf("--insecure: %+v, %v; want 30 requests, no error", m, err)
	}
	out, code = sh(t, dir, fmt.Sprintf(`%s attack --target "%s/x?y=1" --rate 100 --duration 300ms -o m2.json </dev/null`, bin, srv.URL))
	if code != 1 {
		t.Errorf("without --insecure: exit %d, want 1 (certificate refused): %s", code, out)
	}
}

// TestAttackUntilInterrupted: --duration 0 runs until Ctrl-C, then writes
// what it recorded and exits 0; vegeta report reads it.
func TestAttackUntilInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds vegeta")
	}
	vegeta := vegetaCLI(t)
	port := startAttackWorkers(t)
	dir := t.TempDir()
	interrupted := func(args ...string) {
		t.Helper()
		c := exec.Command(bin, append([]string{"attack", "--rate", "100/1s", "--duration", "0"}, args...)...)
		c.Dir = dir
		c.Stdin = strings.NewReader(fmt.Sprintf("GET http://127.0.0.1:%d/work?ms=1\n", port))
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		if err := c.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("after Ctrl-C: %v: %s", err, out.String())
			}
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			t.Fatalf("still running 10 s after Ctrl-C: %s", out.String())
		}
	}

	// lbbench's own results: the duration and rates are the time it ran.
	interrupted("-o", "m.json")
	m, err := results.ReadMeasurement(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Duration < 500*time.Millisecond || m.Duration > 5*time.Second || m.IntendedRate < 50 || m.IntendedRate > 150 || m.Errors != 0 {
		t.Errorf("interrupted after about 1.5 s at 100/s: duration %s, intended rate %.1f/s, %d requests, %d errors", m.Duration, m.IntendedRate, m.Requests, m.Errors)
	}

	interrupted("-o", "r.bin", "--format", "vegeta")
	rep, code := sh(t, dir, vegeta+" report < r.bin")
	n := regexp.MustCompile(`Requests\s+\[total, rate, throughput\]\s+(\d+),`).FindStringSubmatch(rep)
	if code != 0 || n == nil {
		t.Fatalf("vegeta report: exit %d: %s", code, rep)
	}
	// About 150 sent in 1.5 s; the interrupt's timing is loose on a busy
	// machine, but nothing at all, or a full 10 s default, would be wrong.
	if n, _ := strconv.Atoi(n[1]); n < 50 || n > 600 {
		t.Errorf("%d requests recorded in about 1.5 s at 100/s", n)
	}
	if !regexp.MustCompile(`Success\s+\[ratio\]\s+100\.00%`).MatchString(rep) {
		t.Errorf("not all successful:\n%s", rep)
	}
}
