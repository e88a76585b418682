package driver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/targets/balancer"
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
	for _, tc := range []struct {
		name     string
		src, dst any
	}{
		{"proxy", ps, proxyCounters(&ps)},
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
