package main

// The fault and bad-input matrix, as tests of the built binary: each case
// is what a careless or hostile user did, and what must come of it. Add a
// case here when a new one is found; keep each one's failure message
// saying what went wrong in the user's words.

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
)

// outputNode is a kind of thing an output path may name, made in dir; kept
// checks afterwards that it is still of that kind, and read (if not nil)
// returns what reached it.
type outputNode struct {
	name  string
	make  func(t *testing.T, dir string) (path string, kept func() error, read func() string)
	bytes bool // whether what reached the node can be read back
}

func modeIs(path string, want fs.FileMode) func() error {
	return func() error {
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if fi.Mode().Type() != want {
			return fmt.Errorf("%s is now %v, was %v", path, fi.Mode().Type(), want)
		}
		return nil
	}
}

// outputNodes: a character device (made with /dev/null's numbers, so the
// system's own is never at risk), a FIFO with a reader, a symlink to a
// file, a dangling symlink.
var outputNodes = []outputNode{
	{name: "character device", make: func(t *testing.T, dir string) (string, func() error, func() string) {
		p := filepath.Join(dir, "null")
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			if os.Getenv("CI") != "" && os.Geteuid() == 0 {
				t.Fatalf("mknod as root in CI: %v", err)
			}
			t.Skipf("cannot make a device node here: %v", err)
		}
		return p, modeIs(p, fs.ModeDevice|fs.ModeCharDevice), nil
	}},
	{name: "FIFO", bytes: true, make: func(t *testing.T, dir string) (string, func() error, func() string) {
		p := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(p)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- string(b)
		}()
		t.Cleanup(func() {
			// Unblock the reader if nothing ever opened the FIFO.
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		})
		read := func() string {
			select {
			case s := <-got:
				return s
			case <-time.After(10 * time.Second):
				return "(nothing within 10 s)"
			}
		}
		return p, modeIs(p, fs.ModeNamedPipe), read
	}},
	{name: "symlink to a file", bytes: true, make: func(t *testing.T, dir string) (string, func() error, func() string) {
		target := filepath.Join(dir, "real.out")
		os.WriteFile(target, []byte("old"), 0o644)
		link := filepath.Join(dir, "link.out")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		kept := func() error {
			if err := modeIs(link, fs.ModeSymlink)(); err != nil {
				return err
			}
			return modeIs(target, 0)()
		}
		return link, kept, func() string { b, _ := os.ReadFile(target); return string(b) }
	}},
	{name: "dangling symlink", bytes: true, make: func(t *testing.T, dir string) (string, func() error, func() string) {
		target := filepath.Join(dir, "later.out")
		link := filepath.Join(dir, "link.out")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		return link, modeIs(link, fs.ModeSymlink), func() string { b, _ := os.ReadFile(target); return string(b) }
	}},
}

// TestAttackOutputsWriteThrough: "lbbench attack -o PATH" and "--raw PATH"
// in every format, where PATH is a device, a FIFO or a symlink: the node
// stays what it was and gets the output. (An earlier lbbench renamed a
// temporary file over PATH: "-o /dev/null" as root replaced /dev/null.)
func TestAttackOutputsWriteThrough(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	port := startAttackWorkers(t)
	target := fmt.Sprintf("http://127.0.0.1:%d/work?ms=1", port)
	for _, flag := range []struct{ name, args, want string }{
		{"-o lbbench", "--format lbbench -o", `"requests":10`},
		{"-o vegeta-json", "--format vegeta-json -o", `"code":200`},
		{"-o vegeta", "--format vegeta -o", ""},
		{"--raw", "-o m.json --raw", "intended"},
	} {
		for _, node := range outputNodes {
			t.Run(flag.name+"/"+node.name, func(t *testing.T) {
				t.Parallel() // each its own attack of 10 requests and output path
				dir := t.TempDir()
				path, kept, read := node.make(t, dir)
				line := fmt.Sprintf(`%s attack --target %q --rate 100 --duration 100ms %s %q </dev/null`, bin, target, flag.args, path)
				out, code := sh(t, dir, line)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", line, code, out)
				}
				if err := kept(); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if read != nil && flag.want != "" {
					if got := read(); !strings.Contains(got, flag.want) {
						t.Errorf("%s: what reached it does not hold %q: %.300q", line, flag.want, got)
					}
				}
			})
		}
	}
}

