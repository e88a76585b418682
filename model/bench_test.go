package model

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// scaledDefault is the default scenario's workload (70% load, 90% short
// requests of 2ms mean, 10% long of 40ms) offered to `workers` single-task
// workers with 8 client connections per worker, for about `requests`
// requests and no warm-up.
func scaledDefault(tb testing.TB, workers, requests int, variants ...scenario.Variant) scenario.Scenario {
	tb.Helper()
	rate := 0.7 * float64(workers) / 0.0058
	s := scenario.Scenario{
		Name:    "scaled",
		Workers: scenario.Workers{Count: workers},
		Workload: workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Poisson, RatePerSec: workloads.Rate(rate)},
			Duration: time.Duration(float64(requests) / rate * float64(time.Second)),
			Warmup:   -1,
			Classes: []workloads.Class{
				{Name: "short", Weight: 90, Service: workloads.Service{Dist: workloads.Exp, Mean: 2 * time.Millisecond}},
				{Name: "long", Weight: 10, Service: workloads.Service{Value: 40 * time.Millisecond}},
			},
			Clients: workloads.Clients{Connections: 8 * workers},
		},
		Variants: variants,
		Repeat:   1,
	}.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkSimulate1000Workers10M is the scale the testbed cannot run:
// 1,000 single-task workers and 10 million requests (about 120,000
// requests per second for 83 simulated seconds), per variant. Run with
//
//	go test -run '^$' -bench Simulate1000 -benchtime 1x ./model/
func BenchmarkSimulate1000Workers10M(b *testing.B) {
	for _, v := range []scenario.Variant{
		{Name: "reuseport", Topology: scenario.ReusePort},
		proxyVariant("least_conn"),
		proxyVariant("p2c"),
	} {
		b.Run(v.Name, func(b *testing.B) {
			s := scaledDefault(b, 1000, 10_000_000, v)
			b.ReportAllocs()
			for b.Loop() {
				r, _, err := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(r.Requests), "requests")
				b.ReportMetric(float64(r.Summary.P99)/1e6, "p99-ms")
			}
		})
	}
}

// BenchmarkRequest is the cost of one simulated request through least_conn
// on 8 workers, interval histograms left out (encoding them is a cost per
// interval, at most MaxIntervals per run, not per request). Requests,
// connections and events are reused, so a request allocates nothing.
func BenchmarkRequest(b *testing.B) {
	v := proxyVariant("least_conn")
	s := scaledDefault(b, 8, 1_000_000, v)
	var n, mallocs uint64
	var before, after runtime.MemStats
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		e, err := newEngine(s.Workers, v, s.Workload)
		if err != nil {
			b.Fatal(err)
		}
		e.rec.intervals = results.NewIntervalRecorder(0)
		runtime.ReadMemStats(&before)
		b.StartTimer()
		if err := e.run(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		n += e.rec.m.Requests
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/request")
	b.ReportMetric(float64(mallocs)/float64(n), "allocs/request")
}
