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

// FuzzParseTimes reads arbitrary header values: a value it accepts holds
// positive stamps in order (the accept stamp, when given, before the
// request was received) and a clock name within bounds, and it reads back
// unchanged after FormatTimes.
func FuzzParseTimes(f *testing.F) {
	f.Add("10 20 30")
	f.Add("10 20 30 5 d606dd9e")
	f.Add("10 20 30 - d606dd9e@-2000000000")
	f.Add("1 2 3 -")
	f.Add("+1 +2 +3")
	f.Add("9223372036854775807 9223372036854775807 9223372036854775807")
	f.Add("9223372036854775808 1 2")
	f.Add("NaN Inf -Inf")
	f.Add("1e3 2e3 3e3")
	f.Fuzz(func(t *testing.T, v string) {
		st, ok := ParseTimes(v)
		if !ok {
			if st != (Times{}) {
				t.Fatalf("%q refused but read as %+v", v, st)
			}
			return
		}
		if st.Received <= 0 || st.Began < st.Received || st.Done < st.Began || st.Accepted < 0 || st.Accepted > st.Received {
			t.Fatalf("%q accepted as %+v", v, st)
		}
		if len(st.Clock) > maxClock {
			t.Fatalf("%q accepted with a clock of %d bytes", v, len(st.Clock))
		}
		w := FormatTimes(st)
		if back, ok := ParseTimes(w); !ok || back != st {
			t.Fatalf("%q read as %+v, written as %q, read back as %+v (ok %v)", v, st, w, back, ok)
		}
	})
}