// TestReportOutputsWriteThrough: every command that writes a directory
// of outputs (report, model sim, compare, run), where one of its files is
// a device, a FIFO or a symlink: each stays what it was and gets its file
// (results.json as a FIFO is refused up front: TestRunOutputCheckedUpFront).
func TestReportOutputsWriteThrough(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, errOut, code := lbbench(t, "model", "sim", "default", "--duration", "1s", "--repeat", "1", "-q", "-o", sim); code != 0 {
		t.Fatalf("model sim: exit %d: %s", code, errOut)
	}
	scen := filepath.Join(dir, "tiny.yaml")
	// What it writes is what is tried, not what it measures: a short run.
	short := strings.Replace(smallWorkers, "duration: 1s", "duration: 200ms", 1)
	os.WriteFile(scen, []byte("name: tiny\n"+short+"variants:\n  - {name: rp, topology: reuseport}\nrepeat: 1\n"), 0o644)
	for _, c := range []struct {
		cmd   []string
		codes []int // exit statuses that are not a failure here
		files []struct{ name, want string }
	}{
		{[]string{"report", sim}, []int{0}, []struct{ name, want string }{{"report.html", "<html"}, {"summary.md", "| variant"}, {"summary.csv", "variant,"}}},
		// model sim, like run, rewrites results.json and summary.txt after
		// every run (a checkpoint), so its other outputs are tried here.
		{[]string{"model", "sim", "default", "--duration", "1s", "--repeat", "1", "-q"}, []int{0},
			[]struct{ name, want string }{{"summary.md", "| variant"}, {"hgrm/reuseport.hgrm", "Percentile"}}},
		// 3: inconclusive, one run a side.
		{[]string{"compare", sim, sim}, []int{3}, []struct{ name, want string }{
			{"comparison.md", "reuseport"}, {"verdicts.json", `"verdicts"`}, {"junit.xml", "<testsuite"}, {"base.bench.txt", "Benchmark"}}},
		{[]string{"run", scen, "-q"}, []int{0}, []struct{ name, want string }{{"summary.md", "| variant"}}},
	} {
		for _, file := range c.files {
			for _, node := range outputNodes {
				t.Run(c.cmd[0]+"/"+file.name+"/"+node.name, func(t *testing.T) {
					t.Parallel()
					out := t.TempDir()
					nodeDir := t.TempDir()
					path, kept, read := node.make(t, nodeDir)
					os.MkdirAll(filepath.Dir(filepath.Join(out, file.name)), 0o755)
					if err := os.Symlink(path, filepath.Join(out, file.name)); err != nil {
						t.Fatal(err)
					}
					args := append(slices.Clone(c.cmd), "-o", out)
					if _, errOut, code := lbbench(t, args...); !slices.Contains(c.codes, code) {
						t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
					}
					if err := kept(); err != nil {
						t.Fatal(err)
					}
					// The link in the output directory is kept too: the
					// file is written through it, not renamed over it.
					if err := modeIs(filepath.Join(out, file.name), fs.ModeSymlink)(); err != nil {
						t.Fatal(err)
					}
					if read != nil {
						if got := read(); !strings.Contains(got, file.want) {
							t.Errorf("%s got %.200q, want it to hold %q", file.name, got, file.want)
						}
					}
				})
			}
		}
	}
}

