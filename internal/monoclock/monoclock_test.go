package monoclock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNowIsClockMonotonic: Now agrees with direct reads of
// CLOCK_MONOTONIC to well within a millisecond, and never goes back. Each
// Now is read between two reads of the clock, and must lie between them
// give or take 0.5 ms: a preemption between the reads (other packages'
// tests on the same CPUs) widens the bracket rather than failing the
// test (it once read 1.2 ms apart with a single read before Now).
func TestNowIsClockMonotonic(t *testing.T) {
	if !Valid() {
		t.Fatal("CLOCK_MONOTONIC could not be read")
	}
	read := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return ts.Nano()
	}
	prev := Now()
	for range 1000 {
		before := read()
		now := Now()
		after := read()
		if now < before-500_000 || now > after+500_000 {
			t.Fatalf("Now %d outside CLOCK_MONOTONIC's %d..%d by more than 0.5 ms", now, before, after)
		}
		if now < prev {
			t.Fatalf("Now went back from %d to %d", prev, now)
		}
		prev = now
	}
}

// TestCalibrationIsTight: each of 200 fresh calibrations ties Go's clock
// to CLOCK_MONOTONIC to within 20 µs, checked against a bracket read
// after it (whose own width is allowed for): a calibration read across a
// preemption, off by as long as it waited, would leave the workers'
// stamps outside their requests' spans (loadgen's clockSlop is 100 µs).
func TestCalibrationIsTight(t *testing.T) {
	if !Valid() {
		t.Fatal("CLOCK_MONOTONIC could not be read")
	}
	for range 200 {
		c := calibrate()
		var ts unix.Timespec
		t0 := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		mid := t0.Add(t1.Sub(t0) / 2)
		off := time.Duration(c.mono + int64(mid.Sub(c.t)) - ts.Nano())
		if off.Abs() > t1.Sub(t0)/2+20*time.Microsecond {
			t.Fatalf("calibration off by %v (check's bracket %v)", off, t1.Sub(t0))
		}
	}
}

// TestHost: the clock's name is the boot ID's first 8 hex digits, with a
// time namespace's monotonic offset when there is one; unreadable or
// malformed files give "" (cannot tell), never a name that could match
// another host's.
func TestHost(t *testing.T) {
	if Host() == "" {
		t.Fatal("Host() is empty on Linux")
	}
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	boot := write("boot", "D606DD9E-7346-4819-99f6-35d791363387\n")
	for _, tc := range []struct {
		name, boot, ns, want string
	}{
		{"no time namespaces", boot, filepath.Join(dir, "missing"), "d606dd9e"},
		{"offset zero", boot, write("ns0", "monotonic           0         0\nboottime            0         0\n"), "d606dd9e"},
		{"monotonic offset", boot, write("ns1", "monotonic        3600       500\nboottime            0         0\n"), "d606dd9e@3600000000500"},
		{"numeric clock id", boot, write("ns2", "1 -2 0\n"), "d606dd9e@-2000000000"},
		{"bad offset", boot, write("ns3", "monotonic x 0\n"), ""},
		{"no boot id", filepath.Join(dir, "missing"), filepath.Join(dir, "missing"), ""},
		{"short boot id", write("short", "abc\n"), filepath.Join(dir, "missing"), ""},
		{"not hex", write("nothex", "zzzzzzzz-1\n"), filepath.Join(dir, "missing"), ""},
	} {
		if got := hostID(tc.boot, tc.ns); got != tc.want {
			t.Errorf("%s: hostID = %q, want %q", tc.name, got, tc.want)
		}
	}
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.ReplaceAll(string(b), "-", ""), strings.Split(Host(), "@")[0]) {
		t.Errorf("Host() %q is not of the boot ID %q", Host(), b)
	}
}
