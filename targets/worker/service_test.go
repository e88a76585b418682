package worker

import (
	"strings"
	"testing"
	"time"
)

func TestParseService(t *testing.T) {
	const def = 7 * time.Millisecond
	tests := []struct {
		name    string
		query   string
		want    time.Duration
		wantErr string
	}{
		{name: "empty uses default", query: "", want: def},
		{name: "other params use default", query: "a=1&lbc=3", want: def},
		{name: "microseconds", query: "us=1500", want: 1500 * time.Microsecond},
		{name: "whole milliseconds", query: "ms=2", want: 2 * time.Millisecond},
		{name: "fractional milliseconds", query: "ms=1.25", want: 1250 * time.Microsecond},
		{name: "zero", query: "us=0", want: 0},
		{name: "among other params", query: "x=y&us=40&lbc=1", want: 40 * time.Microsecond},
		{name: "escaped", query: "ms=1%2E5", want: 1500 * time.Microsecond},
		{name: "maximum", query: "ms=30000", want: MaxService},
		{name: "empty value", query: "us=", wantErr: `bad us=""`},
		{name: "not a number", query: "ms=abc", wantErr: `bad ms="abc"`},
		{name: "fractional microseconds", query: "us=1.5", wantErr: `bad us="1.5"`},
		{name: "negative", query: "ms=-1", wantErr: `bad ms="-1"`},
		{name: "NaN", query: "ms=NaN", wantErr: `bad ms="NaN"`},
		{name: "infinite", query: "ms=Inf", wantErr: `bad ms="Inf"`},
		{name: "too long", query: "us=30000001", wantErr: "between 0 and 30s"},
		{name: "overflow", query: "us=99999999999999999999", wantErr: "bad us="},
		{name: "bad escape", query: "ms=%zz", wantErr: `bad ms="%zz"`},
		{name: "both", query: "us=1&ms=1", wantErr: "got us= and ms="},
		{name: "twice", query: "ms=1&ms=2", wantErr: "got ms= and ms="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseService(tt.query, def)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "worker: ") {
					t.Fatalf("parseService(%q) = %v, %v; want error containing %q", tt.query, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseService(%q) = %v, %v; want %v", tt.query, got, err, tt.want)
			}
		})
	}
}

func FuzzParseService(f *testing.F) {
	for _, s := range []string{"", "us=10", "ms=0.5", "ms=1e3", "us=1&ms=2", "lbc=2&us=7", "ms=%31", "ms=NaN", "us=-0", "&&=&"} {
		f.Add(s)
	}
	const def = 3 * time.Millisecond
	f.Fuzz(func(t *testing.T, query string) {
		d, err := parseService(query, def)
		if err != nil {
			return
		}
		if d < 0 || d > MaxService {
			t.Fatalf("parseService(%q) = %v, outside [0, %v]", query, d, MaxService)
		}
		if !strings.Contains(query, "us=") && !strings.Contains(query, "ms=") && d != def {
			t.Fatalf("parseService(%q) = %v without us= or ms=, want default %v", query, d, def)
		}
	})
}
