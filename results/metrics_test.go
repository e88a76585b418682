package results_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

func value(t *testing.T, r *results.Run, name string) (float64, bool) {
	t.Helper()
	m, ok := results.LookupMetric(name)
	if !ok {
		t.Fatalf("no metric %q", name)
	}
	return m.Value(r)
}

func TestMetricValue(t *testing.T) {
	r := resultstest.Run("a", 1, 50)
	p50, _ := value(t, &r, results.MetricP50)
	p90, _ := value(t, &r, results.MetricP90)
	p99, _ := value(t, &r, results.MetricP99)
	p999, _ := value(t, &r, results.MetricP999)
	if !(p50 < p90 && p90 < p99 && p99 < p999) {
		t.Errorf("percentiles out of order: %g %g %g %g", p50, p90, p99, p999)
	}
	if want := float64(r.Latency.Quantile(0.99)); p99 != want {
		t.Errorf("p99 %g, histogram says %g", p99, want)
	}
	if v, _ := value(t, &r, results.MetricThroughput); v != 950 {
		t.Errorf("throughput %g, want 950 successful per second", v)
	}
	if v, _ := value(t, &r, results.MetricErrorRate); v != 0.05 {
		t.Errorf("error rate %g, want 0.05", v)
	}
	if _, ok := results.LookupMetric("p42"); ok {
		t.Error("an unknown metric was found")
	}
	var empty results.Run
	if _, ok := value(t, &empty, results.MetricP99); ok {
		t.Error("run without a histogram has a p99")
	}
	if _, ok := value(t, &empty, results.MetricSkew); ok {
		t.Error("run without workers has a skew")
	}
	r.Workers = []results.Worker{{Index: 0, Responses: 30}, {Index: 1, Responses: 10}}
	if v, _ := value(t, &r, results.MetricSkew); v != 3 {
		t.Errorf("skew %g, want 3", v)
	}
	w, _ := results.LookupMetric("worker")
	if v, why := w.Read(&r, "", 1); v != 10 || why != "" {
		t.Errorf("worker(1) = %g (%s), want 10", v, why)
	}
	if _, why := w.Read(&r, "", 5); why == "" {
		t.Error("worker(5) of 2 workers has a value")
	}
	ws, _ := results.LookupMetric("workers")
	if got := ws.ReadList(&r); !slices.Equal(got, []float64{30, 10}) {
		t.Errorf("workers = %v", got)
	}
	share, _ := results.LookupMetric(results.MetricWorkerShare)
	if share.Kind != scenario.KindStat || share.Events == nil || !share.PerRequest {
		t.Fatalf("worker_share is not a statistical share of events: %+v", share.MetricDef)
	}
	if v, why := share.Read(&r, "1", 1); v != 10/float64(r.Requests) || why != "" {
		t.Errorf("worker_share(1) = %g (%s), want 10 of %d requests", v, why, r.Requests)
	}
	for _, arg := range []string{"5", "-1", "x"} {
		if _, why := share.Read(&r, arg, 0); why == "" {
			t.Errorf("worker_share(%s) of 2 workers has a value", arg)
		}
	}
}

