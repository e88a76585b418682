package workloads

import (
	"math"
	"reflect"
	"testing"
	"time"
)

func TestStreams(t *testing.T) {
	off := false
	base := spec(Poisson, 900, time.Second)
	base.Seed = 7
	base.Clients.KeepAlive = &off
	base.Clients.RequestsPerConn = 5

	t.Run("single", func(t *testing.T) {
		ss := base.Streams()
		if len(ss) != 1 || ss[0].Name != "" || ss[0].Share != 1 || !reflect.DeepEqual(ss[0].Spec, base) {
			t.Fatalf("Streams() = %+v, want the workload itself with share 1", ss)
		}
	})

	t.Run("named", func(t *testing.T) {
		s := base
		s.Clients.Named = []NamedClient{{Name: "a", Share: 1, Connections: 2}, {Name: "b", Share: 2, Connections: 8}}
		s = s.WithDefaults()
		ss := s.Streams()
		if len(ss) != 2 {
			t.Fatalf("%d streams, want 2", len(ss))
		}
		wants := []struct {
			name        string
			share, rate float64
			seed        uint64
			connections int
		}{
			{"a", 1, 300, 7 + 0x9e3779b9, 2},
			{"b", 2, 600, 7 + 2*0x9e3779b9, 8},
		}
		for i, w := range wants {
			st := ss[i]
			if st.Name != w.name || st.Share != w.share || st.Spec.Seed != w.seed || st.Spec.Clients.Connections != w.connections {
				t.Errorf("stream %d = %s share %g seed %#x connections %d, want %s share %g seed %#x connections %d",
					i, st.Name, st.Share, st.Spec.Seed, st.Spec.Clients.Connections, w.name, w.share, w.seed, w.connections)
			}
			if math.Abs(float64(st.Spec.Arrival.RatePerSec)-w.rate) > 1e-9 {
				t.Errorf("stream %d rate %g, want %g", i, st.Spec.Arrival.RatePerSec, w.rate)
			}
			if len(st.Spec.Clients.Named) != 0 || st.Spec.Clients.KeepAliveOn() || st.Spec.Clients.RequestsPerConn != 5 {
				t.Errorf("stream %d clients %+v, want its own connections with the workload's keep-alive and requests per connection", i, st.Spec.Clients)
			}
			// A stream's spec is a workload of one stream: itself.
			if again := st.Spec.Streams(); len(again) != 1 || !reflect.DeepEqual(again[0].Spec, st.Spec) {
				t.Errorf("stream %d: Streams of its spec = %+v, want the spec itself", i, again)
			}
		}
		if s.Arrival.RatePerSec != 900 || len(s.Clients.Named) != 2 {
			t.Errorf("Streams changed the workload: %+v", s)
		}
	})
}
