package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// VariantSummary is one variant's figures across its runs.
type VariantSummary struct {
	Name string
	// Runs counts finished runs; Valid those that count. Invalid runs are
	// left out of the merged figures unless no run is valid.
	Runs, Valid int
	// Requests and Errors are summed over the merged runs.
	Requests, Errors uint64
	// Rate is the mean achieved rate of the merged runs, per second.
	Rate float64
	// Latency summarizes the merged corrected-latency histogram.
	Latency results.Summary
	// Histogram is the merged corrected-latency histogram itself (µs);
	// SendLag the merged send-lag histogram. Callers must not modify them.
	Histogram, SendLag *results.Histogram
	// Merged lists the IDs of the runs merged into the figures, in run order.
	Merged []string
	// SendLagP99 is the merged send lag's 99th percentile.
	SendLagP99 time.Duration
	// RunP99 holds each merged run's p99, in run order.
	RunP99 []time.Duration
	// Skew is the median over merged runs of max/min worker responses.
	Skew float64
	// Workers sums each worker's attributed responses over merged runs.
	Workers []uint64
	// Classes summarizes each request class's merged histogram.
	Classes []ClassSummary
	// Invalid lists why runs were invalid, prefixed with the run ID.
	Invalid []string
	// Saturated lists the merged runs whose target could not keep up,
	// prefixed with the run ID: their percentiles are lower bounds.
	Saturated []string
	// CPUPerRequest is, per role (results.CPURoles, "all" included), the
	// merged runs' CPU time over their requests, warm-up included; nil
	// when no run measured CPU. WorkerCPU sums each worker's CPU time
	// over the merged runs; CPUSkew is the median over runs of the
	// workers' max/min CPU time.
	CPUPerRequest map[string]time.Duration
	WorkerCPU     []time.Duration
	CPUSkew       float64
	// Across holds, for p50, p99 and p99.9, the 95% interval of the merged
	// runs' own values (compare.RunsInterval); zero without two runs.
	Across map[string][2]time.Duration
	// Proxy sums the built-in proxy's counters over merged runs; nil when
	// the variant has no built-in proxy.
	Proxy *ProxyTotals
	// Steps merges each step of a steps arrival over merged runs.
	Steps []StepSummary
	// Clients merges each named client's figures over merged runs, in the
	// workload's order; empty without named clients.
	Clients []ClientSummary
	// Wait summarizes the merged runs' wait (results.Measurement.Wait)
	// and ConnWait their connection wait; nil when no run measured it.
	Wait, ConnWait *results.Summary
	// Waited counts the requests whose wait was measured.
	Waited uint64
}

// ClientSummary is one named client's figures over merged runs.
type ClientSummary struct {
	Name             string
	Share            float64
	Requests, Errors uint64
	Latency          results.Summary
}

// ProxyTotals are a proxy's counters summed over runs.
type ProxyTotals struct {
	Mode, Policy                                              string
	Decisions, ClientConns, UpstreamConns, Retries, NoBackend uint64
	// PoolRequests counts requests (l7) or connections (l4) per named pool.
	PoolRequests map[string]uint64
}

// StepSummary is one step of a steps arrival, over merged runs.
type StepSummary struct {
	RatePerSec float64
	Requests   uint64
	Errors     uint64
	Latency    results.Summary
}

// ClassSummary is one request class's merged figures.
type ClassSummary struct {
	Name     string
	Requests uint64
	Latency  results.Summary
	// Histogram is the class's merged latency histogram (µs).
	Histogram *results.Histogram
	// Wait summarizes the class's merged wait; nil when not measured.
	Wait *results.Summary
}

