package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/results"
)

// exactCounts is everything a deterministic run must repeat exactly, per
// variant and repetition. With clients side by side (order parallel) the
// number of upstream connections depends on how requests overlap, so it
// is left out there; everything else is exact.
func exactCounts(t *testing.T, r *results.Results) map[string]string {
	t.Helper()
	parallel := r.Scenario.Workload.Closed != nil && r.Scenario.Workload.Closed.Order == "parallel"
	out := map[string]string{}
	for _, run := range r.Runs {
		var b strings.Builder
		fmt.Fprintf(&b, "requests=%d errors=%d workers=", run.Requests, run.Errors)
		for _, w := range run.Workers {
			fmt.Fprintf(&b, "%d,", w.Responses)
		}
		for _, c := range run.Classes {
			fmt.Fprintf(&b, " %s=%d", c.Name, c.Requests)
		}
		for _, c := range run.Clients {
			fmt.Fprintf(&b, " %s=%d", c.Name, c.Requests)
		}
		if p := run.Proxy; p != nil {
			fmt.Fprintf(&b, " decisions=%d client_conns=%d", p.Decisions, p.ClientConns)
			if !parallel {
				fmt.Fprintf(&b, " upstream_conns=%d", p.UpstreamConns)
			}
			for _, pl := range p.Pools {
				fmt.Fprintf(&b, " pool %s=%d", pl.Name, pl.Requests)
			}
		}
		out[fmt.Sprintf("%s r%d", run.Variant, run.Rep)] = b.String()
	}
	return out
}

// TestClaimsDeterministic runs the deterministic claims scenarios (layer 4
// vs layer 7, round robin) twice each on real processes: every count
// (requests, per-worker responses, classes, clients, proxy decisions and
// connections, pools) must be the same on every run of a variant and
// across the two invocations, and every claim (all exact counts) must
// hold.
func TestClaimsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two scenarios twice on real processes (about 15 s)")
	}
	for _, name := range []string{"e-l4-vs-l7", "f-round-robin"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "scenarios", "claims", name+".yaml")
			var first map[string]string
			for i := range 2 {
				out := filepath.Join(t.TempDir(), "out")
				lbOK(t, "run", path, "-q", "-o", out, "--fail-on-claims")
				r, err := results.ReadFile(filepath.Join(out, "results.json"))
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Runs) != len(r.Order) || len(r.Runs) == 0 {
					t.Fatalf("run %d: %d of %d runs", i+1, len(r.Runs), len(r.Order))
				}
				counts := exactCounts(t, r)
				byVariant := map[string]string{}
				for _, run := range r.Runs {
					c := counts[fmt.Sprintf("%s r%d", run.Variant, run.Rep)]
					if prev, ok := byVariant[run.Variant]; ok && prev != c {
						t.Errorf("run %d: %s differs between repetitions:\n  %s\n  %s", i+1, run.Variant, prev, c)
					}
					byVariant[run.Variant] = c
				}
				if first == nil {
					first = counts
				} else {
					for k, v := range first {
						if counts[k] != v {
							t.Errorf("%s: first invocation %s, second %s", k, v, counts[k])
						}
					}
				}
				cs := claims.Judge(r)
				if len(cs) == 0 {
					t.Fatal("the scenario has no claims")
				}
				for _, c := range cs {
					if c.Outcome != claims.Holds {
						t.Errorf("claim %q (%s): %s: %s", c.Say, c.Check, c.Outcome, c.Evidence)
					}
				}
			}
		})
	}
}

