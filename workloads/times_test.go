package workloads

import "testing"

// TestTimesRoundTrip: every form a server may send reads back as written,
// and what cannot be a stamp of one clock is refused.
func TestTimesRoundTrip(t *testing.T) {
	for _, st := range []Times{
		{Received: 10, Began: 20, Done: 30},
		{Received: 10, Began: 20, Done: 30, Accepted: 5},
		{Received: 10, Began: 20, Done: 30, Accepted: 5, Clock: "d606dd9e"},
		{Received: 10, Began: 20, Done: 30, Clock: "d606dd9e@-2000000000"}, // accept unknown: "-"
	} {
		v := FormatTimes(st)
		got, ok := ParseTimes(v)
		if !ok || got != st {
			t.Errorf("%+v written as %q read back as %+v (ok %v)", st, v, got, ok)
		}
	}
	if v := FormatTimes(Times{Received: 10, Began: 20, Done: 30, Clock: "ab"}); v != "10 20 30 - ab" {
		t.Errorf("unknown accept written as %q", v)
	}
	for _, v := range []string{
		"", "1 2", "1 2 3 4 ab extra", "3 2 1", "1 2 3 9", "0 2 3", "1 2 3 x",
		"1 2 3 - XYZ", "1 2 3 - 0123456789abcdef0123456789abcdef0",
	} {
		if st, ok := ParseTimes(v); ok {
			t.Errorf("%q read as %+v, want refused", v, st)
		}
	}
}
