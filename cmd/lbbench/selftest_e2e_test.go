package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/selftest"
)

// TestSelftest runs "lbbench selftest" small, with the real neighbours
// (vegeta's CLI at go.mod's version, wrk, nginx): every measurement is a
// run of results.json with the requests its rate and duration make and
// the CPU time of its role, the table gives the ratio, and nothing it
// started is left. Then a selftest interrupted after its first runs exits
// 130 and keeps them.
func TestSelftest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nginx, vegeta and wrk")
	}
	// Not parallel: vegeta stops at its duration whatever it has sent, so
	// its count depends on getting the CPU; beside the parallel tests it
	// once sent 355 of 400.
	requireTools(t, "nginx", "wrk")
	vegeta := vegetaCLI(t)
	out := filepath.Join(t.TempDir(), "st")
	r := lb(t, "selftest", "--rates", "500,1000", "--rounds", "3", "--duration", "400ms", "--server-rate", "500", "--vegeta", vegeta, "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 3 rounds of: lbbench and vegeta at two rates, wrk, three servers.
	if !res.Complete || len(res.Runs) != 3*(2*2+1+3) {
		t.Fatalf("complete %v, %d runs, want 24", res.Complete, len(res.Runs))
	}
	count := map[string]int{}
	for _, run := range res.Runs {
		count[run.Variant]++
		tool, rate, _ := strings.Cut(run.Variant, "@")
		want := map[string]uint64{"500": 200, "1000": 400}[rate] // rate x 400 ms
		role := results.RoleGenerator
		switch tool {
		case selftest.ToolWrk:
			want = 0 // closed loop: as many as it gets
		case selftest.ServerBuiltin0, selftest.ServerBuiltin2, selftest.ServerNginx:
			role = results.RoleWorkers
		}
		// vegeta stops at its duration whatever it has sent: one request
		// short of rate x duration here (399 of 400 at 1000/s for 400 ms),
		// more when the tests beside it take its CPU; lbbench sends every
		// request of its schedule.
		short := uint64(0)
		if tool == selftest.ToolVegeta {
			short = want / 10
		}
		if run.Errors != 0 || run.Requests == 0 || (want != 0 && (run.Requests > want || run.Requests+short < want)) {
			t.Errorf("%s: %d requests, %d errors; want %d, none", run.ID, run.Requests, run.Errors, want)
		}
		if ns, why := run.CPUPerRequest(role); why != "" || ns <= 0 {
			t.Errorf("%s: CPU per request of %s: %v %s", run.ID, role, ns, why)
		}
		if role == results.RoleGenerator && (run.Generator.MaxRSS <= 0 || run.Generator.MaxRSS > 1<<30) {
			t.Errorf("%s: peak RSS %d bytes", run.ID, run.Generator.MaxRSS)
		}
		// wrk is a small C program: its peak RSS is its own, not this
		// Go program's, whose memory the child shared until exec.
		if tool == selftest.ToolWrk && run.Generator.MaxRSS > 32<<20 {
			t.Errorf("%s: wrk's peak RSS %d MB, more than wrk uses", run.ID, run.Generator.MaxRSS>>20)
		}
	}
	for _, v := range res.Scenario.Variants {
		if count[v.Name] != 3 {
			t.Errorf("%s: %d runs, want one a round", v.Name, count[v.Name])
		}
	}
	fig, err := os.ReadFile(filepath.Join(out, "figures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"open loop against nginx", "ratio [95%]", "wrk, closed loop", "built-in worker, 2 ms service", "nginx, one worker"} {
		if !strings.Contains(string(fig), want) || !strings.Contains(r.stdout, want) {
			t.Errorf("figures.txt and the output lack %q:\n%s", want, fig)
		}
	}
	if left := engineProcs(t, out); len(left) > 0 {
		t.Errorf("nginx left running: %v", left)
	}
	waitNoProcs(t)

	// Interrupted once its first runs are made: exit 130, they are kept.
	// The output is named relative to the working directory, as make
	// bench-self names it (nginx resolves its paths from its own prefix).
	cwd := t.TempDir()
	out2 := filepath.Join(cwd, "st")
	run := invocation{args: []string{"selftest", "--rates", "500", "--rounds", "50", "--duration", "300ms", "--vegeta", "none", "--wrk", "none", "-o", "st"}, dir: cwd}.start(t)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(run.stderr.String(), "round 2: lbbench at 500/s") {
		if time.Now().After(deadline) {
			t.Fatalf("no second round within a minute:\n%s", run.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	run.signal(syscall.SIGINT)
	if code := run.waitWithin(t, time.Minute); code != 130 {
		t.Fatalf("exit %d after Ctrl-C, want 130:\n%s", code, run.out.String())
	}
	res, err = results.ReadFile(filepath.Join(out2, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.Error == "" || len(res.Runs) < 2 {
		t.Errorf("interrupted: complete %v, error %q, %d runs; want incomplete with the 2 or more finished", res.Complete, res.Error, len(res.Runs))
	}
	if left := engineProcs(t, out2); len(left) > 0 {
		t.Errorf("nginx left running after Ctrl-C: %v", left)
	}
	waitNoProcs(t)
}
