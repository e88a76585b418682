package driver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
	"github.com/lbbench/lbbench/topologies"
)

// statsKinds are the kinds FuzzDecodeStats picks from by index, the last
// one a kind DecodeStats cannot decode.
var statsKinds = []string{topologies.StatsWorkers, topologies.StatsProxy, topologies.StatsNginx, "haproxy-socket"}

// FuzzDecodeStats feeds arbitrary answers of every stats kind to
// DecodeStats: an error leaves st as it was, and what it accepts has only
// positive CPU times, never panics.
func FuzzDecodeStats(f *testing.F) {
	workers, _ := json.Marshal(prefork.StatsReport{
		Workers: []worker.Stats{{Index: 0, CPU: time.Second}, {Index: 1}},
		Status:  []prefork.WorkerStatus{{Index: 0, State: prefork.StateRunning}, {Index: 1, Restarts: 2, LastExit: "signal: killed"}},
		Foreign: 1, Port: 8080,
	})
	proxy, _ := json.Marshal(balancer.Stats{Mode: "l7", CPU: 1500 * time.Millisecond})
	f.Add(uint8(0), workers)
	f.Add(uint8(0), []byte(`{"workers": [{"index": -1, "cpu_ns": -5}], "status": [{"index": 1e400}]}`))
	f.Add(uint8(0), []byte(`{"workers": null, "foreign_listeners": -3}`))
	f.Add(uint8(1), proxy)
	f.Add(uint8(1), []byte(`{"cpu_ns": 9223372036854775807, "backends": [null]}`))
	f.Add(uint8(1), []byte(`{"cpu_ns": NaN}`))
	f.Add(uint8(2), []byte("Active connections: 1 \nserver accepts handled requests\n 2 2 3 \nReading: 0 Writing: 1 Waiting: 0 \n"))
	f.Add(uint8(2), []byte("Active connections: -1"))
	f.Add(uint8(3), []byte("{}"))
	f.Add(uint8(0), []byte("null"))
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := statsKinds[int(k)%len(statsKinds)]
		var st harness.Stats
		if err := DecodeStats(kind, body, &st); err != nil {
			if st.Workers != nil || st.Proxy != nil || st.Engine != nil || st.Dead != nil || st.CPU != nil {
				t.Fatalf("%s: error %v left %+v", kind, err, st)
			}
			return
		}
		for _, c := range st.CPU {
			if c.Time <= 0 {
				t.Fatalf("%s: %q gave CPU row %+v", kind, body, c)
			}
		}
	})
}

// FuzzDecodeEngineReport feeds arbitrary engine-stats answers to
// DecodeEngineReport: an error names the engine and leaves st as it was;
// a report it accepts adds at most one positive CPU row.
func FuzzDecodeEngineReport(f *testing.F) {
	good, _ := json.Marshal(EngineReport{CPU: 1500 * time.Millisecond, HAProxy: []engines.HAProxyRow{
		{Proxy: "proxy", Name: "FRONTEND", Sessions: 7, Requests: 40},
		{Proxy: "workers", Name: "w0", Sessions: 20},
	}})
	f.Add(engines.HAProxy, good)
	f.Add(engines.Nginx, []byte(`{"cpu_ns": 2000000}`))
	f.Add(engines.Nginx, []byte(`{"cpu_ns": -1, "haproxy": []}`))
	f.Add(engines.HAProxy, []byte(`{"cpu_ns": 1e400}`))
	f.Add(engines.HAProxy, []byte(`{"haproxy": [null, {}]}`))
	f.Add("", []byte("not json"))
	f.Fuzz(func(t *testing.T, engine string, body []byte) {
		var st harness.Stats
		if err := DecodeEngineReport(engine, body, &st); err != nil {
			if !strings.HasPrefix(err.Error(), engine+" stats: ") {
				t.Fatalf("error %q does not name the engine %q", err, engine)
			}
			if st.Engine != nil || st.CPU != nil {
				t.Fatalf("error %v left %+v", err, st)
			}
			return
		}
		if len(st.CPU) > 1 || (len(st.CPU) == 1 && st.CPU[0].Time <= 0) {
			t.Fatalf("%q gave CPU rows %+v", body, st.CPU)
		}
	})
}
