package main

// End-to-end tests of the measurement rules (../shared/docs/measurement.md)
// with real worker processes and real generator processes.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
)

// workerPIDs returns the pids of the workers behind a serve admin address.
func workerPIDs(t *testing.T, admin int) []int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats", admin))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep prefork.StatsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, w := range rep.Workers {
		pids = append(pids, w.PID)
	}
	return pids
}

// TestStallIsCharged freezes the only worker (SIGSTOP) for half a second in
// the middle of an open-loop run over one connection. Every request
// scheduled during the freeze must be late by the freeze time still
// remaining when it was due; the uncorrected latency, measured from when
// each request went on the wire, must not show the stall; and every
// scheduled request must be recorded.
func TestStallIsCharged(t *testing.T) {
	if testing.Short() {
		t.Skip("4 s load test")
	}
	ps := distinctFreePorts(t, 2)
	port, admin := ps[0], ps[1]
	start(t, "serve", "--workers", "1", "--listen", "reuseport", "--port", strconv.Itoa(port),
		"--admin", "127.0.0.1:"+strconv.Itoa(admin), "--concurrency", "1")
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", admin))
	pid := workerPIDs(t, admin)[0]

	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte(`arrival: {kind: constant, rate: 200}
duration: 3s
warmup: -1s
classes: [{name: noop, weight: 1, service: {value: 0s}}]
clients: {connections: 1}
`), 0o644)
	out, raw := filepath.Join(dir, "m.json"), filepath.Join(dir, "raw.csv")
	cmd := exec.Command(bin, "attack", "--target", fmt.Sprintf("http://127.0.0.1:%d", port), "--spec", spec, "--out", out, "--raw", raw)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Freeze a second into the run: once the worker has served a second's
	// worth of requests (200), well before the 3 s schedule ends.
	deadline := time.Now().Add(20 * time.Second)
	for {
		served, err := servedRequests("127.0.0.1:" + strconv.Itoa(admin))
		if err == nil && served >= 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker served %d requests in 20s (%v), want 200", served, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(500 * time.Millisecond) // the freeze under test, not a wait for something to happen
	syscall.Kill(pid, syscall.SIGCONT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("attack: %v\n%s", err, stderr.String())
	}
	m, err := results.ReadMeasurement(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 600 || m.Errors != 0 {
		t.Fatalf("recorded %d requests with %d errors, want all 600 scheduled", m.Requests, m.Errors)
	}

	f, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type req struct{ intended, latency time.Duration }
	var reqs []req
	var worst req
	for _, row := range rows[1:] {
		in, _ := strconv.ParseInt(row[0], 10, 64)
		lat, _ := strconv.ParseInt(row[2], 10, 64)
		r := req{time.Duration(in) * time.Microsecond, time.Duration(lat) * time.Microsecond}
		reqs = append(reqs, r)
		if r.latency > worst.latency {
			worst = r
		}
	}
	// The worst request was the first one due after the freeze began; the
	// freeze ended when it completed.
	if worst.latency < 350*time.Millisecond || worst.latency > 1500*time.Millisecond {
		t.Fatalf("worst corrected latency %s, want about the 500ms freeze", worst.latency)
	}
	thawed := worst.intended + worst.latency
	const slack = 30 * time.Millisecond
	late := 0
	for _, r := range reqs {
		if r.intended < worst.intended || r.intended >= thawed-slack {
			continue
		}
		late++
		if remaining := thawed - r.intended; r.latency < remaining-slack {
			t.Errorf("request due at %s, %s before the thaw, took only %s", r.intended, remaining, r.latency)
		}
	}
	if late < 50 {
		t.Errorf("only %d requests scheduled during the freeze", late)
	}
	// The corrected tail shows the stall; the uncorrected one does not:
	// queued requests waited for the connection before going on the wire.
	c99, u99 := m.Latency.Quantile(0.99), m.Uncorrected.Quantile(0.99)
	if c99 < 200*time.Millisecond || u99 > c99/4 {
		t.Errorf("p99 corrected %s, uncorrected %s: want the stall in the corrected tail only", c99, u99)
	}
}

// TestGeneratorsMerge runs the same scenario from one generator and from
// two separate generator processes at half the rate each: the merged
// histogram must hold every request and agree in its percentiles.
func TestGeneratorsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("two 2 s runs")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "merge.yaml")
	os.WriteFile(scen, []byte(`name: merge
workers: {count: 2, concurrency: 8}
workload:
  arrival: {kind: poisson, rate: 400}
  duration: 2s
  warmup: -1s
  classes: [{name: a, weight: 1, service: {value: 5ms}}]
variants: [{name: rp, topology: reuseport}]
repeat: 1
`), 0o644)
	runWith := func(k int) results.Run {
		out := filepath.Join(dir, "out"+strconv.Itoa(k))
		cmd := exec.Command(bin, "run", scen, "-o", out, "--generators", strconv.Itoa(k), "-q")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run --generators %d: %v\n%s", k, err, b)
		}
		res, err := results.ReadFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		return res.Runs[0]
	}
	// Percentiles are comparable only when both generators kept their
	// schedule; on a machine busy with other work, try again. On this
	// 2-vCPU virtual machine the host's steal time made 3 tries too few
	// once (12 to 18% of the CPUs stolen during both runs of every try).
	// The two runs are minutes' worth of seconds apart, so the host must
	// also have left the generators' CPUs alone in both (a steal burst in
	// one run only moved p90 from 5.8 to 8.6 ms once): at most 3% steal.
	const tries = 8
	stolen := func(r results.Run) float64 {
		g := r.Generator
		if g.CPUs == 0 || r.Duration <= 0 {
			return 0
		}
		return g.Steal.Seconds() / r.Duration.Seconds() / float64(g.CPUs)
	}
	var one, two results.Run
	for try := 1; ; try++ {
		one, two = runWith(1), runWith(2)
		if one.Valid && two.Valid && stolen(one) < 0.03 && stolen(two) < 0.03 {
			break
		}
		if try == tries {
			t.Fatalf("no pair of valid runs on a quiet host in %d tries (the machine is too busy): %q / %q, steal %.1f%% / %.1f%%", tries, one.Invalid, two.Invalid, 100*stolen(one), 100*stolen(two))
		}
		t.Logf("try %d: invalid: %q / %q, steal %.1f%% / %.1f%%", try, one.Invalid, two.Invalid, 100*stolen(one), 100*stolen(two))
	}
	if two.Generator.Processes != 2 {
		t.Fatalf("%d generator processes, want 2", two.Generator.Processes)
	}
	for _, r := range []results.Run{one, two} {
		if got := uint64(r.Latency.TotalCount()); got != r.Requests || r.Requests < 700 || r.Requests > 900 {
			t.Errorf("histogram holds %d of %d requests (about 800 scheduled)", got, r.Requests)
		}
	}
	for _, q := range []float64{0.5, 0.9} {
		a, b := one.Latency.Quantile(q), two.Latency.Quantile(q)
		if math.Abs(float64(a-b)) > 0.3*float64(a)+float64(time.Millisecond) {
			t.Errorf("p%g: one generator %s, two merged %s (steal %.1f%% / %.1f%% of their CPUs)", 100*q, a, b, 100*stolen(one), 100*stolen(two))
		}
	}
}

// TestOverdrivenGeneratorIsInvalid asks for far more than the generator
// can send and expects the run marked invalid with the reason.
func TestOverdrivenGeneratorIsInvalid(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "run", "generator-headroom", "-o", out, "--rate", "60000", "--duration", "500ms", "--warmup", "0", "-q")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if run.Valid || !strings.Contains(strings.Join(run.Invalid, "; "), "the generator fell behind") {
		t.Errorf("valid=%v reasons=%q at 60000/s", run.Valid, run.Invalid)
	}
	if !strings.Contains(string(b), "invalid runs") {
		t.Errorf("the table does not flag the invalid run:\n%s", b)
	}
}
