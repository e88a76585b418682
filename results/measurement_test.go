package results

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/workloads"
)

// durations returns n durations: first, first+step, first+2*step, ...
func durations(n int, first, step time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = first + time.Duration(i)*step
	}
	return out
}

// hist records every value of each of vs into a new histogram.
func hist(vs ...[]time.Duration) *Histogram {
	h := NewHistogram()
	for _, v := range vs {
		for _, d := range v {
			h.RecordDuration(d)
		}
	}
	return h
}

// interval encodes the values as the interval starting at start.
func interval(t *testing.T, start time.Duration, errors uint64, vs []time.Duration) Interval {
	t.Helper()
	iv, err := EncodeInterval(start, IntervalLength, hist(vs), uint64(len(vs)), errors)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// checkHist fails unless got holds exactly the values recorded in want:
// the same count, the same quantiles, the same buckets.
func checkHist(t *testing.T, name string, got, want *Histogram) {
	t.Helper()
	if got == nil || got.Histogram == nil {
		t.Errorf("%s: no histogram", name)
		return
	}
	if got.TotalCount() != want.TotalCount() {
		t.Errorf("%s: %d values, want %d", name, got.TotalCount(), want.TotalCount())
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		if g, w := got.Quantile(q), want.Quantile(q); g != w {
			t.Errorf("%s: quantile %g is %s, want %s", name, q, g, w)
		}
	}
	if !got.Equals(want.Histogram) {
		t.Errorf("%s: buckets differ from a histogram that recorded every value", name)
	}
}

// The values of the two measurements mergeFixtures builds, by part.
var (
	latA = durations(1000, 100*time.Microsecond, 37*time.Microsecond)
	latB = durations(500, time.Millisecond, 1300*time.Microsecond)
	lagA = durations(1000, 0, time.Microsecond)
	lagB = durations(500, 10*time.Microsecond, 20*time.Microsecond)
)

// mergeFixtures returns two measurements of the same workload (classes
// "read" and "write") whose clients, steps, intervals and workers overlap
// in part.
func mergeFixtures(t *testing.T) (a, b *Measurement) {
	t.Helper()
	a = &Measurement{
		Duration: 10 * time.Second, Requests: 1000, Errors: 10, WarmupRequests: 200, Unmapped: 1,
		ErrorKinds:   map[string]uint64{"timeout": 6, "reset": 4},
		Latency:      hist(latA),
		Uncorrected:  hist(latA[:900]),
		SendLag:      hist(lagA),
		ErrorLatency: hist(latA[:10]),
		Classes: []Class{
			{Name: "read", Requests: 600, Errors: 6, Latency: hist(latA[:600])},
			{Name: "write", Requests: 400, Errors: 4, Latency: hist(latA[600:])},
		},
		Clients: []Client{
			{Name: "x", Share: 1, Requests: 500, Errors: 5, Latency: hist(latA[:500])},
			{Name: "y", Share: 2, Requests: 500, Errors: 5, Latency: hist(latA[500:])},
		},
		Steps: []Step{
			{RatePerSec: 50, Start: 0, Duration: 5 * time.Second, Requests: 400, Errors: 1, Latency: hist(latA[:400])},
			{RatePerSec: 150, Start: 5 * time.Second, Duration: 5 * time.Second, Requests: 600, Errors: 9, Latency: hist(latA[400:])},
		},
		Intervals: []Interval{
			interval(t, 1*time.Second, 3, latA[:300]),
			interval(t, 3*time.Second, 7, latA[300:]),
		},
		ByWorker:     map[int]uint64{0: 600, 1: 400},
		IntendedRate: 100, AchievedRate: 99,
		Generator: Generator{CPU: 2 * time.Second, MaxRSS: 50 << 20, Processes: 1, Streams: 2,
			Connections: 64, Opened: 70, KeepAlive: true},
	}
	b = &Measurement{
		Duration: 8 * time.Second, Requests: 500, Errors: 5, WarmupRequests: 100, Unmapped: 2,
		ErrorKinds:   map[string]uint64{"timeout": 1, "refused": 4},
		Latency:      hist(latB),
		Uncorrected:  hist(latB[:450]),
		SendLag:      hist(lagB),
		ErrorLatency: hist(latB[:5]),
		Classes: []Class{
			{Name: "read", Requests: 250, Errors: 2, Latency: hist(latB[:250])},
			{Name: "write", Requests: 250, Errors: 3, Latency: hist(latB[250:])},
		},
		Clients: []Client{
			{Name: "y", Share: 2, Requests: 200, Errors: 1, Latency: hist(latB[:200])},
			{Name: "z", Share: 1, Requests: 300, Errors: 4, Latency: hist(latB[200:])},
		},
		Steps: []Step{
			{RatePerSec: 50, Start: 0, Duration: 5 * time.Second, Requests: 100, Errors: 2, Latency: hist(latB[:100])},
			{RatePerSec: 150, Start: 5 * time.Second, Duration: 5 * time.Second, Requests: 400, Errors: 3, Latency: hist(latB[100:])},
		},
		// Before, between, on and after a's intervals.
		Intervals: []Interval{
			interval(t, 0, 1, latB[:100]),
			interval(t, 2*time.Second, 0, latB[100:200]),
			interval(t, 3*time.Second, 2, latB[200:400]),
			interval(t, 4*time.Second, 0, latB[400:]),
		},
		ByWorker:     map[int]uint64{1: 200, 2: 300},
		IntendedRate: 50, AchievedRate: 49,
		Generator: Generator{CPU: 3 * time.Second, MaxRSS: 40 << 20, Processes: 1, Streams: 1,
			Connections: 32, Opened: 40, KeepAlive: true, RequestsPerConn: 5},
	}
	return a, b
}

// TestMeasurementMerge merges the fixtures, into the first and into a zero
// Measurement (as the generators' results are merged), and checks every
// field against what recording everything in one measurement would give.
func TestMeasurementMerge(t *testing.T) {
	tests := []struct {
		name  string
		merge func(t *testing.T, a, b *Measurement) *Measurement
	}{
		{
			name: "into the first",
			merge: func(t *testing.T, a, b *Measurement) *Measurement {
				if err := a.Merge(b); err != nil {
					t.Fatal(err)
				}
				return a
			},
		},
		{
			name: "into a zero value",
			merge: func(t *testing.T, a, b *Measurement) *Measurement {
				var m Measurement
				for _, o := range []*Measurement{a, b} {
					if err := m.Merge(o); err != nil {
						t.Fatal(err)
					}
				}
				return &m
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mergeFixtures(t)
			m := tt.merge(t, a, b)

			if m.Duration != 10*time.Second || m.Requests != 1500 || m.Errors != 15 || m.WarmupRequests != 300 || m.Unmapped != 3 {
				t.Errorf("duration %s requests %d errors %d warm-up %d unmapped %d, want 10s 1500 15 300 3",
					m.Duration, m.Requests, m.Errors, m.WarmupRequests, m.Unmapped)
			}
			if want := map[string]uint64{"timeout": 7, "reset": 4, "refused": 4}; !reflect.DeepEqual(m.ErrorKinds, want) {
				t.Errorf("error kinds %v, want %v", m.ErrorKinds, want)
			}
			checkHist(t, "latency", m.Latency, hist(latA, latB))
			checkHist(t, "uncorrected", m.Uncorrected, hist(latA[:900], latB[:450]))
			checkHist(t, "send lag", m.SendLag, hist(lagA, lagB))
			checkHist(t, "error latency", m.ErrorLatency, hist(latA[:10], latB[:5]))

			// Classes by index.
			if len(m.Classes) != 2 || m.Classes[0].Name != "read" || m.Classes[1].Name != "write" {
				t.Fatalf("classes %+v, want read and write", m.Classes)
			}
			for i, w := range []struct {
				requests, errors uint64
				lat              *Histogram
			}{
				{850, 8, hist(latA[:600], latB[:250])},
				{650, 7, hist(latA[600:], latB[250:])},
			} {
				c := m.Classes[i]
				if c.Requests != w.requests || c.Errors != w.errors {
					t.Errorf("class %s: %d requests %d errors, want %d %d", c.Name, c.Requests, c.Errors, w.requests, w.errors)
				}
				checkHist(t, "class "+c.Name, c.Latency, w.lat)
			}

			// Clients by name, not by share (x and z have the same); z, only
			// in b, comes last.
			var names []string
			for _, c := range m.Clients {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, []string{"x", "y", "z"}) {
				t.Fatalf("clients %q, want x, y, z", names)
			}
			for i, w := range []struct {
				share            float64
				requests, errors uint64
				lat              *Histogram
			}{
				{1, 500, 5, hist(latA[:500])},
				{2, 700, 6, hist(latA[500:], latB[:200])},
				{1, 300, 4, hist(latB[200:])},
			} {
				c := m.Clients[i]
				if c.Share != w.share || c.Requests != w.requests || c.Errors != w.errors {
					t.Errorf("client %s: share %g, %d requests %d errors, want %g %d %d",
						c.Name, c.Share, c.Requests, c.Errors, w.share, w.requests, w.errors)
				}
				checkHist(t, "client "+c.Name, c.Latency, w.lat)
			}

			// Steps by index: each generator offers its part of the rate.
			if len(m.Steps) != 2 {
				t.Fatalf("%d steps, want 2", len(m.Steps))
			}
			for i, w := range []struct {
				rate             float64
				start            time.Duration
				requests, errors uint64
				lat              *Histogram
			}{
				{100, 0, 500, 3, hist(latA[:400], latB[:100])},
				{300, 5 * time.Second, 1000, 12, hist(latA[400:], latB[100:])},
			} {
				s := m.Steps[i]
				if s.RatePerSec != w.rate || s.Start != w.start || s.Duration != 5*time.Second || s.Requests != w.requests || s.Errors != w.errors {
					t.Errorf("step %d: %+v, want rate %g start %s duration 5s, %d requests %d errors",
						i, s, w.rate, w.start, w.requests, w.errors)
				}
				checkHist(t, "step", s.Latency, w.lat)
			}

			// Intervals by start: 0 and 2s inserted, 3s merged, 4s appended.
			wantIvs := []struct {
				start            time.Duration
				requests, errors uint64
				lat              *Histogram
			}{
				{0, 100, 1, hist(latB[:100])},
				{1 * time.Second, 300, 3, hist(latA[:300])},
				{2 * time.Second, 100, 0, hist(latB[100:200])},
				{3 * time.Second, 900, 9, hist(latA[300:], latB[200:400])},
				{4 * time.Second, 100, 0, hist(latB[400:])},
			}
			if len(m.Intervals) != len(wantIvs) {
				t.Fatalf("%d intervals, want %d", len(m.Intervals), len(wantIvs))
			}
			for i, w := range wantIvs {
				iv := m.Intervals[i]
				if iv.Start != w.start || iv.Length != IntervalLength || iv.Requests != w.requests || iv.Errors != w.errors {
					t.Errorf("interval %d: start %s length %s, %d requests %d errors; want %s %s %d %d",
						i, iv.Start, iv.Length, iv.Requests, iv.Errors, w.start, IntervalLength, w.requests, w.errors)
				}
				if iv.P99 != w.lat.Quantile(0.99) {
					t.Errorf("interval %s: p99 %s, want %s", iv.Start, iv.P99, w.lat.Quantile(0.99))
				}
				h, err := iv.Histogram()
				if err != nil {
					t.Fatalf("interval %s: %v", iv.Start, err)
				}
				checkHist(t, "interval "+iv.Start.String(), h, w.lat)
			}

			if want := map[int]uint64{0: 600, 1: 600, 2: 300}; !reflect.DeepEqual(m.ByWorker, want) {
				t.Errorf("by worker %v, want %v", m.ByWorker, want)
			}
			if m.IntendedRate != 150 || m.AchievedRate != 148 {
				t.Errorf("intended %g achieved %g, want 150 148", m.IntendedRate, m.AchievedRate)
			}
			wantGen := Generator{CPU: 5 * time.Second, MaxRSS: 50 << 20, Processes: 1, Streams: 3,
				Connections: 96, Opened: 110, KeepAlive: true, RequestsPerConn: 5}
			if m.Generator != wantGen {
				t.Errorf("generator %+v, want %+v", m.Generator, wantGen)
			}
		})
	}
}

// TestMeasurementMergeDoesNotAliasSource checks that merging into a zero
// Measurement copies: recording into the merged histograms leaves the
// source's alone, since a generator's measurement may still be read.
func TestMeasurementMergeDoesNotAliasSource(t *testing.T) {
	a, _ := mergeFixtures(t)
	before := a.Latency.TotalCount()
	var m Measurement
	if err := m.Merge(a); err != nil {
		t.Fatal(err)
	}
	m.Latency.RecordDuration(time.Millisecond)
	m.Classes[0].Latency.RecordDuration(time.Millisecond)
	m.Clients[0].Latency.RecordDuration(time.Millisecond)
	m.Steps[0].Latency.RecordDuration(time.Millisecond)
	if a.Latency.TotalCount() != before || a.Classes[0].Latency.TotalCount() != 600 ||
		a.Clients[0].Latency.TotalCount() != 500 || a.Steps[0].Latency.TotalCount() != 400 {
		t.Error("recording into the merged measurement changed the source's histograms")
	}
}

// TestMeasurementMergeClassMismatch checks that measurements of different
// workloads (another number of classes) refuse to merge.
func TestMeasurementMergeClassMismatch(t *testing.T) {
	a, b := mergeFixtures(t)
	b.Classes = b.Classes[:1]
	err := a.Merge(b)
	if err == nil {
		t.Fatal("merged 1 class into 2 without error")
	}
	if !strings.Contains(err.Error(), "classes") {
		t.Errorf("error %q does not say the classes differ", err)
	}
}

func TestNewMeasurement(t *testing.T) {
	spec := workloads.Spec{
		Arrival: workloads.Arrival{Kind: workloads.Steps, Steps: []workloads.Step{
			{RatePerSec: 100, Duration: 2 * time.Second}, {RatePerSec: 200, Duration: time.Second}, {RatePerSec: 300, Duration: 3 * time.Second},
		}},
		Classes: []workloads.Class{{Name: "short", Weight: 9}, {Name: "long", Weight: 1}},
	}.WithDefaults()
	m := NewMeasurement(spec)
	if m.Duration != 6*time.Second || m.Latency == nil || m.Uncorrected == nil || m.SendLag == nil || m.ErrorLatency == nil || m.ByWorker == nil {
		t.Fatalf("NewMeasurement = %+v, want a 6s window with every histogram", m)
	}
	if len(m.Classes) != 2 || m.Classes[0].Name != "short" || m.Classes[1].Name != "long" || m.Classes[1].Latency == nil {
		t.Errorf("classes %+v, want short and long with histograms", m.Classes)
	}
	wantStarts := []time.Duration{0, 2 * time.Second, 3 * time.Second}
	if len(m.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(m.Steps))
	}
	for i, s := range m.Steps {
		if s.Start != wantStarts[i] || s.RatePerSec != float64(spec.Arrival.Steps[i].RatePerSec) || s.Duration != spec.Arrival.Steps[i].Duration || s.Latency == nil {
			t.Errorf("step %d = %+v, want start %s", i, s, wantStarts[i])
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{-time.Second, 0}, {0, 0}, {2*time.Second - 1, 0}, {2 * time.Second, 1}, {3 * time.Second, 2}, {time.Hour, 2}} {
		if got := m.stepAt(tc.at); got != tc.want {
			t.Errorf("stepAt(%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
	if m := NewMeasurement(workloads.Spec{Arrival: workloads.Arrival{Kind: workloads.Poisson, RatePerSec: 1}}.WithDefaults()); len(m.Steps) != 0 {
		t.Errorf("poisson arrival has steps %+v", m.Steps)
	}
}

func TestMeasurementRecord(t *testing.T) {
	spec := workloads.Spec{
		Arrival: workloads.Arrival{Kind: workloads.Steps, Steps: []workloads.Step{{RatePerSec: 10, Duration: time.Second}, {RatePerSec: 20, Duration: time.Second}}},
		Classes: []workloads.Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}},
	}.WithDefaults()
	m := NewMeasurement(spec)
	m.Clients = []Client{{Name: "c", Share: 1, Latency: NewHistogram()}}
	ms := time.Millisecond
	for _, s := range []Sample{
		{Scheduled: 100 * ms, Latency: 5 * ms, Uncorrected: 4 * ms, SendLag: ms, Class: 0, Client: 0},
		{Scheduled: 1500 * ms, Latency: 50 * ms, Uncorrected: 50 * ms, Failed: true, ErrorKind: "timeout", Class: 1, Client: -1},
		{Scheduled: 1600 * ms, Latency: 7 * ms, Failed: true, ErrorKind: "503", Class: -1, Client: 0},
		{Scheduled: 1700 * ms, Latency: 9 * ms, Failed: true, ErrorKind: "timeout", Class: 7, Client: 3}, // out of range: no class, no client
	} {
		m.Record(s)
	}
	if m.Requests != 4 || m.Errors != 3 || m.ErrorKinds["timeout"] != 2 || m.ErrorKinds["503"] != 1 {
		t.Errorf("requests %d errors %d kinds %v, want 4, 3, 2 timeouts and a 503", m.Requests, m.Errors, m.ErrorKinds)
	}
	checkHist(t, "latency", m.Latency, hist([]time.Duration{5 * ms, 50 * ms, 7 * ms, 9 * ms}))
	checkHist(t, "uncorrected", m.Uncorrected, hist([]time.Duration{4 * ms, 50 * ms, 0, 0}))
	checkHist(t, "send lag", m.SendLag, hist([]time.Duration{ms, 0, 0, 0}))
	checkHist(t, "error latency", m.ErrorLatency, hist([]time.Duration{50 * ms, 7 * ms, 9 * ms}))
	for _, c := range []struct {
		name string
		got  *Histogram
		want []time.Duration
	}{
		{"class a", m.Classes[0].Latency, []time.Duration{5 * ms}},
		{"class b", m.Classes[1].Latency, []time.Duration{50 * ms}},
		{"client c", m.Clients[0].Latency, []time.Duration{5 * ms, 7 * ms}},
		{"step 0", m.Steps[0].Latency, []time.Duration{5 * ms}},
		{"step 1", m.Steps[1].Latency, []time.Duration{50 * ms, 7 * ms, 9 * ms}},
	} {
		checkHist(t, c.name, c.got, hist(c.want))
	}
	if m.Classes[0].Requests != 1 || m.Classes[1].Errors != 1 || m.Clients[0].Requests != 2 || m.Clients[0].Errors != 1 ||
		m.Steps[0].Requests != 1 || m.Steps[1].Requests != 3 || m.Steps[1].Errors != 3 {
		t.Errorf("counts: classes %+v clients %+v steps %+v", m.Classes, m.Clients, m.Steps)
	}
}
