package results

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestHistogramJSONRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := range 10000 {
		h.RecordDuration(time.Duration(i*i) * time.Microsecond / 7)
	}
	h.RecordDuration(-time.Second)  // clamped to 0
	h.RecordDuration(2 * time.Hour) // clamped to the top
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Summarize() != h.Summarize() {
		t.Fatalf("round trip changed the summary: %+v vs %+v", back.Summarize(), h.Summarize())
	}
	if !back.Equals(h.Histogram) {
		t.Fatal("round trip changed the histogram")
	}
	if err := json.Unmarshal([]byte(`"not a histogram"`), &back); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

func TestHistogramMergeLossless(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for i := range 1000 {
		a.RecordDuration(time.Duration(i) * time.Microsecond)
		b.RecordDuration(time.Duration(i) * time.Millisecond)
	}
	m := NewHistogram()
	if err := m.MergeFrom(a); err != nil {
		t.Fatal(err)
	}
	if err := m.MergeFrom(b); err != nil {
		t.Fatal(err)
	}
	if m.TotalCount() != 2000 {
		t.Fatalf("merged count %d, want 2000", m.TotalCount())
	}
	// Median of the union: between the two halves.
	if p50 := m.Quantile(0.5); p50 < 990*time.Microsecond || p50 > time.Millisecond+time.Microsecond {
		t.Errorf("merged p50 %s, want about 1ms", p50)
	}
}

func FuzzHistogramUnmarshal(f *testing.F) {
	h := NewHistogram()
	h.RecordDuration(time.Millisecond)
	seed, _ := json.Marshal(h)
	f.Add(seed)
	f.Add([]byte(`"HISTFAAAAB"`))
	// Whatever decodes survives a round trip through the encoding that
	// results files use, with the same figures.
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Histogram
		if err := json.Unmarshal(data, &h); err != nil || h.Histogram == nil {
			return
		}
		again, err := json.Marshal(&h)
		if err != nil {
			t.Fatalf("decoded histogram does not encode: %v", err)
		}
		var h2 Histogram
		if err := json.Unmarshal(again, &h2); err != nil {
			t.Fatalf("re-encoded histogram does not decode: %v", err)
		}
		if a, b := h.Summarize(), h2.Summarize(); a != b {
			t.Errorf("summary %+v after a round trip, %+v before", b, a)
		}
	})
}

func TestSkew(t *testing.T) {
	for _, tc := range []struct {
		counts []uint64
		want   float64
	}{
		{nil, 0},
		{[]uint64{0, 0}, 0},
		{[]uint64{10, 10, 10}, 1},
		{[]uint64{5, 10, 20}, 4},
		{[]uint64{0, 3}, math.Inf(1)},
	} {
		if got := Skew(tc.counts); got != tc.want {
			t.Errorf("Skew(%v) = %v, want %v", tc.counts, got, tc.want)
		}
	}
}
