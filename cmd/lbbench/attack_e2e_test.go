package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
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

	"github.com/lbbench/lbbench/internal/testkit"
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
	ps := testkit.FreePorts(t, 2)
	port, admin := ps[0], ps[1]
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
	// A format test (what vegeta reads of 150 requests at 50/s), so it
	// runs beside the other behaviour tests.
	t.Parallel()
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
	t.Parallel() // measures nothing timing-sensitive
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
	t.Parallel() // measures nothing timing-sensitive
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
// what it recorded and exits 0; vegeta report reads it. So does a literal
// target with no duration at all, as in vegeta.
func TestAttackUntilInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds vegeta")
	}
	// Behaviour only (what an interrupted attack writes; rates within a
	// factor of 2), so in the parallel phase.
	t.Parallel()
	vegeta := vegetaCLI(t)
	port := startAttackWorkers(t)
	dir := t.TempDir()
	interrupted := func(args ...string) {
		t.Helper()
		if args[0] != "-rate=100/1s" {
			args = append([]string{"--rate", "100/1s", "--duration", "0"}, args...)
		}
		c := invocation{args: append([]string{"attack"}, args...), dir: dir,
			stdin: strings.NewReader(fmt.Sprintf("GET http://127.0.0.1:%d/work?ms=1\n", port))}.start(t)
		time.Sleep(1500 * time.Millisecond)
		if err := c.signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := c.waitWithin(t, 10*time.Second); code != 0 {
			t.Fatalf("after Ctrl-C: exit %d: %s", code, c.out)
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

	for _, args := range [][]string{
		{"-o", "r.bin", "--format", "vegeta"},
		{"-rate=100/1s", "-output=r.bin"}, // vegeta's spelling, no duration
	} {
		interrupted(args...)
		rep, code := sh(t, dir, vegeta+" report < r.bin")
		n := regexp.MustCompile(`Requests\s+\[total, rate, throughput\]\s+(\d+),`).FindStringSubmatch(rep)
		if code != 0 || n == nil {
			t.Fatalf("%q: vegeta report: exit %d: %s", args, code, rep)
		}
		// About 150 sent in 1.5 s; the interrupt's timing is loose on a busy
		// machine, but nothing at all, or a full 8 s default, would be wrong.
		if n, _ := strconv.Atoi(n[1]); n < 50 || n > 600 {
			t.Errorf("%q: %d requests recorded in about 1.5 s at 100/s", args, n)
		}
		if !regexp.MustCompile(`Success\s+\[ratio\]\s+100\.00%`).MatchString(rep) {
			t.Errorf("%q: not all successful:\n%s", args, rep)
		}
	}
}

// TestAttackVegetaCommandLines runs command lines from vegeta's README
// (vegeta v12's, "vegeta" replaced by lbbench, localhost by the test's
// workers, a duration added where the README's run forever) and reads
// their output with the real vegeta: the same report, Bytes In included,
// as the same line run by vegeta itself.
func TestAttackVegetaCommandLines(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds vegeta, attacks for 5 s")
	}
	vegeta := vegetaCLI(t)
	port := startAttackWorkers(t)
	dir := t.TempDir()
	report := func(tool string) (requests, bytesIn string) {
		t.Helper()
		// README: echo "GET http://localhost/" | vegeta attack -duration=5s | tee results.bin | vegeta report
		line := fmt.Sprintf(`echo "GET http://127.0.0.1:%d/work?ms=1" | %s attack -duration=2s | tee results.bin | %s report`, port, tool, vegeta)
		out, code := sh(t, dir, line)
		t.Logf("%s\n%s", line, out)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		r := regexp.MustCompile(`Requests\s+\[total, rate, throughput\]\s+(\d+),`).FindStringSubmatch(out)
		b := regexp.MustCompile(`Bytes In\s+\[total, mean\]\s+(\d+, [\d.]+)`).FindStringSubmatch(out)
		if r == nil || b == nil {
			t.Fatalf("no Requests or Bytes In line in vegeta report's output")
		}
		return r[1], b[1]
	}
	n, in := report(bin)
	vn, vin := report(vegeta)
	if n != "100" || n != vn || in != vin || in != "300, 3.00" {
		t.Errorf("lbbench: %s requests, bytes in %s; vegeta: %s requests, bytes in %s; want 100 each (50/s for 2 s), 3 bytes each", n, in, vn, vin)
	}

	// README: echo "GET http://:80" | vegeta attack -name=50qps -rate=50 -duration=5s > results.50qps.bin
	out, code := sh(t, dir, fmt.Sprintf(`echo "GET http://127.0.0.1:%d/work?ms=1" | %s attack -name=50qps -rate=50 -duration=1s > results.50qps.bin && %s encode --to json results.50qps.bin`, port, bin, vegeta))
	if code != 0 || strings.Count(out, `"attack":"50qps"`) != 50 {
		t.Errorf("-name=50qps: exit %d, %d of 50 results named 50qps:\n%.600s", code, strings.Count(out, `"attack":"50qps"`), out)
	}
}