// Summarize groups r's runs by variant, in scenario order, merging their
// histograms losslessly.
func Summarize(r *results.Results) ([]VariantSummary, error) {
	var out []VariantSummary
	for _, v := range r.Scenario.Variants {
		s, err := summarize(v.Name, r.RunsOf(v.Name))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func summarize(name string, runs []results.Run) (VariantSummary, error) {
	s := VariantSummary{Name: name, Runs: len(runs)}
	merged := runs[:0:0]
	for _, run := range runs {
		if run.Valid {
			merged = append(merged, run)
		} else {
			for _, why := range run.Invalid {
				s.Invalid = append(s.Invalid, run.ID+": "+why)
			}
		}
	}
	s.Valid = len(merged)
	if len(merged) == 0 {
		merged = runs
	}
	m, err := results.MergeRuns(merged)
	if err != nil {
		return s, fmt.Errorf("reports: %w", err)
	}
	var skews []float64
	perRun := map[string][]float64{}
	var cpu cpuTally
	for _, run := range merged {
		cpu.add(&s, &run)
		s.Merged = append(s.Merged, run.ID)
		if run.Saturated != "" {
			s.Saturated = append(s.Saturated, run.ID+": "+run.Saturated)
		}
		for _, name := range acrossMetrics {
			m, _ := results.LookupMetric(name)
			if v, ok := m.Value(&run); ok {
				perRun[name] = append(perRun[name], v)
			}
		}
		s.Proxy = addProxy(s.Proxy, run.Proxy)
		s.Rate += run.AchievedRate / float64(len(merged))
		s.RunP99 = append(s.RunP99, run.Latency.Quantile(0.99))
		skews = append(skews, run.Skew())
		if len(s.Workers) < len(run.Workers) {
			s.Workers = append(s.Workers, make([]uint64, len(run.Workers)-len(s.Workers))...)
		}
		for i, w := range run.Workers {
			s.Workers[i] += w.Responses
		}
	}
	for name, vs := range perRun {
		if ci := compare.RunsInterval(vs); !math.IsNaN(ci.Low) {
			if s.Across == nil {
				s.Across = map[string][2]time.Duration{}
			}
			s.Across[name] = [2]time.Duration{time.Duration(ci.Low), time.Duration(ci.High)}
		}
	}
	cpu.finish(&s)
	s.Requests, s.Errors = m.Requests, m.Errors
	s.Latency = m.Latency.Summarize()
	s.Histogram, s.SendLag = m.Latency, m.SendLag
	s.SendLagP99 = m.SendLag.Quantile(0.99)
	s.Skew = median(skews)
	for _, st := range m.Steps {
		s.Steps = append(s.Steps, StepSummary{RatePerSec: st.RatePerSec, Requests: st.Requests, Errors: st.Errors, Latency: st.Latency.Summarize()})
	}
	for _, c := range m.Clients {
		s.Clients = append(s.Clients, ClientSummary{Name: c.Name, Share: c.Share, Requests: c.Requests, Errors: c.Errors, Latency: c.Latency.Summarize()})
	}
	for _, c := range m.Classes {
		h := c.Latency
		if h == nil {
			h = results.NewHistogram()
		}
		s.Classes = append(s.Classes, ClassSummary{Name: c.Name, Requests: uint64(h.TotalCount()), Latency: h.Summarize(), Histogram: h, Wait: summaryOf(c.Wait)})
	}
	s.Wait, s.ConnWait = summaryOf(m.Wait), summaryOf(m.ConnWait)
	if s.Wait != nil {
		s.Waited = uint64(m.Wait.TotalCount())
	}
	return s, nil
}

// acrossMetrics are the percentiles given an interval across runs.
var acrossMetrics = []string{results.MetricP50, results.MetricP99, results.MetricP999, results.MetricWaitP99, results.MetricWaitP999}

// summaryOf summarizes h; nil for a histogram that holds nothing.
func summaryOf(h *results.Histogram) *results.Summary {
	if h == nil || h.Histogram == nil || h.TotalCount() == 0 {
		return nil
	}
	s := h.Summarize()
	return &s
}

// addProxy adds a run's proxy counters p to the totals t (nil: none yet);
// a run without a proxy leaves t as it is.
func addProxy(t *ProxyTotals, p *results.ProxyStats) *ProxyTotals {
	if p == nil {
		return t
	}
	if t == nil {
		t = &ProxyTotals{Mode: p.Mode, Policy: p.Policy}
	}
	t.Decisions += p.Decisions
	t.ClientConns += p.ClientConns
	t.UpstreamConns += p.UpstreamConns
	t.Retries += p.Retries
	t.NoBackend += p.NoBackend
	for _, pool := range p.Pools {
		if pool.Name == "" {
			continue
		}
		if t.PoolRequests == nil {
			t.PoolRequests = map[string]uint64{}
		}
		t.PoolRequests[pool.Name] += pool.Requests
	}
	return t
}

// median returns the median of xs (NaN for none); +Inf values sort last.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	ys := slices.Clone(xs)
	slices.Sort(ys)
	n := len(ys)
	if n%2 == 1 {
		return ys[n/2]
	}
	return (ys[n/2-1] + ys[n/2]) / 2
}

// engineRow is one run's nginx or HAProxy counters, for the reports.
type engineRow struct {
	Run, Variant, Engine  string
	ClientConns, Requests uint64
	// UpstreamConns, Reused and PerWorker are "-" where the engine does
	// not count them (nginx's stub_status has no upstream figures).
	UpstreamConns, Reused, PerWorker string
}

// engineRows returns the engine counters of r's runs that have them.
func engineRows(r *results.Results) []engineRow {
	var out []engineRow
	for _, run := range r.Runs {
		e := run.Engine
		if e == nil {
			continue
		}
		row := engineRow{Run: run.ID, Variant: run.Variant, Engine: e.Engine, UpstreamConns: "-", Reused: "-", PerWorker: "-"}
		switch {
		case e.Nginx != nil:
			row.ClientConns, row.Requests = e.Nginx.Accepts, e.Nginx.Requests
		case len(e.HAProxy) > 0:
			var per []string
			for _, h := range e.HAProxy {
				switch {
				case h.Proxy == "admin":
				case h.Name == "FRONTEND":
					row.ClientConns += h.Sessions
					row.Requests += h.Requests
				case h.Name == "BACKEND":
					row.UpstreamConns = strconv.FormatUint(h.Connects, 10)
					row.Reused = strconv.FormatUint(h.Reuses, 10)
				default:
					per = append(per, strconv.FormatUint(h.Sessions, 10))
				}
			}
			if len(per) > 0 {
				row.PerWorker = strings.Join(per, " ")
			}
		default:
			continue
		}
		out = append(out, row)
	}
	return out
}

// cpuTally sums the CPU time of a variant's runs that recorded it.
type cpuTally struct {
	byRole   map[string]time.Duration
	requests uint64 // measured and warm-up requests of those runs
	skews    []float64
}

// add counts run's CPU times: per role into t, per worker into s.
func (t *cpuTally) add(s *VariantSummary, run *results.Run) {
	if len(run.CPU) == 0 {
		return
	}
	if t.byRole == nil {
		t.byRole = map[string]time.Duration{}
	}
	t.requests += run.Requests + run.WarmupRequests
	for _, role := range results.CPURoles {
		if c, ok := run.CPUOf(role); ok {
			t.byRole[role] += c
		}
	}
	for _, c := range run.CPU {
		if c.Role == results.RoleWorkers && c.Worker >= 0 {
			for len(s.WorkerCPU) <= c.Worker {
				s.WorkerCPU = append(s.WorkerCPU, 0)
			}
			s.WorkerCPU[c.Worker] += c.Time
		}
	}
	if k := run.CPUSkew(); k != 0 {
		t.skews = append(t.skews, k)
	}
}

// finish sets s's CPU per request of each role and its CPU skew (the
// median run's).
func (t *cpuTally) finish(s *VariantSummary) {
	if t.requests == 0 {
		return
	}
	s.CPUPerRequest = map[string]time.Duration{}
	for role, c := range t.byRole {
		s.CPUPerRequest[role] = c / time.Duration(t.requests)
	}
	s.CPUSkew = median(t.skews)
}
