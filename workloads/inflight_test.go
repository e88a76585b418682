package workloads

import (
	"math"
	"testing"
	"time"
)

func TestInFlightCap(t *testing.T) {
	base := func(a Arrival, timeout time.Duration, conns, maxInFlight int) Spec {
		return Spec{Arrival: a, Duration: time.Second, Timeout: timeout,
			Classes: []Class{{Name: "a", Weight: 1}},
			Clients: Clients{Connections: conns, MaxInFlight: maxInFlight}}.WithDefaults()
	}
	for name, tc := range map[string]struct {
		s    Spec
		want int
	}{
		"rate x timeout below the queue bound": {base(Arrival{Kind: Constant, RatePerSec: 50}, 2*time.Second, 8, 0), 100},
		"queue bound":                          {base(Arrival{Kind: Poisson, RatePerSec: 960}, 10*time.Second, 64, 0), 64 + DefaultMaxQueued},
		"never below the connections":          {base(Arrival{Kind: Constant, RatePerSec: 1}, time.Second, 64, 0), 64},
		"a burst fits":                         {base(Arrival{Kind: Burst, Size: 3000, Every: time.Second}, 10*time.Second, 64, 0), 3000},
		"ramp peak":                            {base(Arrival{Kind: Ramp, From: 10, To: 100}, time.Second, 4, 0), 100},
		"steps peak":                           {base(Arrival{Kind: Steps, Steps: []Step{{RatePerSec: 30, Duration: time.Second}, {RatePerSec: 70, Duration: time.Second}}}, time.Second, 4, 0), 70},
		"set":                                  {base(Arrival{Kind: Constant, RatePerSec: 1000}, 10*time.Second, 64, 200), 200},
		"NaN rate":                             {base(Arrival{Kind: Constant, RatePerSec: Rate(math.NaN())}, 10*time.Second, 64, 0), 64 + DefaultMaxQueued},
		"infinite rate":                        {base(Arrival{Kind: Constant, RatePerSec: Rate(math.Inf(1))}, 10*time.Second, 64, 0), 64 + DefaultMaxQueued},
		"huge burst capped":                    {base(Arrival{Kind: Burst, Size: 1 << 20, Every: time.Second}, 10*time.Second, 64, 0), MaxInFlight},
	} {
		if got := tc.s.InFlightCap(); got != tc.want {
			t.Errorf("%s: InFlightCap() = %d, want %d", name, got, tc.want)
		}
	}
	s := base(Arrival{Kind: Constant, RatePerSec: 10}, time.Second, 1, MaxInFlight+1)
	if err := s.Validate(); err == nil {
		t.Errorf("clients.max_in_flight %d accepted, want an error naming the limit", MaxInFlight+1)
	}
}
