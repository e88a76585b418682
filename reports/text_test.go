package reports

import (
	"bytes"
	"flag"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fakeResults() *results.Results {
	return &results.Results{
		Scenario: scenario.Scenario{
			Name:    "golden",
			Workers: scenario.Workers{Count: 2, Concurrency: 1},
			Workload: workloads.Spec{Arrival: workloads.Arrival{Kind: "poisson", RatePerSec: 100},
				Duration: 10 * time.Second, Warmup: 2 * time.Second},
			Variants: []scenario.Variant{{Name: "reuseport"}, {Name: "least_conn"}},
			Repeat:   2,
		},
		Complete: true,
		Runs: []results.Run{
			resultstest.LinearRun("001-reuseport-r1", "reuseport", time.Millisecond, 1000, []uint64{700, 300}, true),
			resultstest.LinearRun("002-least_conn-r1", "least_conn", 100*time.Microsecond, 1000, []uint64{500, 500}, true),
			resultstest.LinearRun("003-least_conn-r2", "least_conn", 110*time.Microsecond, 1000, []uint64{510, 490}, true),
			resultstest.LinearRun("004-reuseport-r2", "reuseport", 3*time.Millisecond, 1000, []uint64{1000, 0}, false),
		},
	}
}

func TestWriteTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, docOf(t, fakeResults(), nil)); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/text.golden"
	if *update {
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("text report changed (run with -update if intended):\n%s", buf.String())
	}
}

func TestSummarize(t *testing.T) {
	sums, err := Summarize(fakeResults())
	if err != nil {
		t.Fatal(err)
	}
	rp, lc := sums[0], sums[1]
	if rp.Runs != 2 || rp.Valid != 1 || rp.Requests != 1000 || len(rp.Invalid) != 1 {
		t.Errorf("reuseport: invalid run not left out: %+v", rp)
	}
	if lc.Requests != 2000 || lc.Latency.Count != 2000 {
		t.Errorf("least_conn: runs not merged: %+v", lc)
	}
	// Merged, not averaged: p99 of the union of 100µs..100ms and 110µs..110ms.
	if lc.Latency.P99 < 98*time.Millisecond || lc.Latency.P99 > 109*time.Millisecond {
		t.Errorf("merged p99 %s", lc.Latency.P99)
	}
	if math.Abs(rp.Skew-700.0/300) > 1e-9 {
		t.Errorf("reuseport skew %v, want 2.33", rp.Skew)
	}
}

func TestDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Microsecond:   "850µs",
		2130 * time.Microsecond:  "2.13ms",
		41200 * time.Microsecond: "41.2ms",
		312 * time.Millisecond:   "312ms",
		1200 * time.Millisecond:  "1.20s",
	} {
		if got := numfmt.Dur(d); got != want {
			t.Errorf("numfmt.Dur(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestWriteTextProxyAndSteps(t *testing.T) {
	r := fakeResults()
	run := resultstest.LinearRun("005-least_conn-r3", "least_conn", 100*time.Microsecond, 1000, []uint64{500, 500}, true)
	run.Proxy = &results.ProxyStats{Mode: "l7", Policy: "least_conn", Decisions: 1200, ClientConns: 64, UpstreamConns: 8,
		Pools: []results.PoolStats{{Name: "write", Requests: 200}}}
	h := results.NewHistogram()
	h.RecordDuration(3 * time.Millisecond)
	run.Steps = []results.Step{{RatePerSec: 100, Requests: 1, Latency: h}, {RatePerSec: 200, Requests: 1, Latency: h}}
	r.Runs = append(r.Runs, run)
	var buf bytes.Buffer
	if err := WriteText(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"proxy counters", "1200", "write=200", "latency by step: least_conn", "3.00ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// withEngineAndClients gives fakeResults' runs named clients and engine
// counters: HAProxy on the reuseport runs, nginx on the least_conn ones.
func withEngineAndClients(t *testing.T) *results.Results {
	t.Helper()
	r := fakeResults()
	for i := range r.Runs {
		run := &r.Runs[i]
		for _, c := range []struct {
			name  string
			share float64
			lat   time.Duration
			n     int
		}{{"heavy", 0.8, 4 * time.Millisecond, 80}, {"light", 0.2, time.Millisecond, 20}} {
			h := results.NewHistogram()
			for range c.n {
				if err := h.RecordValue(c.lat.Microseconds()); err != nil {
					t.Fatal(err)
				}
			}
			run.Clients = append(run.Clients, results.Client{Name: c.name, Share: c.share, Requests: uint64(c.n), Latency: h})
		}
		if run.Variant == "reuseport" {
			run.Engine = &results.EngineStats{Engine: "haproxy", HAProxy: []results.HAProxyRow{
				{Proxy: "proxy", Name: "FRONTEND", Sessions: 12, Requests: 1000},
				{Proxy: "workers", Name: "w0", Sessions: 700},
				{Proxy: "workers", Name: "w1", Sessions: 300},
				{Proxy: "workers", Name: "BACKEND", Sessions: 1000, Connects: 1000},
				{Proxy: "admin", Name: "FRONTEND", Sessions: 5, Requests: 5},
			}}
		} else {
			run.Engine = &results.EngineStats{Engine: "nginx", Nginx: &results.NginxStatus{Accepts: 9, Handled: 9, Requests: 1003}}
		}
	}
	return r
}

func TestTextEngineAndClients(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, docOf(t, withEngineAndClients(t), nil)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, re := range []string{
		// HAProxy: the admin frontend is not the generator's.
		`001-reuseport-r1\s+haproxy\s+12\s+1000\s+1000\s+0\s+700 300`,
		`002-least_conn-r1\s+nginx\s+9\s+1003\s+-\s+-\s+-`,
		// Clients merge over the valid runs: two of least_conn's.
		`latency by client: least_conn\n[^\n]*\n\s*heavy\s+0.8\s+160\s+0\s+4.00ms`,
		`\s*light\s+0.2\s+40\s+0\s+1.00ms`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text report does not match %q:\n%s", re, out)
		}
	}
}
