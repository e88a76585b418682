package workloads

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestRateSpellings: a rate reads the same from a number, vegeta's count
// per duration, YAML and JSON, and bad spellings are refused saying why.
func TestRateSpellings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  string
	}{
		{"960", 960, ""},
		{"0.5", 0.5, ""},
		{"50/1s", 50, ""},
		{"50/s", 50, ""},
		{"1/100ms", 10, ""},
		{"30/m", 0.5, ""},
		{" 7 / 2s ", 3.5, ""},
		{"0", 0, "max-rate"},
		{"infinity", 0, "max-rate"},
		{"-1", 0, "not a rate"},
		{"NaN", 0, "not a rate"},
		{"+Inf/1s", 0, "not a rate"},
		{"5/0s", 0, "positive duration"},
		{"5/fortnight", 0, "positive duration"},
		{"fast", 0, "not a rate"},
	} {
		got, err := ParseRate(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRate(%q) = %g, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || math.Abs(float64(got)-tc.want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %g, %v; want %g", tc.in, got, err, tc.want)
		}
		var y struct{ R Rate }
		if err := yaml.Unmarshal([]byte("r: "+tc.in), &y); err != nil || math.Abs(float64(y.R)-tc.want) > 1e-12 {
			t.Errorf("YAML %q = %g, %v; want %g", tc.in, y.R, err, tc.want)
		}
		var j struct{ R Rate }
		if err := json.Unmarshal([]byte(`{"R":"`+tc.in+`"}`), &j); err != nil || math.Abs(float64(j.R)-tc.want) > 1e-12 {
			t.Errorf("JSON %q = %g, %v; want %g", tc.in, j.R, err, tc.want)
		}
	}
	// A rate written back is the number per second, which reads again.
	b, err := json.Marshal(Arrival{Kind: Constant, RatePerSec: 10})
	if err != nil || !strings.Contains(string(b), `"rate":10`) {
		t.Fatalf("JSON %s, %v", b, err)
	}
	var a Arrival
	if err := json.Unmarshal(b, &a); err != nil || a.RatePerSec != 10 {
		t.Errorf("read back %+v, %v", a, err)
	}
}
