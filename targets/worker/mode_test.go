package worker

import "testing"

func TestQueryMode(t *testing.T) {
	for _, tc := range []struct{ q, def, want string }{
		{"us=10", ModeSleep, ModeSleep},
		{"us=10&mode=spin&lbc=1", ModeSleep, ModeSpin},
		{"mode=sleep", ModeSpin, ModeSleep},
		{"mode=busy", ModeSleep, ModeSleep},
		{"", ModeSpin, ModeSpin},
	} {
		if got := queryMode(tc.q, tc.def); got != tc.want {
			t.Errorf("queryMode(%q, %q) = %q, want %q", tc.q, tc.def, got, tc.want)
		}
	}
}
