package loadgen

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/workloads"
)

func TestLiveBuckets(t *testing.T) {
	prev := -1
	for _, us := range []uint64{0, 1, 31, 32, 33, 47, 63, 64, 100, 999, 1000, 1023, 1024, 12345, 1 << 20, 3_600_000_000} {
		i := liveBucket(us)
		if i < prev {
			t.Errorf("bucket of %d µs is %d, below the previous %d", us, i, prev)
		}
		prev = i
		up := liveUpper(i)
		if up < us || float64(up) > float64(us)*(1+1.0/16)+1 {
			t.Errorf("%d µs: bucket %d tops at %d, want within 1/16 above", us, i, up)
		}
		if i > 0 && liveUpper(i-1) >= us {
			t.Errorf("%d µs: the bucket below, %d, already reaches %d", us, i-1, liveUpper(i-1))
		}
	}
	if i := liveBucket(1 << 40); i != liveBuckets-1 {
		t.Errorf("huge value in bucket %d, want the last", i)
	}
}

// results returns n successful results with latencies step, 2*step, ...
func liveResults(n int, step time.Duration) []*vegeta.Result {
	out := make([]*vegeta.Result, n)
	for i := range out {
		out[i] = &vegeta.Result{Seq: uint64(i), Code: 200, Timestamp: time.Now(), Latency: time.Duration(i+1) * step}
	}
	return out
}

func TestLiveMeterSnapshot(t *testing.T) {
	spec := workloads.Spec{Duration: 10 * time.Second, Warmup: 2 * time.Second}
	ctx := LiveContext(context.Background(), func(LiveStats) {})
	m := startLive(ctx, spec)
	defer m.stop()
	pacer := workloads.NewPacer(workloads.Spec{Arrival: workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100}, Duration: time.Second})
	for _, r := range liveResults(1000, 100*time.Microsecond) {
		m.observe(pacer, r)
	}
	m.observe(pacer, &vegeta.Result{Code: 503, Latency: time.Millisecond})
	st := m.snapshot(m.start.Add(3*time.Second), 2*time.Second)
	if st.Requests != 1001 || st.Errors != 1 {
		t.Errorf("requests %d, errors %d", st.Requests, st.Errors)
	}
	if st.RatePerSec != 500.5 {
		t.Errorf("rate %g, want 1001 over 2s", st.RatePerSec)
	}
	// p99 of 0.1..100 ms is 99 ms; the buckets are within 1/16.
	if st.P99 < 99*time.Millisecond || st.P99 > 106*time.Millisecond {
		t.Errorf("p99 %s, want 99ms to 106ms", st.P99)
	}
	if st.Warmup || st.Elapsed != 3*time.Second || st.Planned != 12*time.Second {
		t.Errorf("phase %+v", st)
	}
	// The interval was drained: the next one is empty.
	if st := m.snapshot(m.start.Add(4*time.Second), time.Second); st.RatePerSec != 0 || st.P99 != 0 || st.Requests != 1001 {
		t.Errorf("next interval %+v", st)
	}
}

func TestLiveMeterReportsAndStops(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []LiveStats
	ctx := LiveContext(context.Background(), func(st LiveStats) {
		mu.Lock()
		got = append(got, st)
		mu.Unlock()
	})
	m := startLive(ctx, workloads.Spec{Duration: time.Minute})
	t.Cleanup(m.stop)
	pacer := workloads.NewPacer(workloads.Spec{Arrival: workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100}, Duration: time.Second})
	// Until two reports or the kit's timeout; n is checked after stop.
	testkit.Poll(testkit.WaitTimeout, func() bool {
		m.observe(pacer, liveResults(1, time.Millisecond)[0])
		mu.Lock()
		n := len(got)
		mu.Unlock()
		return n >= 2
	})
	// The meter's loop runs until stop, so the check after stop can fail.
	if !liveLoopRunning() {
		t.Fatal("liveLoopRunning does not see the running meter's loop")
	}
	m.stop()
	m.stop() // idempotent
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n < 2 {
		t.Fatalf("%d reports in 10s, want one a second", n)
	}
	if got[0].Requests == 0 || got[1].Elapsed <= got[0].Elapsed {
		t.Errorf("reports %+v", got)
	}
	// Only the meter's loop calls f: with the loop gone when stop returns,
	// nothing can report afterwards. (No other test in the package runs a
	// meter meanwhile: TestLiveMeterSnapshot, the other one that does, is
	// not parallel.)
	if liveLoopRunning() {
		t.Errorf("the meter's loop still runs after stop: it may report after stop")
	}
}

// liveLoopRunning reports whether a goroutine runs a liveMeter's loop.
func liveLoopRunning() bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte(".(*liveMeter).loop("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestLiveMeterOff(t *testing.T) {
	m := startLive(context.Background(), workloads.Spec{})
	if m != nil {
		t.Fatal("a meter without a callback")
	}
	m.observe(nil, &vegeta.Result{}) // nil meters do nothing
	m.stop()
}

func BenchmarkLiveObserve(b *testing.B) {
	ctx := LiveContext(context.Background(), func(LiveStats) {})
	m := startLive(ctx, workloads.Spec{Duration: time.Minute})
	defer m.stop()
	pacer := workloads.NewPacer(workloads.Spec{Arrival: workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100}, Duration: time.Second})
	r := &vegeta.Result{Code: 200, Timestamp: time.Now(), Latency: 3 * time.Millisecond}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observe(pacer, r)
		}
	})
}

func BenchmarkLiveObserveOneStream(b *testing.B) {
	ctx := LiveContext(context.Background(), func(LiveStats) {})
	m := startLive(ctx, workloads.Spec{Duration: time.Minute})
	defer m.stop()
	pacer := workloads.NewPacer(workloads.Spec{Arrival: workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100}, Duration: time.Second})
	r := &vegeta.Result{Code: 200, Timestamp: time.Now(), Latency: 3 * time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		m.observe(pacer, r)
	}
}

func TestLiveWriter(t *testing.T) {
	var got []LiveStats
	w := &liveWriter{f: func(ls LiveStats) { got = append(got, ls) }}
	// Lines arrive in pieces, mixed with other output.
	for _, chunk := range []string{`{"Elapsed":1000000000,"Requests":10`, `0,"RatePerSec":99.5,"P99":2000000}` + "\nattack: a word\n", `{"Elapsed":2000000000}` + "\n{bad\n"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if len(got) != 2 || got[0].Requests != 100 || got[0].RatePerSec != 99.5 || got[0].P99 != 2*time.Millisecond || got[1].Elapsed != 2*time.Second {
		t.Fatalf("decoded %+v", got)
	}
	w.close()
	w.Write([]byte(`{"Elapsed":3000000000}` + "\n"))
	if len(got) != 2 {
		t.Errorf("called after close: %+v", got)
	}
}