// TestAttackVegetaRequestFlags: vegeta's JSON targets (the README's jq
// line, as jq prints it), -header, -body, -timeout, -connections,
// -keepalive and -max-body reach the server and the results as in vegeta.
func TestAttackVegetaRequestFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds vegeta")
	}
	vegeta := vegetaCLI(t)
	var mu sync.Mutex
	var got []string // "METHOD BODY CONTENT-TYPE X-A" per request
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s %s %s", r.Method, b, r.Header.Get("Content-Type"), strings.Join(r.Header.Values("X-A"), ",")))
		mu.Unlock()
		if r.URL.Query().Get("slow") != "" {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(w, "0123456789")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	dir := t.TempDir()
	// reset returns the requests and connections so far and starts over.
	reset := func() ([]string, int) {
		mu.Lock()
		defer mu.Unlock()
		g, c := got, conns
		got, conns = nil, 0
		return g, c
	}
	reset()

	// README: jq -ncM '{method: "GET", url: "http://localhost:8080", body: "Hello" | @base64, header: {"Content-Type": ["text/plain"]}}' |
	//   vegeta attack -format=json -rate=100 | vegeta encode
	jq := fmt.Sprintf(`{"method":"GET","url":"%s/","body":"SGVsbG8=","header":{"Content-Type":["text/plain"]}}`, srv.URL)
	out, code := sh(t, dir, fmt.Sprintf(`echo '%s' | %s attack -format=json -rate=100 -duration=500ms -H 'X-A: 1' -header='X-A: 2' -max-body=4 | %s encode`, jq, bin, vegeta))
	if code != 0 {
		t.Fatalf("JSON targets: exit %d: %s", code, out)
	}
	g, _ := reset()
	if len(g) != 50 || g[0] != "GET Hello text/plain 1,2" {
		t.Errorf("JSON targets with -H and -header: %d requests, first %q; want 50, \"GET Hello text/plain 1,2\"", len(g), g)
	}
	// vegeta encode prints JSON lines: bytes out 5 ("Hello"), bytes in
	// the whole 10, the body cut at -max-body's 4 ("0123", base64 MDEyMw==).
	if c := strings.Count(out, `"bytes_out":5,"bytes_in":10,`); c != 50 || !strings.Contains(out, `"body":"MDEyMw=="`) {
		t.Errorf("%d of 50 results with bytes out 5 and in 10, body cut to 4 bytes: %v:\n%.500s", c, strings.Contains(out, `"body":"MDEyMw=="`), out)
	}

	// -body for http-format targets, -keepalive=false: a connection a request.
	os.WriteFile(filepath.Join(dir, "body.txt"), []byte("B"), 0o644)
	out, code = sh(t, dir, fmt.Sprintf(`echo "POST %s/" | %s attack -body=body.txt -keepalive=false -rate=50 -duration=400ms -output=k.bin && %s report k.bin`, srv.URL, bin, vegeta))
	g, c := reset()
	if code != 0 || len(g) != 20 || g[0] != "POST B  " {
		t.Errorf("-body: exit %d, %d requests, first %q; want 20, \"POST B  \": %s", code, len(g), g, out)
	}
	if c != 20 {
		t.Errorf("-keepalive=false: %d connections for 20 requests", c)
	}

	// -timeout 100ms against a 300 ms answer: every request times out;
	// -connections 1 keeps one connection open at a time.
	os.WriteFile(filepath.Join(dir, "targets.txt"), []byte("GET "+srv.URL+"/?slow=1\n"), 0o644)
	out, code = sh(t, dir, fmt.Sprintf(`%s attack -timeout=100ms -connections=1 -rate=5 -duration=1s -targets=targets.txt --format lbbench -o m.json`, bin))
	m, err := results.ReadMeasurement(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatalf("exit %d: %v: %s", code, err, out)
	}
	if code != 1 || m.Requests != 5 || m.Errors != 5 || m.Generator.Connections != 1 {
		t.Errorf("-timeout=100ms against 300 ms answers, -connections=1: exit %d, %d requests, %d errors, %d connections; want exit 1, 5, 5, 1", code, m.Requests, m.Errors, m.Generator.Connections)
	}
}

// TestAttackRefusesVegetaFlagsItLacks: a vegeta flag attack does not
// take is refused by name, with the reason, not as a shorthand puzzle.
func TestAttackRefusesVegetaFlagsItLacks(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`%s attack -lazy -rate=5 </dev/null`:                     "-lazy is a vegeta attack flag lbbench does not take",
		`%s attack -workers 4 --target http://127.0.0.1:1/`:      "-workers is a vegeta attack flag",
		`echo '{"method":"GET"}' | %s attack -duration=1s`:       "they look like vegeta's JSON targets: give --targets-format json",
		`%s attack -rat=5 </dev/null`:                            "unknown flag -rat",
		`%s attack --format json --target http://127.0.0.1:1/`:   "--targets-format json",
		`%s attack -max-body=-2 --target http://127.0.0.1:1/x`:   "--max-body -2: want 0 to",
		`%s attack -header=nocolon --target http://127.0.0.1:1/`: `--header "nocolon": want "NAME: VALUE"`,
	} {
		out, code := sh(t, t.TempDir(), fmt.Sprintf(line, bin))
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", line, code, want, out)
		}
	}
}
