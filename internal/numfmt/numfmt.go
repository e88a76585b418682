// Package numfmt formats the figures lbbench prints, the same way in every
// layer that says them: the renderers, the verdicts' and the claims'
// evidence, the progress lines. Latencies get three significant digits,
// ratios three decimals.
package numfmt

import (
	"math"
	"strconv"
	"time"
)

// Dur formats a latency compactly with three significant digits: 850µs,
// 2.13ms, 41.2ms, 1.20s.
func Dur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return Sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return Sig3(d.Seconds()) + "s"
	}
}

// Sig3 formats a positive number below 1000 with three significant
// digits: 1.23, 12.3, 123.
func Sig3(x float64) string {
	switch {
	case x < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
}

// Skew formats a max/min ratio: "1.07", "inf" when a worker got nothing,
// "-" when unknown.
func Skew(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsNaN(x) || x == 0:
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Ratio formats a ratio with three decimals: 0.620.
func Ratio(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// Num formats x with as few digits as say it exactly: 3, 0.25.
func Num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Percent formats a fraction as a percentage with two decimals: 1.25%.
func Percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" }

// Pct4 formats a fraction as a percentage to four significant digits: a
// level or a false-alarm rate, 95%, 99.72%, 0.5556%.
func Pct4(x float64) string { return strconv.FormatFloat(100*x, 'g', 4, 64) + "%" }

// P formats a p-value: three decimals, or one significant digit in
// exponent form below 0.001; "-" for NaN.
func P(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	if p < 0.001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}
