package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunOutputCheckedUpFront: an output that cannot be written is refused
// before the first run, within seconds, with a message naming it: a
// results.json (or summary.txt) that is a directory, a logs that is a file,
// an -o that is a file. No run starts: no process, no log.
func TestRunOutputCheckedUpFront(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	for _, tc := range []struct {
		name  string
		setup func(out string) error
		want  string
	}{
		{"results.json is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "results.json"), 0o755) },
			"results.json is a directory"},
		{"summary.txt is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "summary.txt"), 0o755) },
			"summary.txt is a directory"},
		// The comparison's and the exports' files (issue: all of these ran
		// every run, then exited 2 on "rename ... file exists").
		{"verdicts.json is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "verdicts.json"), 0o755) },
			"verdicts.json is a directory"},
		{"comparison.md is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "comparison.md"), 0o755) },
			"comparison.md is a directory"},
		{"base.bench.txt is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "base.bench.txt"), 0o755) },
			"base.bench.txt is a directory"},
		{"hgrm/rp.hgrm is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "hgrm", "rp.hgrm"), 0o755) },
			"hgrm/rp.hgrm is a directory"},
		{"hlog/<run>.hlog is a directory", func(out string) error { return os.MkdirAll(filepath.Join(out, "hlog", "001-rp-r1.hlog"), 0o755) },
			"001-rp-r1.hlog is a directory"},
		{"logs is a file", func(out string) error {
			os.MkdirAll(out, 0o755)
			return os.WriteFile(filepath.Join(out, "logs"), nil, 0o644)
		}, "logs is not a directory"},
		{"-o is a file", func(out string) error { return os.WriteFile(out, nil, 0o644) },
			"output directory"},
		{"results.json is a FIFO", func(out string) error {
			os.MkdirAll(out, 0o755)
			return syscall.Mkfifo(filepath.Join(out, "results.json"), 0o644)
		}, "results.json: not a regular file (it is a FIFO)"},
		{"results.json is a link to /dev/stdout", func(out string) error {
			os.MkdirAll(out, 0o755)
			return os.Symlink("/dev/stdout", filepath.Join(out, "results.json"))
		}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			scen := filepath.Join(dir, "small.yaml")
			os.WriteFile(scen, []byte(smallScenario), 0o644)
			out := filepath.Join(dir, "out")
			if err := tc.setup(out); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			msg, err := binCmd(t, "run", scen, "-o", out).CombinedOutput()
			took := time.Since(start)
			if err == nil || !strings.Contains(string(msg), tc.want) {
				t.Errorf("run: %v, want an error saying %q:\n%s", err, tc.want, msg)
			}
			if took > 5*time.Second || strings.Contains(string(msg), "[1/2]") {
				t.Errorf("refused after %s, having started a run:\n%s", took, msg)
			}
			if logs, _ := filepath.Glob(filepath.Join(out, "logs", "*")); len(logs) != 0 {
				t.Errorf("a run left logs: %v", logs)
			}
			waitNoProcs(t)
		})
	}
}

// TestRunOutputFailsMidRun: results.json becomes a directory while the
// first run goes on, so saving it after that run fails. The table of the
// finished run is still printed, the scenario stops, and the message
// tells the truth: 1 of 2 runs finished, none saved (not "1 of 2 runs
// saved").
func TestRunOutputFailsMidRun(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	dir := t.TempDir()
	scen := filepath.Join(dir, "small.yaml")
	os.WriteFile(scen, []byte(smallScenario), 0o644)
	out := filepath.Join(dir, "out")
	cmd := binCmd(t, "run", scen, "-o", out)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "[1/2]") {
			break
		}
	}
	if err := os.Mkdir(filepath.Join(out, "results.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	err := cmd.Wait()
	if err == nil {
		t.Fatalf("run succeeded with results.json a directory:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "1 of 2 runs finished, none saved") || strings.Contains(log.String(), "runs saved in") {
		t.Errorf("message does not say that nothing was saved:\n%s", log.String())
	}
	if !strings.Contains(stdout.String(), "p99") || !strings.Contains(stdout.String(), "variant") {
		t.Errorf("no table printed:\n%s", stdout.String())
	}
	t.Logf("lbbench said:\n%s", log.String())
	waitNoProcs(t)
}
