package driver

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
	"github.com/lbbench/lbbench/topologies"
)

// fill sets every field reachable from v to a non-zero value, growing
// slices to one element and allocating pointers.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint64:
		v.SetUint(uint64(*n))
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// TestCountersCopyEveryField: the results format's counter structs carry
// every field of the targets' own, under the same JSON names, so results
// files written before they were split off still read the same.
func TestCountersCopyEveryField(t *testing.T) {
	var n int
	var ps balancer.Stats
	fill(reflect.ValueOf(&ps).Elem(), &n)
	var es engines.Stats
	fill(reflect.ValueOf(&es).Elem(), &n)
	// The proxy's own CPU time is not a counter: it goes to
	// harness.Stats.CPU (TestDecodeProxyCPU), beside every other process's.
	counted := ps
	counted.CPU = 0
	for _, tc := range []struct {
		name     string
		src, dst any
	}{
		{"proxy", counted, proxyCounters(&ps)},
		{"engine", es, engineCounters(&es)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := json.Marshal(tc.src)
			got, _ := json.Marshal(tc.dst)
			if string(got) != string(want) {
				t.Errorf("converted counters differ from the source:\n got %s\nwant %s", got, want)
			}
		})
	}
	if proxyCounters(nil) != nil || engineCounters(nil) != nil {
		t.Error("nil counters must stay nil")
	}
}

// TestDecodeProxyCPU: the CPU times a proxy and a workers' supervisor
// report become harness.Stats.CPU rows, by role.
func TestDecodeProxyCPU(t *testing.T) {
	var st harness.Stats
	body, _ := json.Marshal(balancer.Stats{Mode: "l7", CPU: 1500 * time.Millisecond})
	if err := DecodeStats(topologies.StatsProxy, body, &st); err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(prefork.StatsReport{Workers: []worker.Stats{{Index: 0, CPU: time.Second}, {Index: 1}}})
	if err := DecodeStats(topologies.StatsWorkers, body, &st); err != nil {
		t.Fatal(err)
	}
	want := []results.ProcessCPU{
		{Role: results.RoleProxy, Name: "lbbench proxy", Worker: -1, Time: 1500 * time.Millisecond},
		{Role: results.RoleWorkers, Name: "worker 0", Worker: 0, Time: time.Second},
	}
	if !reflect.DeepEqual(st.CPU, want) {
		t.Errorf("CPU %+v, want %+v", st.CPU, want)
	}
}

// TestDecodeSteal: the host's steal a workers' supervisor reports, by
// CPU, becomes harness.Stats.Steal; two reports of one CPU keep the later
// (larger) reading, and the CPUs of both are kept.
func TestDecodeSteal(t *testing.T) {
	var st harness.Stats
	for _, rep := range []prefork.StatsReport{
		{Steal: map[int]time.Duration{0: 30 * time.Millisecond, 1: 10 * time.Millisecond}},
		{Steal: map[int]time.Duration{1: 20 * time.Millisecond, 2: 0}},
	} {
		body, _ := json.Marshal(rep)
		if err := DecodeStats(topologies.StatsWorkers, body, &st); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int]time.Duration{0: 30 * time.Millisecond, 1: 20 * time.Millisecond, 2: 0}
	if !reflect.DeepEqual(st.Steal, want) {
		t.Errorf("steal %v, want %v", st.Steal, want)
	}
	body, _ := json.Marshal(prefork.StatsReport{})
	st = harness.Stats{}
	if err := DecodeStats(topologies.StatsWorkers, body, &st); err != nil || st.Steal != nil {
		t.Errorf("a report without steal: %v, %v; want none", st.Steal, err)
	}
}
