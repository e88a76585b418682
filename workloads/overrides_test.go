package workloads

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// overridden is a valid workload for the overrides to adjust.
func overridden() Spec {
	return Spec{
		Arrival:  Arrival{Kind: Poisson, RatePerSec: 200},
		Duration: 5 * time.Second,
		Classes:  []Class{{Name: "a", Weight: 1, Service: Service{Dist: Fixed, Value: time.Millisecond}}},
	}.WithDefaults()
}

func ptr[T any](v T) *T { return &v }

// TestOverridesApply: each override given replaces the spec's value,
// those not given leave theirs, and the result is valid.
func TestOverridesApply(t *testing.T) {
	s := overridden()
	keep := overridden()
	if err := (Overrides{}).Apply(&s); err != nil || !reflect.DeepEqual(s, keep) {
		t.Fatalf("no overrides changed the spec: %v\n%+v", err, s)
	}
	on := false
	o := Overrides{
		Rate: ptr(Rate(960)), Duration: ptr(3 * time.Second), Warmup: ptr(500 * time.Millisecond),
		Timeout: ptr(time.Second), Connections: ptr(8), KeepAlive: &on, MaxInFlight: ptr(100),
	}
	if err := o.Apply(&s); err != nil {
		t.Fatal(err)
	}
	want := keep
	want.Arrival.RatePerSec, want.Duration, want.Warmup, want.Timeout = 960, 3*time.Second, 500*time.Millisecond, time.Second
	want.Clients.Connections, want.Clients.KeepAlive, want.Clients.MaxInFlight = 8, ptr(false), 100
	if !reflect.DeepEqual(s, want) {
		t.Errorf("overridden:\n got  %+v\n want %+v", s, want)
	}
	on = true // the spec keeps the value given, not the caller's variable
	if s.Clients.KeepAliveOn() {
		t.Error("the spec's keep-alive follows the caller's variable")
	}
	if err := s.WithDefaults().Validate(); err != nil {
		t.Errorf("overridden spec invalid: %v", err)
	}

	// --warmup 0 is no warm-up, not the default.
	s = overridden()
	if err := (Overrides{Warmup: ptr(time.Duration(0))}).Apply(&s); err != nil || s.Warmup != NoWarmup || s.WithDefaults().WarmupTime() != 0 {
		t.Errorf("--warmup 0: warm-up %s (%v), want none", s.Warmup, err)
	}
}

// TestOverridesRefuse: each bad value is refused naming its flag, and
// leaves the spec as it was.
func TestOverridesRefuse(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Rate: ptr(Rate(0))}, "--rate: must be > 0 and at most 1e+06 requests per second, got 0"},
		{Overrides{Rate: ptr(Rate(2e6))}, "--rate: must be > 0 and at most 1e+06 requests per second, got 2e+06"},
		{Overrides{Rate: ptr(Rate(math.NaN()))}, "--rate: must be > 0"},
		{Overrides{Rate: ptr(Rate(math.Inf(1)))}, "--rate: must be > 0"},
		{Overrides{Duration: ptr(time.Duration(0))}, "--duration: must be between 100ms and 24h0m0s, got 0s"},
		{Overrides{Duration: ptr(-time.Second)}, "--duration: must be between 100ms and 24h0m0s, got -1s"},
		{Overrides{Duration: ptr(99 * time.Millisecond)}, "--duration: must be between 100ms and 24h0m0s, got 99ms"},
		{Overrides{Duration: ptr(25 * time.Hour)}, "--duration: must be between 100ms and 24h0m0s, got 25h0m0s"},
		{Overrides{Warmup: ptr(-time.Second)}, "--warmup: must be between 0 and 24h0m0s, got -1s"},
		{Overrides{Warmup: ptr(25 * time.Hour)}, "--warmup: must be between 0 and 24h0m0s, got 25h0m0s"},
		{Overrides{Timeout: ptr(time.Duration(0))}, "--timeout must be positive, got 0s"},
		{Overrides{Timeout: ptr(-time.Second)}, "--timeout must be positive, got -1s"},
		{Overrides{Connections: ptr(0)}, "--connections must be at least 1, got 0"},
		{Overrides{Connections: ptr(-3)}, "--connections must be at least 1, got -3"},
		{Overrides{MaxInFlight: ptr(0)}, "--max-in-flight must be at least 1, got 0"},
		// A good value does not hide a bad one.
		{Overrides{Rate: ptr(Rate(10)), Connections: ptr(8), MaxInFlight: ptr(-1)}, "--max-in-flight must be at least 1, got -1"},
		{Overrides{UntilInterrupted: true, Warmup: ptr(-time.Second)}, "--warmup: must be between"},
	} {
		s := overridden()
		err := tc.o.Apply(&s)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
		if !reflect.DeepEqual(s, overridden()) {
			t.Errorf("%+v: refused, but the spec changed: %+v", tc.o, s)
		}
		c := s.Clients
		if err := tc.o.ApplyClients(&c); err == nil || !reflect.DeepEqual(c, s.Clients) {
			t.Errorf("%+v: ApplyClients: %v, clients %+v", tc.o, err, c)
		}
	}
}