// TestFIFOInputsRefused: a scenario, results.json or verdicts.json that is
// a FIFO nobody writes is refused at once with exit 2 and a message naming
// it (an earlier lbbench blocked in read for ever, beyond Ctrl-C); a
// GITHUB_STEP_SUMMARY FIFO nobody reads is given up after files.FIFOWait.
func TestFIFOInputsRefused(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, errOut, code := lbbench(t, "model", "sim", "default", "--duration", "1s", "--repeat", "1", "-q", "-o", sim); code != 0 {
		t.Fatalf("model sim: exit %d: %s", code, errOut)
	}
	fifo := func(t *testing.T, path string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	copyResults := func(t *testing.T, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(sim, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(to, 0o755)
		os.WriteFile(filepath.Join(to, "results.json"), b, 0o644)
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) (env []string, args []string)
		code  int
		want  string
	}{
		{"run FIFO", func(t *testing.T, dir string) ([]string, []string) {
			return nil, []string{"run", fifo(t, filepath.Join(dir, "s.yaml")), "-o", filepath.Join(dir, "out")}
		}, 2, "is a FIFO"},
		{"report DIR with results.json a FIFO", func(t *testing.T, dir string) ([]string, []string) {
			fifo(t, filepath.Join(dir, "r", "results.json"))
			return nil, []string{"report", filepath.Join(dir, "r"), "-o", filepath.Join(dir, "out")}
		}, 2, "is a FIFO"},
		{"report DIR with verdicts.json a FIFO", func(t *testing.T, dir string) ([]string, []string) {
			copyResults(t, filepath.Join(dir, "r"))
			fifo(t, filepath.Join(dir, "r", "verdicts.json"))
			return nil, []string{"report", filepath.Join(dir, "r"), "-o", filepath.Join(dir, "out")}
		}, 2, "is a FIFO"},
		{"compare A B with GITHUB_STEP_SUMMARY a FIFO", func(t *testing.T, dir string) ([]string, []string) {
			copyResults(t, filepath.Join(dir, "a"))
			copyResults(t, filepath.Join(dir, "b"))
			return []string{"GITHUB_STEP_SUMMARY=" + fifo(t, filepath.Join(dir, "summary"))},
				[]string{"compare", filepath.Join(dir, "a"), filepath.Join(dir, "b"), "-o", filepath.Join(dir, "out")}
		}, 2, "no process opened the FIFO for reading"},
		// A device that never ends: refused before any read (an earlier
		// lbbench read 600 MB of zeros before it refused).
		{"report /dev/zero", func(t *testing.T, dir string) ([]string, []string) {
			return nil, []string{"report", "/dev/zero", "-o", filepath.Join(dir, "out")}
		}, 2, "/dev/zero is a character device: not a regular file"},
		{"compare /dev/zero /dev/zero", func(t *testing.T, dir string) ([]string, []string) {
			return nil, []string{"compare", "/dev/zero", "/dev/zero"}
		}, 2, "/dev/zero is a character device: not a regular file"},
		{"run /dev/zero", func(t *testing.T, dir string) ([]string, []string) {
			return nil, []string{"run", "/dev/zero", "-o", filepath.Join(dir, "out")}
		}, 2, "/dev/zero is a character device: not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && strings.Contains(tc.want, "no process opened the FIFO") {
				t.Skip("waits files.FIFOWait (10 s)")
			}
			t.Parallel()
			dir := t.TempDir()
			env, args := tc.setup(t, dir)
			r := invocation{args: args, env: env, limit: 30 * time.Second}.run(t)
			out, code := r.out, r.code
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d (want %d), output does not say %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}

// TestRunSurvivesAClosedPipe: "lbbench run ... 2>&1 | head -1": the reader
// of the terminal output goes away after the first line. The run goes on,
// every run is recorded and results.json is complete, and lbbench exits 0.
// (An earlier lbbench died of SIGPIPE after the first run, leaving
// complete: false and no error.)
func TestRunSurvivesAClosedPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "small.yaml")
	os.WriteFile(scen, []byte(smallScenario), 0o644)
	out := filepath.Join(dir, "out")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := binCmd(t, "run", scen, "-o", out)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	w.Close()
	line := make([]byte, 1)
	for line[0] != '\n' { // like head -1: one line, then gone
		if _, err := r.Read(line); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run with its output's reader gone: %v, want exit 0", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not end")
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Errorf("complete=%v with %d runs (error %q), want both runs recorded", res.Complete, len(res.Runs), res.Error)
	}
}
