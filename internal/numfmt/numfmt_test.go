package numfmt

import (
	"math"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Dur(850 * time.Microsecond), "850µs"},
		{Dur(2130 * time.Microsecond), "2.13ms"},
		{Dur(41200 * time.Microsecond), "41.2ms"},
		{Dur(1200 * time.Millisecond), "1.20s"},
		{Skew(1.0712), "1.07"},
		{Skew(math.Inf(1)), "inf"},
		{Skew(math.NaN()), "-"},
		{Ratio(0.62), "0.620"},
		{Num(3), "3"},
		{Num(0.25), "0.25"},
		{Percent(0.0125), "1.25%"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestPct4: a Holm step's confidence level, or a suite's share of its
// false-alarm rate, reads as a percentage with at most four significant
// digits (99.23%, 0.5556%), not every digit of the fraction
// (99.23076923076923%).
func TestPct4(t *testing.T) {
	for level, want := range map[float64]string{0.95: "95%", 0.975: "97.5%", 1 - 0.05/6.5: "99.23%", 1 - 0.1/12: "99.17%", 0.9: "90%", 0.05 / 9: "0.5556%"} {
		if got := Pct4(level); got != want {
			t.Errorf("Pct4(%v) = %q, want %q", level, got, want)
		}
	}
}
