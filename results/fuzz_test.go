package results

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the results reader: it must return
// an error or results that pass its own checks, never panic, and never
// allocate beyond the bounded histogram geometry (the fuzzer's memory
// limit would stop it).
func FuzzDecode(f *testing.F) {
	if data, err := os.ReadFile("testdata/schema1-before-split.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("null"))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"schema": -1}`))
	f.Add([]byte(`{"schema": 1, "scenario": {"variants": [{"name": "a"}]}, "runs": [{"variant": "b"}]}`))
	f.Add([]byte(`{"schema": 1, "scenario": {"variants": [{"name": "a"}]}, "runs": [{"variant": "a", "latency": "HISTFAAAACx4nJNpmSzMwMDAxQABzFCaEUzKT2D/AgEMNgI2"}]}`))
	f.Add([]byte(`{"schema": 1e400, "runs": [{"achieved_rate": NaN}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode("fuzz.json", data)
		if err != nil {
			return
		}
		if r == nil || r.Schema < 1 || r.Schema > SchemaVersion {
			t.Fatalf("accepted results with schema %v", r)
		}
		for _, run := range r.Runs {
			_ = run.Skew()
			if run.Latency != nil && run.Latency.Histogram != nil {
				_ = run.Latency.Summarize()
			}
		}
	})
}

// FuzzHistogram decodes arbitrary histogram strings: an error or a
// histogram within lbbench's geometry.
func FuzzHistogram(f *testing.F) {
	h := NewHistogram()
	h.RecordValue(42)
	h.RecordValue(HistHighest)
	good, _ := h.MarshalJSON()
	f.Add(string(good[1 : len(good)-1]))
	f.Add(encodedHeaderOnly(f, 5, 1, math.MaxInt64))
	f.Add(encodedHeaderOnly(f, 3, 1, HistHighest))
	f.Add("HISTFAAAACx4nJNpmSzMwMDAxQABzFCaEUzKT2D/AgEMNgI2")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		js, _ := json.Marshal(s)
		var h Histogram
		if err := h.UnmarshalJSON(js); err != nil {
			return
		}
		if h.LowestTrackableValue() < HistLowest || h.HighestTrackableValue() > HistHighest || h.SignificantFigures() > HistDigits {
			t.Fatalf("accepted geometry %d..%d at %d digits", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
		}
		_ = h.Summarize()
	})
}
