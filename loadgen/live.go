package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// LiveStats is a glimpse of the run in progress, for a progress display.
// Its latency is approximate (see P99); the results hold the exact figures.
type LiveStats struct {
	// Elapsed is the time since load began, warm-up included; Planned is
	// warm-up plus the measured window.
	Elapsed, Planned time.Duration
	// Warmup is true while the requests completing are warm-up requests.
	Warmup bool
	// Requests and Errors count the requests completed so far in this
	// run, warm-up included.
	Requests, Errors uint64
	// RatePerSec is the completions of the last interval per second.
	RatePerSec float64
	// P99 is the 99th percentile latency, from the intended send time, of
	// the requests that completed in the last interval; within about 6%
	// (coarse buckets keep recording lock-free). Zero when none completed.
	P99 time.Duration
}

// LiveContext returns ctx carrying f, the callback Attack reports live
// figures to about once per second while its load is on, from a goroutine
// of its own (never concurrently with itself, and not after Attack
// returns); a nil f returns ctx as it is. Generators passes a single
// generator process's figures on too; K > 1 processes report none.
func LiveContext(ctx context.Context, f func(LiveStats)) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, liveKey{}, f)
}

// LiveFunc returns the live-figures callback ctx carries, or nil.
func LiveFunc(ctx context.Context) func(LiveStats) {
	f, _ := ctx.Value(liveKey{}).(func(LiveStats))
	return f
}

// liveKey carries the callback through ctx, as net/http/httptrace carries
// its hooks, so that Attack's signature stays the same.
type liveKey struct{}

// liveInterval is how often a meter reports.
const liveInterval = time.Second

// liveBuckets is the size of liveMeter's log-linear histogram: exact below
// 32 µs, then 16 buckets per power of two up to 2^32 µs (over an hour).
const liveBuckets = 32 + 27*16

// liveMeter counts completions and approximates the latency distribution
// of the current interval with atomic counters only, so that any number
// of stream goroutines can observe without locks or allocation. A ticker
// goroutine turns the counters into LiveStats.
type liveMeter struct {
	f       func(LiveStats)
	planned time.Duration
	warmup  time.Duration
	start   time.Time

	requests, errors atomic.Uint64
	buckets          [liveBuckets]atomic.Uint64

	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// startLive starts a meter when ctx carries a callback; otherwise it
// returns nil, whose methods do nothing.
func startLive(ctx context.Context, spec workloads.Spec) *liveMeter {
	f, _ := ctx.Value(liveKey{}).(func(LiveStats))
	if f == nil {
		return nil
	}
	m := &liveMeter{f: f, planned: spec.WarmupTime() + spec.Duration, warmup: spec.WarmupTime(),
		start: time.Now(), done: make(chan struct{})}
	m.wg.Go(m.loop)
	return m
}

// observe counts one result of the stream paced by p. It is safe for
// concurrent use and does not allocate.
func (m *liveMeter) observe(p *workloads.Pacer, res *vegeta.Result) {
	if m == nil {
		return
	}
	m.requests.Add(1)
	if res.Error != "" || res.Code < 200 || res.Code >= 400 {
		m.errors.Add(1)
	}
	lat := res.Latency
	if off, ok := p.Offset(res.Seq); ok {
		// As the recorder does: latency from the intended send time.
		lat += max(res.Timestamp.Sub(p.Began().Add(off)), 0)
	}
	m.buckets[liveBucket(uint64(max(lat.Microseconds(), 0)))].Add(1)
}

// liveBucket maps microseconds to a bucket: exact below 32, then the top
// five significant bits.
func liveBucket(us uint64) int {
	if us < 32 {
		return int(us)
	}
	msb := bits.Len64(us) - 1 // >= 5
	i := 32 + (msb-5)*16 + int(us>>(msb-4)) - 16
	return min(i, liveBuckets-1)
}

// liveUpper is the largest value of bucket i, in microseconds.
func liveUpper(i int) uint64 {
	if i < 32 {
		return uint64(i)
	}
	msb := (i-32)/16 + 5
	m := uint64((i-32)%16 + 16)
	return (m+1)<<(msb-4) - 1
}

func (m *liveMeter) loop() {
	t := time.NewTicker(liveInterval)
	defer t.Stop()
	last := m.start
	for {
		select {
		case <-m.done:
			return
		case now := <-t.C:
			m.f(m.snapshot(now, now.Sub(last)))
			last = now
		}
	}
}

// snapshot drains the interval's buckets. A result recorded while the
// buckets are drained may count in the next interval instead: good enough
// for a progress display.
func (m *liveMeter) snapshot(now time.Time, interval time.Duration) LiveStats {
	var counts [liveBuckets]uint64
	var n uint64
	for i := range m.buckets {
		counts[i] = m.buckets[i].Swap(0)
		n += counts[i]
	}
	st := LiveStats{Elapsed: now.Sub(m.start), Planned: m.planned, Requests: m.requests.Load(), Errors: m.errors.Load()}
	st.Warmup = st.Elapsed < m.warmup
	if interval > 0 {
		st.RatePerSec = float64(n) / interval.Seconds()
	}
	if n > 0 {
		rank := (99*n + 99) / 100 // ceil(0.99 n)
		var seen uint64
		for i, c := range counts {
			if seen += c; seen >= rank {
				st.P99 = time.Duration(liveUpper(i)) * time.Microsecond
				break
			}
		}
	}
	return st
}

// stop ends the ticker and waits for it; f is not called afterwards. It
// is idempotent.
func (m *liveMeter) stop() {
	if m == nil {
		return
	}
	m.stopOnce.Do(func() { close(m.done) })
	m.wg.Wait()
}

// liveWriter decodes the JSON lines of "lbbench attack --live" into
// LiveStats for the progress display, and ignores other lines. It
// calls f from one goroutine at a time, and never after close.
type liveWriter struct {
	mu     sync.Mutex
	f      func(LiveStats)
	buf    []byte
	closed bool
}

func (w *liveWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		var ls LiveStats
		if !w.closed && len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &ls) == nil {
			w.f(ls)
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *liveWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