// TestOverridesApplyClients: a client model of its own gets the client
// overrides and nothing else.
func TestOverridesApplyClients(t *testing.T) {
	c := Clients{Connections: 2, RequestsPerConn: 1}
	o := Overrides{Rate: ptr(Rate(5)), Duration: ptr(time.Second), Connections: ptr(16), KeepAlive: ptr(false), MaxInFlight: ptr(7)}
	if err := o.ApplyClients(&c); err != nil {
		t.Fatal(err)
	}
	if want := (Clients{Connections: 16, KeepAlive: ptr(false), MaxInFlight: 7, RequestsPerConn: 1}); !reflect.DeepEqual(c, want) {
		t.Errorf("clients %+v, want %+v", c, want)
	}
}

// TestUntilInterrupted: --duration 0 is the longest run the limits allow
// for the workload as overridden: a day less the warm-up, or fewer
// arrivals than MaxArrivals at a high rate. Duration is then not used.
func TestUntilInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Overrides
		want time.Duration
	}{
		{"low rate", Overrides{UntilInterrupted: true, Duration: ptr(time.Second)}, MaxRunTime - DefaultWarmup},
		{"no warm-up", Overrides{UntilInterrupted: true, Warmup: ptr(time.Duration(0))}, MaxRunTime},
		{"high rate", Overrides{UntilInterrupted: true, Rate: ptr(Rate(1e5)), Warmup: ptr(time.Duration(0))}, 990 * time.Second},
	} {
		s := overridden()
		if err := tc.o.Apply(&s); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := s.Duration; d < tc.want-time.Millisecond || d > tc.want {
			t.Errorf("%s: duration %s, want %s", tc.name, d, tc.want)
		}
		if err := s.WithDefaults().Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// FuzzOverridesApply: any values are refused, or give a spec whose
// overridden fields hold them; never a panic, and a spec that validates
// has its numbers within bounds.
func FuzzOverridesApply(f *testing.F) {
	f.Add(200.0, int64(time.Second), int64(0), int64(time.Second), 8, 100, true, false)
	f.Add(math.NaN(), int64(-1), int64(-1), int64(0), 0, 0, false, true)
	f.Add(math.Inf(1), int64(math.MaxInt64), int64(math.MaxInt64), int64(-1), -1, -1, true, true)
	f.Add(1e6, int64(MaxRunTime), int64(MaxRunTime), int64(math.MaxInt64), MaxConnections+1, MaxInFlight+1, false, false)
	f.Add(0.0, int64(MinDuration), int64(0), int64(1), 1, 1, true, true)
	f.Fuzz(func(t *testing.T, rate float64, duration, warmup, timeout int64, conns, inFlight int, keepAlive, forever bool) {
		o := Overrides{
			Rate: ptr(Rate(rate)), Duration: ptr(time.Duration(duration)), Warmup: ptr(time.Duration(warmup)),
			Timeout: ptr(time.Duration(timeout)), Connections: &conns, KeepAlive: &keepAlive, MaxInFlight: &inFlight,
			UntilInterrupted: forever,
		}
		s := overridden()
		if err := o.Apply(&s); err != nil {
			if !reflect.DeepEqual(s, overridden()) {
				t.Fatalf("refused (%v), but the spec changed", err)
			}
			return
		}
		if s.Arrival.RatePerSec != Rate(rate) || s.Timeout != time.Duration(timeout) || s.Clients.Connections != conns ||
			s.Clients.KeepAliveOn() != keepAlive || s.Clients.MaxInFlight != inFlight {
			t.Fatalf("applied %+v, got %+v", o, s)
		}
		if !forever && s.Duration != time.Duration(duration) {
			t.Fatalf("duration %s, want %s", s.Duration, time.Duration(duration))
		}
		if s = s.WithDefaults(); s.Validate() != nil {
			return
		}
		if r := float64(s.Arrival.RatePerSec); !(r > 0) || r > MaxRate || s.Duration < MinDuration || s.WarmupTime()+s.Duration > MaxRunTime {
			t.Fatalf("valid with rate %g, duration %s, warm-up %s", r, s.Duration, s.WarmupTime())
		}
	})
}
