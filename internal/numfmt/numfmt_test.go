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