// TestClaimsFailExitStatus: a claim that is false makes run
// --fail-on-claims exit 4 after writing everything, and every report
// shows it failing with its evidence; a burst run records every burst.
func TestClaimsFailExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario on real processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "false.yaml")
	// Round robin over 3 workers splits 30 sequential requests 10/10/10;
	// the claim below says otherwise and must fail.
	if err := os.WriteFile(path, []byte(`name: false-claim
workers: {count: 3}
workload:
  closed: {order: sequential}
  classes: [{name: noop, weight: 1, service: {dist: fixed, value: 0s}}]
  clients:
    named: [{name: a, requests: 30}]
variants: [{name: rr, topology: l7, proxy: {policy: round_robin}}]
repeat: 1
claims:
  - {say: an uneven split that round robin does not give, check: "workers(rr) == [11, 10, 9]"}
  - {say: thirty requests, check: "requests(rr) == 30"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := lb(t, "run", path, "-q", "-o", out, "--fail-on-claims")
	if r.code != 4 {
		t.Fatalf("exit %d, want status 4\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, "FAILS") || !strings.Contains(r.out, "[10 10 10]") || !strings.Contains(r.out, "HOLDS") {
		t.Errorf("the text report does not show the failing claim with its evidence:\n%s", r.out)
	}
	for _, f := range []string{"report.html", "summary.md", "junit.xml"} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "workers(rr) == [11, 10, 9]") || !strings.Contains(string(data), "10 10 10") {
			t.Errorf("%s does not show the failing claim and its evidence", f)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
	if !strings.Contains(string(junit), `<failure message="claim fails: workers(rr) == [11, 10, 9]"`) {
		t.Errorf("junit.xml has no failure for the claim:\n%s", junit)
	}

	// The claims suite report over this result fails the same way.
	suite := filepath.Join(dir, "suite")
	if r := lb(t, "report", "--claims", out, "-o", suite); r.code != 4 {
		t.Fatalf("report --claims: exit %d, want status 4\n%s", r.code, r.out)
	}
	for _, f := range []string{"claims.html", "claims.md", "claims.txt", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(suite, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestBurstsRecorded: bursts of 8 new connections through a least_conn
// proxy over 4 workers, each request long enough for the burst to
// overlap: every burst is recorded with its per-worker load, summing to
// the burst size, and least-loaded dispatch gives each worker exactly 2.
func TestBurstsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario on real processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bursts.yaml")
	if err := os.WriteFile(path, []byte(`name: bursts
workers: {count: 4}
workload:
  bursts: {size: 8, count: 20}
  classes: [{name: task, weight: 1, service: {dist: fixed, value: 20ms}}]
variants: [{name: lc, topology: l7, proxy: {policy: least_conn}}]
repeat: 1
claims:
  - {say: least-loaded gives 2 each, check: "maxload(lc) == 2"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	lbOK(t, "run", path, "-q", "-o", out)
	r, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	bs := r.Runs[0].Bursts
	if bs == nil || len(bs.Loads) != 20 || bs.Workers != 4 || bs.Size != 8 {
		t.Fatalf("bursts recorded: %+v", bs)
	}
	for i, l := range bs.Loads {
		sum := 0
		for _, n := range l {
			sum += n
		}
		if sum+bs.Unattributed[i] != 8 || !slices.Equal(l, []int{2, 2, 2, 2}) {
			t.Errorf("burst %d: loads %v, unattributed %d; want [2 2 2 2]", i, l, bs.Unattributed[i])
		}
	}
	if r.Runs[0].Requests != 160 || !r.Runs[0].Closed {
		t.Errorf("requests %d (want 160), closed %v", r.Runs[0].Requests, r.Runs[0].Closed)
	}
}

// TestClaimsSuiteShares: scenarios run with --suite DIR are judged at
// their share of the suite's 5%, split evenly among DIR's scenarios with
// statistical claims (a scenario of exact counts takes none); the results
// record it, and report --claims judges each claim as its run did.
// --suite with --alpha or --baseline, or naming a scenario not in DIR, is
// refused.
// It runs with the tests that measure, one at a time: its claims hold
// only on valid runs, and beside the parallel phase's Kubernetes and
// Docker tests the generator fell behind in 3 of its 6 (2026-12-07).
func TestClaimsSuiteShares(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios on real processes")
	}
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite")
	if err := os.Mkdir(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	scen := func(name, claim string) string {
		return fmt.Sprintf(`name: %s
workers: {count: 2, concurrency: 1}
workload:
  arrival: {kind: constant, rate: 50}
  duration: 500ms
  warmup: 200ms
  classes:
    - {name: fixed, weight: 1, service: {dist: fixed, value: 10ms}}
  clients: {connections: 8}
variants: [{name: v, topology: l7, proxy: {policy: round_robin}}]
repeat: 3
validity: {max_send_lag_p99: 20ms}
claims:
  - {say: a claim, check: "%s"}
`, name, claim)
	}
	// Medians of a 10 ms service, claimed far off: they hold on 3 runs
	// (a p99 of 3 runs here once spanned 10.8 to 29.6 ms and stayed
	// inconclusive).
	for name, claim := range map[string]string{"a": "p50(v) < 50ms", "b": "p50(v) < 100ms", "c": "errors(v) == 0"} {
		if err := os.WriteFile(filepath.Join(suite, name+".yaml"), []byte(scen(name, claim)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var outs []string
	for _, name := range []string{"a", "b"} {
		out := filepath.Join(dir, "out-"+name)
		lbOK(t, "run", filepath.Join(suite, name+".yaml"), "-q", "--suite", suite, "-o", out)
		r, err := results.ReadFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Alpha != 0.025 || r.Suite == nil || r.Suite.Parts != 2 || !r.Suite.Share || r.Suite.Level != 0.05 {
			t.Errorf("%s: alpha %g, suite %+v; want 2.5%%, one of 2 shares of 5%%", name, r.Alpha, r.Suite)
		}
		outs = append(outs, out)
	}
	rep := filepath.Join(dir, "report")
	r := lbOK(t, append([]string{"report", "--claims", "-o", rep}, outs...)...)
	if n := strings.Count(r.out, "claims judged at 2.5%, its share (one of 2) of the suite's 5%"); n != 2 {
		t.Errorf("report --claims names the share of %d scenarios, want 2:\n%s", n, r.out)
	}
	if n := strings.Count(r.out, "HOLDS"); n != 2 {
		t.Errorf("%d claims hold in the suite, want 2:\n%s", n, r.out)
	}
	if r := lb(t, "run", filepath.Join(suite, "a.yaml"), "-q", "--suite", suite, "--alpha", "0.01", "-o", filepath.Join(dir, "x")); r.code != 2 || !strings.Contains(r.out, "--alpha and --suite") {
		t.Errorf("--suite with --alpha: exit %d, want 2 saying so\n%s", r.code, r.out)
	}
	if r := lb(t, "run", filepath.Join(suite, "a.yaml"), "-q", "--suite", suite, "--baseline", "HEAD", "-o", filepath.Join(dir, "z")); r.code != 2 || !strings.Contains(r.out, "--baseline and --suite") {
		t.Errorf("--suite with --baseline: exit %d, want 2 saying so\n%s", r.code, r.out)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte(scen("other", "p50(v) < 50ms")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := lb(t, "run", other, "-q", "--suite", suite, "-o", filepath.Join(dir, "y")); r.code != 2 || !strings.Contains(r.out, `no scenario named "other"`) {
		t.Errorf("--suite without the scenario: exit %d, want 2 saying so\n%s", r.code, r.out)
	}
}
