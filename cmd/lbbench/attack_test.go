package main

import (
	"math"
	"strings"
	"testing"
)

// TestRateFlag parses what vegeta users type for --rate, and lbbench's
// plain per-second numbers.
func TestRateFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64 // per second; 0: refused
		err  string
	}{
		{"50/1s", 50, ""},
		{"1/100ms", 10, ""},
		{"10/s", 10, ""},
		{"3/m", 0.05, ""},
		{"960", 960, ""},
		{"2.5", 2.5, ""},
		{"0", 0, "max-rate"},
		{"infinity", 0, "max-rate"},
		{"-5", 0, "not a rate"},
		{"5/0s", 0, "positive duration"},
		{"5/-1s", 0, "positive duration"},
		{"5/fortnight", 0, "positive duration"},
		{"abc", 0, "not a rate"},
		{"", 0, "not a rate"},
		{"NaN", 0, "not a rate"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var r rateFlag
			err := r.Set(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Set(%q) = %v (rate %g), want an error saying %q", tc.in, err, r.perSec, tc.err)
				}
				return
			}
			if err != nil || math.Abs(float64(r.perSec)-tc.want) > 1e-9 {
				t.Errorf("Set(%q) = %g, %v; want %g", tc.in, r.perSec, err, tc.want)
			}
		})
	}
}

// FuzzRateFlag: any input is either refused or a positive finite rate.
func FuzzRateFlag(f *testing.F) {
	for _, s := range []string{"50/1s", "1/100ms", "960", "0", "1e308/1ns", "5/µs", "1/1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var r rateFlag
		if err := r.Set(s); err != nil {
			return
		}
		if !(r.perSec > 0) || math.IsInf(float64(r.perSec), 0) {
			t.Errorf("Set(%q) accepted rate %g", s, r.perSec)
		}
	})
}
