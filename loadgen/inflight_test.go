package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lbbench/lbbench/workloads"
)

// goroutinePeak samples runtime.NumGoroutine every millisecond until stop
// is called, and returns the largest count seen.
func goroutinePeak() (stop func() int) {
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int {
		close(done)
		<-finished
		return int(peak.Load())
	}
}

// TestInFlightCapHolds offers 1000 requests/s to a real server that can
// answer 200/s (4 connections, 20 ms each): far past its saturation. With
// clients.max_in_flight 16, the generator never has more than 16 requests
// outstanding (its own count, and an independent goroutine count that
// grows by hundreds without the cap), the requests it held back are
// counted, every request is still measured from its intended time, and the
// send lag shows the requests held back.
func TestInFlightCapHolds(t *testing.T) {
	var active, peakServer atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for p := peakServer.Load(); n > p && !peakServer.CompareAndSwap(p, n); p = peakServer.Load() {
		}
		time.Sleep(20 * time.Millisecond)
	}))
	defer srv.Close()

	spec := func(maxInFlight int) workloads.Spec {
		return workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 1000},
			Duration: 300 * time.Millisecond,
			Warmup:   -1,
			Classes:  []workloads.Class{{Name: "a", Weight: 1}},
			Clients:  workloads.Clients{Connections: 4, MaxInFlight: maxInFlight},
		}.WithDefaults()
	}

	base := runtime.NumGoroutine()
	stop := goroutinePeak()
	m, err := Attack(context.Background(), srv.URL, spec(16), Options{})
	capped := stop() - base
	if err != nil {
		t.Fatal(err)
	}
	g := m.Generator
	t.Logf("capped: %d requests, in flight peak %d of %d, %d held, send lag p99 %s, max latency %s, goroutines +%d, server concurrency %d",
		m.Requests, g.PeakInFlight, g.MaxInFlight, g.Held, m.SendLag.Quantile(0.99), m.Latency.Quantile(1), capped, peakServer.Load())
	if g.MaxInFlight != 16 {
		t.Errorf("recorded cap %d, want the 16 asked for", g.MaxInFlight)
	}
	if g.PeakInFlight > 16 || g.PeakInFlight < 4 {
		t.Errorf("in-flight peak %d, want between the 4 connections and the cap of 16", g.PeakInFlight)
	}
	if m.Requests != 300 || uint64(m.Latency.TotalCount()) != m.Requests {
		t.Errorf("%d requests, %d in the latency histogram; want all 300 in both", m.Requests, m.Latency.TotalCount())
	}
	// 300 requests at 200/s take 1.5 s: most of them were due while the
	// cap was reached, and the last, due at 0.3 s, is answered about 1.2 s
	// late, which its corrected latency must show.
	if g.Held < 150 {
		t.Errorf("%d requests held back, want most of the 300", g.Held)
	}
	if mx := m.Latency.Quantile(1); mx < 800*time.Millisecond {
		t.Errorf("max corrected latency %s: the lateness was not charged from the intended time", mx)
	}
	if lag := m.SendLag.Quantile(0.99); lag < 5*time.Millisecond {
		t.Errorf("send lag p99 %s: the requests held at the cap were not sent late", lag)
	}

	// The same load with the derived cap (4 + DefaultMaxQueued): the
	// generator keeps the late requests outstanding, and the goroutine
	// count shows it, so the count above is able to see a pile-up.
	base = runtime.NumGoroutine()
	stop = goroutinePeak()
	m, err = Attack(context.Background(), srv.URL, spec(0), Options{})
	uncapped := stop() - base
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("derived cap: in flight peak %d of %d, %d held, goroutines +%d", m.Generator.PeakInFlight, m.Generator.MaxInFlight, m.Generator.Held, uncapped)
	if m.Generator.MaxInFlight != 4+workloads.DefaultMaxQueued {
		t.Errorf("derived cap %d, want %d", m.Generator.MaxInFlight, 4+workloads.DefaultMaxQueued)
	}
	if m.Generator.Held != 0 || m.Generator.PeakInFlight < 100 {
		t.Errorf("derived cap: peak %d, held %d; want a large peak and nothing held", m.Generator.PeakInFlight, m.Generator.Held)
	}
	if capped > 16+inFlightSlack+40 || uncapped < capped+100 {
		t.Errorf("goroutines grew by %d with the cap of 16 and by %d without: want at most %d with it, and hundreds more without",
			capped, uncapped, 16+inFlightSlack+40)
	}
}

// TestAttackCancelLowRate: at 0.05 requests per second the second request
// is due 20 s after the first. Cancelling the attack 200 ms in must end it
// at once, not at the next arrival. An ordering with a wide margin: it
// returns before 10 s, half the wait it was in.
func TestAttackCancelLowRate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 0.05},
		Duration: time.Minute,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	m, err := Attack(ctx, srv.URL, spec, Options{})
	took := time.Since(start)
	t.Logf("cancelled 200 ms in, returned after %s", took)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if took > 10*time.Second {
		t.Errorf("returned %s after start: it waited for the next arrival", took)
	}
	if m == nil || m.Requests != 1 {
		t.Errorf("measurement %+v, want the one request sent", m)
	}
}

// TestAttackCancelStuckTarget: a target that never answers holds every
// request for the whole 10 s timeout. Cancelling the attack gives them
// CancelGrace, then closes their connections: it returns well before the
// timeout, with those requests counted as cancelled errors.
func TestAttackCancelStuckTarget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100},
		Duration: time.Minute,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		Timeout:  10 * time.Second,
	}.WithDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	m, err := Attack(ctx, srv.URL, spec, Options{})
	took := time.Since(start)
	t.Logf("cancelled 300 ms in, returned after %s", took)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if took > 5*time.Second {
		t.Errorf("returned %s after start: the stuck requests held it towards their 10 s timeout", took)
	}
	if m == nil || m.Errors == 0 || m.ErrorKinds["cancelled"] != m.Errors {
		t.Errorf("measurement errors %v, want every stuck request counted as cancelled", m.ErrorKinds)
	}
}

// TestRateAboveCapacityEndsInTime: a target that cannot keep up (4
// connections, 200 ms a request, against 1000 requests a second) holds
// requests at the cap; once one has waited past the request timeout the
// attack ends, the rest of the schedule is counted as never sent, every
// scheduled request is in the measurement, and the attack ends at its
// duration plus the timeout (it once took a minute for a one-second run).
func TestRateAboveCapacityEndsInTime(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 1000},
		Duration: time.Second,
		Warmup:   -1,
		Timeout:  500 * time.Millisecond,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
		Clients:  workloads.Clients{Connections: 4, MaxInFlight: 16},
	}.WithDefaults()
	start := time.Now()
	m, err := Attack(context.Background(), srv.URL, spec, Options{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Generator
	t.Logf("took %s: %d requests, %d errors %v, held %d, unsent %d", took, m.Requests, m.Errors, m.ErrorKinds, g.Held, g.Unsent)
	if took > spec.Duration+spec.Timeout+time.Second {
		t.Errorf("took %s, past the duration %s plus the timeout %s", took, spec.Duration, spec.Timeout)
	}
	if g.Unsent == 0 || m.ErrorKinds[ErrorUnsent] != g.Unsent {
		t.Errorf("unsent %d, errors %v: the requests never sent must be counted as such", g.Unsent, m.ErrorKinds)
	}
	if m.Requests != 1000 {
		t.Errorf("%d requests in the measurement, want all 1000 scheduled", m.Requests)
	}
}
