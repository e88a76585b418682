package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

// TestHlogOfRealRunInJava runs a real scenario, then Debian's
// HdrHistogram HistogramLogProcessor (Java, default options) on each
// .hlog lbbench wrote: its percentile distribution must be, line for line,
// lbbench's .hgrm of the same run's intervals added up (in nanoseconds,
// printed in milliseconds).
func TestHlogOfRealRunInJava(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario and a JVM")
	}
	// A format test: it asks nothing of the run's figures (the report
	// scenario's validity limits are loose), so it runs beside the other
	// behaviour tests.
	t.Parallel()
	const jar = "/usr/share/java/hdrhistogram.jar"
	_, errJava := exec.LookPath("java")
	_, errJar := os.Stat(jar)
	if errJava != nil || errJar != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("java (%v) or %s (%v) missing: scripts/setup.sh installs them", errJava, jar, errJar)
		}
		t.Skip("java or libhdrhistogram-java missing; run scripts/setup.sh")
	}
	out := runReportScenario(t)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(out, "hlog", "*.hlog"))
	if len(logs) != len(res.Runs) || len(logs) == 0 {
		t.Fatalf("%d interval logs for %d runs", len(logs), len(res.Runs))
	}
	for _, run := range res.Runs {
		path := filepath.Join(out, "hlog", run.ID+".hlog")
		t.Run(run.ID, func(t *testing.T) {
			java, err := exec.Command("java", "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", path).Output()
			if err != nil {
				t.Fatalf("HistogramLogProcessor on %s: %v", path, err)
			}
			// Its first line restates the log's start time.
			first, java, _ := bytes.Cut(java, []byte("\n"))
			if !bytes.HasPrefix(first, []byte("#[StartTime: ")) {
				t.Fatalf("first line %q", first)
			}
			sum := hdrhistogram.New(1, results.HistHighest*reports.NanosPerValue, results.HistDigits)
			for _, iv := range run.Intervals {
				h, err := iv.Histogram()
				if err != nil {
					t.Fatal(err)
				}
				ns, err := reports.Nanos(h)
				if err != nil {
					t.Fatal(err)
				}
				sum.Merge(ns)
			}
			if sum.TotalCount() == 0 {
				t.Fatal("the run's intervals recorded nothing")
			}
			var ours bytes.Buffer
			if err := reports.WriteHgrmOf(&ours, sum, 1e6); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(java, ours.Bytes()) {
				t.Fatalf("Java's distribution differs from lbbench's:\n--- java\n%s\n--- lbbench\n%s", java, ours.String())
			}
			lines := strings.Split(strings.TrimSpace(ours.String()), "\n")
			t.Logf("%s: %d lines identical; %s", run.ID, len(lines), lines[len(lines)-2])
		})
	}
}

// TestOneSidedBenchFiles: when every run is invalid, `lbbench compare -o`
// writes no benchmark files and exits 2 naming the side without a valid
// run; `lbbench run` (whose comparison is for information) says so in a
// note and still exits 0.
func TestOneSidedBenchFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario")
	}
	dir := t.TempDir()
	// A send-lag limit no run can meet makes every run invalid.
	scen := filepath.Join(dir, "invalid.yaml")
	if err := os.WriteFile(scen, []byte(smallScenario+"validity: {max_send_lag_p99: 1ns}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBin(t, dir, nil, "run", scen, "-o", "out")
	if code != 0 || !strings.Contains(out, "note: reports: not writing base.bench.txt and cand.bench.txt") {
		t.Fatalf("run exited %d, want 0 with a note:\n%s", code, out)
	}
	waitNoProcs(t)
	out, code = runBin(t, dir, nil, "compare", filepath.Join("out", "results.json"), "--baseline-variant", "rp", "-o", "cmp")
	if code != 2 || !strings.Contains(out, `candidate "lc" has no valid run`) || !strings.Contains(out, "benchstat") {
		t.Fatalf("compare exited %d, want 2 naming the candidate without a valid run:\n%s", code, out)
	}
	for _, f := range []string{reports.BaseBenchFile, reports.CandBenchFile} {
		if _, err := os.Stat(filepath.Join(dir, "cmp", f)); !os.IsNotExist(err) {
			t.Errorf("%s written (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cmp", compare.VerdictsFileName)); err != nil {
		t.Errorf("verdicts not written: %v", err)
	}
}
