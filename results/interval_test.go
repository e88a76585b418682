package results

import (
	"testing"
	"time"
)

func TestIntervalRecorder(t *testing.T) {
	type rec struct {
		done, latency time.Duration
		failed        bool
	}
	type want struct {
		start            time.Duration
		requests, errors uint64
		latencies        []time.Duration // the interval's values
	}
	ms := time.Millisecond
	cases := []struct {
		name   string
		length time.Duration
		recs   []rec
		want   []want
	}{
		{name: "none recorded", length: IntervalLength},
		{
			name:   "by completion time, empty intervals left out",
			length: IntervalLength,
			recs: []rec{
				{done: 100 * ms, latency: 5 * ms},
				{done: 900 * ms, latency: 7 * ms, failed: true},
				{done: 1000 * ms, latency: 9 * ms},
				{done: 3500 * ms, latency: 11 * ms},
			},
			want: []want{
				{start: 0, requests: 2, errors: 1, latencies: []time.Duration{5 * ms, 7 * ms}},
				{start: time.Second, requests: 1, latencies: []time.Duration{9 * ms}},
				{start: 3 * time.Second, requests: 1, latencies: []time.Duration{11 * ms}},
			},
		},
		{
			name:   "late and early results go into the open interval",
			length: IntervalLength,
			recs: []rec{
				{done: -50 * ms, latency: 1 * ms}, // before the window: the first interval
				{done: 1200 * ms, latency: 2 * ms},
				{done: 800 * ms, latency: 3 * ms}, // its interval was closed
			},
			want: []want{
				{start: 0, requests: 1, latencies: []time.Duration{1 * ms}},
				{start: time.Second, requests: 2, latencies: []time.Duration{2 * ms, 3 * ms}},
			},
		},
		{
			name:   "longer intervals",
			length: 5 * time.Second,
			recs:   []rec{{done: 4 * time.Second, latency: ms}, {done: 12 * time.Second, latency: ms, failed: true}},
			want: []want{
				{start: 0, requests: 1, latencies: []time.Duration{ms}},
				{start: 10 * time.Second, requests: 1, errors: 1, latencies: []time.Duration{ms}},
			},
		},
		{
			name:   "zero length keeps none",
			length: 0,
			recs:   []rec{{done: time.Second, latency: ms}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewIntervalRecorder(c.length)
			for _, x := range c.recs {
				r.Record(x.done, x.latency, x.failed)
			}
			ivs, err := r.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if len(ivs) != len(c.want) {
				t.Fatalf("%d intervals %+v, want %d", len(ivs), ivs, len(c.want))
			}
			for i, w := range c.want {
				iv := ivs[i]
				if iv.Start != w.start || iv.Length != c.length || iv.Requests != w.requests || iv.Errors != w.errors {
					t.Errorf("interval %d: start %s length %s requests %d errors %d, want %s %s %d %d",
						i, iv.Start, iv.Length, iv.Requests, iv.Errors, w.start, c.length, w.requests, w.errors)
				}
				h, err := iv.Histogram()
				if err != nil {
					t.Fatal(err)
				}
				checkHist(t, "interval", h, hist(w.latencies))
				if iv.P99 != h.Quantile(0.99) {
					t.Errorf("interval %d: p99 %s, want %s", i, iv.P99, h.Quantile(0.99))
				}
			}
		})
	}
}

// TestIntervalRecorderAllocs checks that recording into the open interval
// allocates nothing: only closing an interval (once a second) does.
func TestIntervalRecorderAllocs(t *testing.T) {
	r := NewIntervalRecorder(IntervalLength)
	r.Record(0, time.Millisecond, false)
	if n := testing.AllocsPerRun(1000, func() { r.Record(500*time.Millisecond, 3*time.Millisecond, true) }); n != 0 {
		t.Errorf("Record allocates %.1f times per request, want 0", n)
	}
}

// BenchmarkIntervalRecorder records a million requests a second: a
// request costs a histogram record, and an interval's encoding is spread
// over the requests completing in it.
func BenchmarkIntervalRecorder(b *testing.B) {
	r := NewIntervalRecorder(IntervalLength)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Record(time.Duration(i)*time.Microsecond, time.Duration(100+i%5000)*time.Microsecond, i%100 == 0)
		i++
	}
	if _, err := r.Finish(); err != nil {
		b.Fatal(err)
	}
}
