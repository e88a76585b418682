package reports

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/resultstest"
)

// TestBenchstatCompares feeds the two benchmark files a comparison writes
// to the real golang.org/x/perf/cmd/benchstat (the go.mod tool) and checks
// it compares them: both files' columns (benchstat shows -ns as -sec),
// and for each latency metric a
// delta or "~" with its p-value.
func TestBenchstatCompares(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchstat")
	}
	_, err := exec.LookPath("go")
	needTool(t, "the go command (go tool benchstat)", err == nil)
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := []compare.Pair{{Variant: "least_conn", Baseline: "reuseport",
		Base: resultstest.Runs(rng, "reuseport", 6, 1, 0.05), Cand: resultstest.Runs(rng, "least_conn", 6, 1.5, 0.05)}}
	dir := t.TempDir()
	var out strings.Builder
	if err := judged(t, Comparison{Pairs: pairs, Scenario: "s", Title: "t", Dir: dir}).Write(&out); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Run from the module (this package's directory), on the files by
	// path: benchstat names the columns after the paths.
	cmd := exec.CommandContext(ctx, "go", "tool", "benchstat", filepath.Join(dir, BaseBenchFile), filepath.Join(dir, CandBenchFile))
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, got)
	}
	text := string(got)
	t.Logf("benchstat:\n%s", text)
	for _, want := range []string{BaseBenchFile, CandBenchFile, "p50-sec", "p99-sec", "p99.9-sec", "error-ratio", "vs base"} {
		if !strings.Contains(text, want) {
			t.Errorf("benchstat output lacks %q", want)
		}
	}
	if strings.Contains(text, "req/s") {
		t.Errorf("benchstat shows req/s, the offered schedule")
	}
	// The candidate is 1.5× slower in every run: benchstat must see it, with
	// its p-value, on the p50 and p99 rows.
	deltas := 0
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, "variant=least_conn") && strings.Contains(line, "%") && strings.Contains(line, "(p=") && strings.Contains(line, "n=6") {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("benchstat printed %d rows with a delta and p-value for variant=least_conn, want one per latency metric", deltas)
	}
}

// TestBenchFilesRefuseOneSided: with no valid run on a side, a comparison
// writes no benchmark files (and removes stale ones) and says why; the
// other files are still written.
func TestBenchFilesRefuseOneSided(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, side := range []string{"candidate", "baseline"} {
		t.Run(side, func(t *testing.T) {
			base, cand := resultstest.Runs(rng, "a", 3, 1, 0.05), resultstest.Runs(rng, "b", 3, 1, 0.05)
			invalid := cand
			if side == "baseline" {
				invalid = base
			}
			for i := range invalid {
				invalid[i].Valid = false
			}
			dir := t.TempDir()
			for _, f := range []string{BaseBenchFile, CandBenchFile} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("BenchmarkOld 1 1 ns/op\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := judged(t, Comparison{Pairs: []compare.Pair{{Variant: "b", Baseline: "a", Base: base, Cand: cand}}, Dir: dir}).Write(&strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), side) || !strings.Contains(err.Error(), "no valid run") || !strings.Contains(err.Error(), "benchstat") {
				t.Fatalf("error %v, want one naming the %s without a valid run", err, side)
			}
			for _, f := range []string{BaseBenchFile, CandBenchFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
					t.Errorf("%s still there (%v)", f, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, compare.VerdictsFileName)); err != nil {
				t.Errorf("verdicts not written: %v", err)
			}
		})
	}
}

// TestBenchFilesSayWhichVariant: with a baseline variant, each pair's rows
// name both variants, the base file holds the baseline's values and the
// candidate file the candidate's (the real benchstat shows the 1.5×
// slower candidate as about +50%, not -33%), and a one-sided pair beside a
// complete one leaves the complete pair's files written, without it.
func TestBenchFilesSayWhichVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchstat")
	}
	_, err := exec.LookPath("go")
	needTool(t, "the go command (go tool benchstat)", err == nil)
	rng := rand.New(rand.NewPCG(7, 8))
	dead := resultstest.Runs(rng, "p2c", 6, 1, 0.05)
	for i := range dead {
		dead[i].Valid = false
	}
	pairs := []compare.Pair{
		{Variant: "least_conn", Baseline: "reuseport", Base: resultstest.Runs(rng, "reuseport", 6, 1, 0.05), Cand: resultstest.Runs(rng, "least_conn", 6, 1.5, 0.05)},
		{Variant: "p2c", Baseline: "reuseport", Base: resultstest.Runs(rng, "reuseport", 6, 1, 0.05), Cand: dead},
	}
	dir := t.TempDir()
	err = judged(t, Comparison{Pairs: pairs, Scenario: "s", Title: "t", Dir: dir}).Write(&strings.Builder{})
	if !errors.Is(err, ErrOneSided) || !strings.Contains(err.Error(), `candidate "p2c" has no valid run`) || !strings.Contains(err.Error(), "1 complete pair(s) only") {
		t.Fatalf("error %v, want one saying p2c is left out and the complete pair written", err)
	}
	for _, f := range []string{BaseBenchFile, CandBenchFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s not written beside the one-sided pair: %v", f, err)
		}
		if strings.Contains(string(b), "p2c") {
			t.Errorf("%s holds the one-sided pair:\n%s", f, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	got, err := exec.CommandContext(ctx, "go", "tool", "benchstat", filepath.Join(dir, BaseBenchFile), filepath.Join(dir, CandBenchFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, got)
	}
	t.Logf("benchstat:\n%s", got)
	rows, latency := 0, false
	for line := range strings.SplitSeq(string(got), "\n") {
		if strings.Contains(line, "vs base") {
			latency = strings.Contains(line, "-sec") // the section's unit
		}
		if !latency || !strings.HasPrefix(line, "LB/variant=least_conn/baseline=reuseport ") {
			continue
		}
		rows++
		// +4x.xx% (candidate slower), never -3x.xx% (the sides swapped).
		if !strings.Contains(line, "+4") && !strings.Contains(line, "+5") {
			t.Errorf("row %q: want the candidate about 50%% slower than the baseline", line)
		}
	}
	if rows < 3 {
		t.Errorf("benchstat printed %d rows for variant=least_conn/baseline=reuseport, want one per latency metric:\n%s", rows, got)
	}
}
