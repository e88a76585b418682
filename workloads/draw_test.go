package workloads

import (
	"net/url"
	"strconv"
	"testing"
	"time"
)

// TestDrawMatchesTarget: Draw yields the class and service time Target
// would have put in the URL, request by request, for every distribution.
func TestDrawMatchesTarget(t *testing.T) {
	spec := Spec{
		Arrival: Arrival{RatePerSec: 100},
		Classes: []Class{
			{Name: "exp", Weight: 5, Service: Service{Dist: Exp, Mean: 2 * time.Millisecond}},
			{Name: "fixed", Weight: 1, Service: Service{Value: 40 * time.Millisecond}},
			{Name: "uniform", Weight: 1, Service: Service{Dist: Uniform, Min: time.Millisecond, Max: 9 * time.Millisecond}},
			{Name: "lognormal", Weight: 1, Service: Service{Dist: LogNormal, Median: 3 * time.Millisecond, Sigma: 1}},
			{Name: "bimodal", Weight: 1, Service: Service{Dist: Bimodal, Low: time.Millisecond, High: 50 * time.Millisecond, PHigh: 0.2}},
			{Name: "pareto", Weight: 1, Service: Service{Dist: Pareto, Alpha: 1.5, Min: time.Millisecond, Max: time.Second}},
		},
		Seed: 42,
	}.WithDefaults()
	byTarget, err := NewTargeter(spec, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	byDraw, err := NewTargeter(spec, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, len(spec.Classes))
	for i := range 5000 {
		var tgt Request
		if err := byTarget.Target(&tgt); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tgt.URL)
		if err != nil {
			t.Fatal(err)
		}
		us, _ := strconv.ParseInt(u.Query().Get("us"), 10, 64)
		class, svc := byDraw.Draw()
		seen[class]++
		if class != ClassOf(tgt.URL) || svc.Microseconds() != us {
			t.Fatalf("request %d: Draw gave class %d, %v; Target %s", i, class, svc, tgt.URL)
		}
	}
	for i, n := range seen {
		if n == 0 {
			t.Errorf("class %s never drawn", spec.Classes[i].Name)
		}
	}
}

func BenchmarkDraw(b *testing.B) {
	tg, err := NewTargeter(mix(), "http://127.0.0.1:9")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tg.Draw()
	}
}
