package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// TestAttackRecords offers load to an in-process server that plays three
// workers and fails one request in ten; the recorder must attribute every
// response, split classes, count errors and drop the warm-up.
func TestAttackRecords(t *testing.T) {
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("X-Worker", strconv.Itoa(int(i%3)))
		if i%10 == 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()

	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 500},
		Duration: time.Second,
		Warmup:   200 * time.Millisecond,
		Classes: []workloads.Class{
			{Name: "a", Weight: 1},
			{Name: "b", Weight: 1},
		},
	}.WithDefaults()
	rec, gen, err := attack(context.Background(), srv.URL, spec)
	if err != nil {
		t.Fatal(err)
	}
	var run RunResult
	rec.fill(&run, Validity{MaxRateError: 0.05, MaxSendLagP99: 50 * time.Millisecond})

	if run.Requests != 500 || run.WarmupRequests != 100 {
		t.Fatalf("measured %d (want 500), warm-up %d (want 100)", run.Requests, run.WarmupRequests)
	}
	if got := uint64(run.Latency.TotalCount()); got != run.Requests {
		t.Errorf("latency histogram holds %d values for %d requests", got, run.Requests)
	}
	// One in ten failed, counted, never dropped from the denominator.
	if run.Errors < 45 || run.Errors > 55 || run.ErrorKinds["500"] != run.Errors {
		t.Errorf("errors %d %v, want about 50, all 500", run.Errors, run.ErrorKinds)
	}
	if run.Classes[0].Requests+run.Classes[1].Requests != run.Requests || run.Classes[0].Requests < 150 || run.Classes[1].Requests < 150 {
		t.Errorf("classes %d + %d for %d requests", run.Classes[0].Requests, run.Classes[1].Requests, run.Requests)
	}
	var attributed uint64
	for i := range 3 {
		attributed += rec.workers[i]
		if rec.workers[i] < 100 {
			t.Errorf("worker %d: %d responses", i, rec.workers[i])
		}
	}
	if attributed != run.Requests {
		t.Errorf("%d of %d responses attributed", attributed, run.Requests)
	}
	// Corrected latency includes send lag, so it is never below uncorrected.
	if run.Latency.Quantile(0.99) < run.Uncorrected.Quantile(0.99) {
		t.Errorf("corrected p99 %s below uncorrected %s", run.Latency.Quantile(0.99), run.Uncorrected.Quantile(0.99))
	}
	if run.AchievedRate < 450 || run.AchievedRate > 510 || !run.Valid {
		t.Errorf("achieved %.1f/s of 500/s, valid=%v %v", run.AchievedRate, run.Valid, run.Invalid)
	}
	if gen.CPU <= 0 {
		t.Errorf("generator CPU not measured")
	}
}

// TestAttackChargesClientQueue offers more load than two connections can
// carry: requests leave on time but wait for a connection, and that wait
// must show in the corrected latency.
func TestAttackChargesClientQueue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
	}))
	defer srv.Close()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 400},
		Duration: 500 * time.Millisecond,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		Clients:  workloads.Clients{Connections: 2},
	}.WithDefaults()
	rec, _, err := attack(context.Background(), srv.URL, spec)
	if err != nil {
		t.Fatal(err)
	}
	var run RunResult
	rec.fill(&run, Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond})
	// 2 connections at 20ms serve 100/s of the 400/s asked: the requests
	// wait for a connection, and that wait is charged to latency.
	if run.Latency.Quantile(0.99) < 500*time.Millisecond {
		t.Errorf("corrected p99 %s hides the client-side queue", run.Latency.Quantile(0.99))
	}
	if run.Requests != 200 {
		t.Errorf("requests %d, want 200", run.Requests)
	}
}

func TestAttackStopsOnCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{RatePerSec: 100},
		Duration: time.Minute,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rec, _, err := attack(ctx, srv.URL, spec)
	if err == nil {
		t.Fatal("no error after cancellation")
	}
	// A minute at 100/s is 6200 requests with warm-up; stopping early sends
	// a small fraction.
	if sent := rec.requests + rec.warmupN; sent > 1000 {
		t.Errorf("%d requests sent after cancellation at 300ms", sent)
	}
}

// TestFillMarksLaggingRunInvalid feeds the recorder results sent later and
// later behind schedule, as from a generator that cannot keep up.
func TestFillMarksLaggingRunInvalid(t *testing.T) {
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 1000},
		Duration: time.Second,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
	p := workloads.NewPacer(spec)
	p.SetWait(func(time.Time) {}) // schedule only; nothing is sent
	var results []*vegeta.Result
	for seq := uint64(0); ; seq++ {
		if _, stop := p.Pace(0, seq); stop {
			break
		}
		at, _ := p.Intended(seq)
		// Each request leaves 0.5ms later than the previous one's lag.
		results = append(results, &vegeta.Result{Seq: seq, Code: 200, Timestamp: at.Add(time.Duration(seq) * 500 * time.Microsecond), Latency: time.Millisecond})
	}
	rec := newRecorder(p, spec, []string{"a"})
	for _, r := range results {
		rec.add(r)
	}
	var run RunResult
	rec.fill(&run, Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond})
	if run.Valid || len(run.Invalid) != 2 {
		t.Fatalf("valid=%v reasons=%q, want invalid for rate and send lag", run.Valid, run.Invalid)
	}
	if run.AchievedRate > 700 {
		t.Errorf("achieved rate %.0f/s; sending took 1.5s for 1000 requests", run.AchievedRate)
	}
	// Latency from the intended time includes the lag: the last request was
	// about 500ms late.
	if m := run.Latency.Quantile(1); m < 490*time.Millisecond {
		t.Errorf("max corrected latency %s, want about 500ms", m)
	}
}