// TestMetricDefs: the registry is one table, and what the scenario
// language knows of it (the catalog) is that table's own definitions:
// every metric but the model's is read from a run, and every kind and
// argument is one the scenario language knows.
func TestMetricDefs(t *testing.T) {
	defs := results.MetricDefs()
	if len(defs) != len(results.Metrics) {
		t.Fatalf("%d definitions for %d metrics", len(defs), len(results.Metrics))
	}
	seen := map[string]bool{}
	for i, m := range results.Metrics {
		if !reflect.DeepEqual(defs[i], m.MetricDef) || seen[m.Name] {
			t.Errorf("metric %d (%s): definition %+v, repeated %v", i, m.Name, defs[i], seen[m.Name])
		}
		seen[m.Name] = true
		switch m.Kind {
		case scenario.KindStat, scenario.KindExact:
			if (m.Read == nil) == (m.ReadList == nil) {
				t.Errorf("%s: needs exactly one of Read and ReadList", m.Name)
			}
		case scenario.KindModel:
		default:
			t.Errorf("%s: kind %q", m.Name, m.Kind)
		}
		if m.Arg != "" && m.Arg != scenario.ArgIndex && m.Arg != scenario.ArgName && m.Arg != scenario.ArgDuration {
			t.Errorf("%s: argument %q", m.Name, m.Arg)
		}
		if m.Help == "" || m.Unit == "" {
			t.Errorf("%s: no help or unit", m.Name)
		}
	}
	if got := results.VerdictMetrics(); !slices.Equal(got, []string{"p50", "p99", "p99.9", "error_rate"}) {
		t.Errorf("verdict metrics %v", got)
	}
	if got := results.ComparisonMetrics(); !slices.Equal(got, []string{"p50", "p99", "p99.9", "error_rate", "throughput",
		"cpu_per_request(workers)", "cpu_per_request(proxy)", "cpu_per_request(generator)", "cpu_per_request(all)",
		"cpu_relative(workers)", "cpu_relative(proxy)"}) {
		t.Errorf("comparison metrics %v", got)
	}
	for _, name := range results.ComparisonMetrics() {
		if m, ok := results.ComparisonMetric(name); !ok || m.Name != name || m.Read == nil {
			t.Errorf("%s: not a comparison metric (%v) or misnamed (%s)", name, ok, m.Name)
		}
	}
	for _, name := range []string{"cpu_per_request", "cpu_per_request(nobody)", "cpu_per_request(proxy", "p90", "slow(20ms)", "",
		"cpu_relative(generator)", "cpu_relative(all)", "cpu_relative"} {
		if _, ok := results.ComparisonMetric(name); ok {
			t.Errorf("%q taken as a comparison metric", name)
		}
	}
	cpr, _ := results.ComparisonMetric("cpu_per_request(proxy)")
	run := results.Run{ID: "r", CPU: []results.ProcessCPU{{Role: results.RoleProxy, Worker: -1, Time: 3 * time.Millisecond}, {Role: results.RoleWorkers, Time: time.Second}}}
	run.Requests, run.WarmupRequests = 900, 100
	if v, ok := cpr.Value(&run); !ok || v != 3000 {
		t.Errorf("cpu_per_request(proxy) of 3 ms over 1000 requests: %g %v, want 3000 ns", v, ok)
	}
	// cpu_relative: the role's CPU time over the generator's; none
	// without a generator's.
	rel, _ := results.ComparisonMetric("cpu_relative(proxy)")
	if _, ok := rel.Value(&run); ok {
		t.Errorf("cpu_relative(proxy) of a run without the generator's CPU time: a value")
	}
	run.CPU = append(run.CPU, results.ProcessCPU{Role: results.RoleGenerator, Worker: -1, Time: 6 * time.Millisecond})
	if v, ok := rel.Value(&run); !ok || v != 0.5 || rel.BenchUnit != "proxy-cpu/generator-cpu" || !rel.HigherIsWorse {
		t.Errorf("cpu_relative(proxy) of 3 ms beside the generator's 6 ms: %g %v (%s), want 0.5", v, ok, rel.BenchUnit)
	}
	er, _ := results.LookupMetric(results.MetricErrorRate)
	p99, _ := results.LookupMetric(results.MetricP99)
	if er.FormatTolerance(0.01) != "1 pt" || p99.FormatTolerance(0.1) != "10%" || er.Format(0.0125) != "1.25%" || p99.Format(41.2e6) != "41.2ms" {
		t.Errorf("formats: %s %s %s %s", er.FormatTolerance(0.01), p99.FormatTolerance(0.1), er.Format(0.0125), p99.Format(41.2e6))
	}
}

// TestMergeRuns: runs made one after another merge into one measurement:
// counts and histograms add up per class, client and step, and a step's
// rate stays the rate (each run offered all of it), unlike Merge of
// concurrent generators, which adds rates.
func TestMergeRuns(t *testing.T) {
	run := func(id string, scale float64) results.Run {
		r := resultstest.Run(id, scale, 10)
		r.SendLag = results.NewHistogram()
		r.SendLag.RecordValue(50)
		r.Classes = []results.Class{{Name: "short", Requests: 900, Latency: r.Latency}, {Name: "long", Requests: 100}}
		r.Clients = []results.Client{{Name: "web", Requests: 1000, Errors: 10, Latency: r.Latency}}
		r.Steps = []results.Step{{RatePerSec: 500, Requests: 1000, Latency: r.Latency}}
		return r
	}
	m, err := results.MergeRuns([]results.Run{run("a", 1), run("b", 2)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 2000 || m.Errors != 20 || m.Latency.TotalCount() != 2000 || m.SendLag.TotalCount() != 2 {
		t.Errorf("requests %d errors %d latency %d lag %d", m.Requests, m.Errors, m.Latency.TotalCount(), m.SendLag.TotalCount())
	}
	if len(m.Classes) != 2 || m.Classes[0].Requests != 1800 || m.Classes[0].Latency.TotalCount() != 2000 || m.Classes[1].Requests != 200 {
		t.Errorf("classes %+v", m.Classes)
	}
	if len(m.Clients) != 1 || m.Clients[0].Requests != 2000 || m.Clients[0].Errors != 20 {
		t.Errorf("clients %+v", m.Clients)
	}
	if len(m.Steps) != 1 || m.Steps[0].RatePerSec != 500 || m.Steps[0].Requests != 2000 {
		t.Errorf("steps %+v: the rate of runs one after another is not their sum", m.Steps)
	}
	var g results.Measurement
	a, b := run("a", 1), run("b", 1)
	if err := g.Merge(&a.Measurement); err != nil {
		t.Fatal(err)
	}
	if err := g.Merge(&b.Measurement); err != nil {
		t.Fatal(err)
	}
	if g.Steps[0].RatePerSec != 1000 {
		t.Errorf("concurrent generators' step rate %g, want the sum 1000", g.Steps[0].RatePerSec)
	}
	odd := run("c", 1)
	odd.Classes = odd.Classes[:1]
	if _, err := results.MergeRuns([]results.Run{run("a", 1), odd}); err == nil {
		t.Error("runs with different classes merged")
	}
}
