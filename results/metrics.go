package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/scenario"
)

// Metric is one figure lbbench reads from a run, defined once: its name
// (as claims, tolerances and verdicts spell it), its kind, unit and
// direction, and how it is read. Scenario validation (through
// MetricDefs), compare, claims and the renderers all use this table.
type Metric struct {
	scenario.MetricDef
	// Unit is the unit of Read's value: "ns", "req/s", "fraction",
	// "ratio" (max/min) or "count".
	Unit string
	// HigherIsWorse: latency and error rate; throughput is the other way.
	HigherIsWorse bool
	// Absolute compares two sides by the difference of their values
	// (error rate, often 0) rather than their ratio; its tolerance is
	// absolute too.
	Absolute bool
	// Verdict says the metric is compared by default (lbbench compare).
	Verdict bool
	// Comparable says a comparison may be asked for it (--metric) though
	// it is not compared by default: throughput, which an open-loop
	// schedule fixes (so only closed-loop or saturation runs can move
	// it), and CPU per request of a role (ComparisonMetric).
	Comparable bool
	// BenchUnit is its unit in Go benchmark lines; empty leaves it out of
	// them.
	BenchUnit string
	// Read returns run r's value for the term's second argument (arg as
	// written, index as an integer), or why there is none. Nil for
	// workers, which is a list (ReadList).
	Read func(r *Run, arg string, index int) (float64, string)
	// ReadList returns a list metric's values (workers).
	ReadList func(r *Run) []float64
	// Events, when set, counts the events the metric is about in run r
	// (for slow and slow_share, the slow responses), or says why there is
	// no count: the value is that count, or with PerRequest its share of
	// the run's requests. A comparison can then tell a run with none (a
	// measurement) from a missing value, and when there are too few to
	// compare.
	Events     func(r *Run, arg string) (uint64, string)
	PerRequest bool
}

// ValueForRatio is run r's value of the metric as a ratio between two runs
// uses it: Read's, except for a count of events (Events), which gains half
// an event (the Haldane-Anscombe correction; a share, half an event out of
// one more request), so that the ratio of a round with none on one side
// is finite and a round with none on both is 1.
func (m Metric) ValueForRatio(r *Run, arg string, index int) (float64, string) {
	if m.Events == nil {
		return m.Read(r, arg, index)
	}
	return m.eventValue(r, arg, 0.5)
}

// eventValue is run r's count of events plus half, or its share of the
// run's requests plus 2*half.
func (m Metric) eventValue(r *Run, arg string, half float64) (float64, string) {
	n, why := m.Events(r, arg)
	if why != "" {
		return 0, why
	}
	v := float64(n) + half
	if m.PerRequest {
		v /= float64(r.Requests) + 2*half
	}
	return v, ""
}

// eventCount is a metric counting events (count), their number in each run
// or, perRequest, their share of its requests.
func eventCount(def scenario.MetricDef, perRequest bool, count func(r *Run, arg string) (uint64, string)) Metric {
	m := Metric{MetricDef: def, Unit: "count", HigherIsWorse: true, Events: count, PerRequest: perRequest}
	if perRequest {
		m.Unit = "fraction"
	}
	m.Read = func(r *Run, arg string, _ int) (float64, string) { return m.eventValue(r, arg, 0) }
	return m
}

// Metric names lbbench's own code refers to.
const (
	MetricP50        = "p50"
	MetricP90        = "p90"
	MetricP99        = "p99"
	MetricP999       = "p99.9"
	MetricThroughput = "throughput"
	MetricErrorRate  = "error_rate"
	MetricSkew       = "skew"
	// MetricCPUPerRequest, MetricCPU and MetricCPUSkew read Run.CPU.
	MetricCPUPerRequest = "cpu_per_request"
	MetricCPU           = "cpu"
	MetricCPUSkew       = "cpu_skew"
	// MetricCPURelative reads Run.CPU too: a role's CPU time over the
	// generator's in the same run.
	MetricCPURelative = "cpu_relative"
	// MetricWaitP99 and MetricWaitP999 read Run.Wait.
	MetricWaitP50  = "wait_p50"
	MetricWaitP99  = "wait_p99"
	MetricWaitP999 = "wait_p99.9"
	// MetricSlow and MetricSlowShare count responses above a duration.
	MetricSlow      = "slow"
	MetricSlowShare = "slow_share"
	// MetricWorkerShare is the share of a run's requests one worker
	// answered: the statistical form of worker(v, INDEX), for a workload
	// whose split varies from run to run.
	MetricWorkerShare = "worker_share"
)

// CPURoles are the roles CPU metrics take: a ProcessCPU role, or "all".
var CPURoles = []string{RoleWorkers, RoleProxy, RoleGenerator, "all"}

// RelativeRoles are the roles cpu_relative takes: the server's, measured
// against the generator.
var RelativeRoles = []string{RoleWorkers, RoleProxy}

// Metrics is every metric, in report order.
var Metrics = []Metric{
	quantile(MetricP50, 0.50, "p50-ns", "median corrected latency of each run", true),
	quantile(MetricP90, 0.90, "", "90th percentile latency of each run", false),
	quantile(MetricP99, 0.99, "p99-ns", "99th percentile latency of each run", true),
	quantile(MetricP999, 0.999, "p99.9-ns", "99.9th percentile latency of each run", true),
	// Throughput is the seeded schedule's rate less errors: identical in
	// every valid open-loop run, so not written for benchstat and not
	// compared unless asked for (measurement.md: nothing is decided by
	// construction).
	{MetricDef: stat(MetricThroughput, "successful requests per second of each run"), Unit: "req/s", Comparable: true,
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Duration <= 0 || r.Errors > r.Requests {
				return 0, "no measured window in run " + r.ID
			}
			return float64(r.Requests-r.Errors) / r.Duration.Seconds(), ""
		}},
	{MetricDef: stat(MetricErrorRate, "failed requests over requests of each run"), Unit: "fraction", HigherIsWorse: true, Absolute: true, Verdict: true, BenchUnit: "error-ratio",
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Requests == 0 {
				return 0, "no measured request in run " + r.ID
			}
			return float64(r.Errors) / float64(r.Requests), ""
		}},
	{MetricDef: stat(MetricSkew, "max/min of responses per worker of each run"), Unit: "ratio", HigherIsWorse: true,
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if len(r.Workers) == 0 {
				return 0, "no per-worker counts in run " + r.ID
			}
			return r.Skew(), ""
		}},
	waitQuantile(MetricWaitP50, 0.50, "median wait of each run: when a worker began a request minus its intended send time"),
	waitQuantile(MetricWaitP99, 0.99, "99th percentile wait of each run (see wait_p50)"),
	waitQuantile(MetricWaitP999, 0.999, "99.9th percentile wait of each run (see wait_p50)"),
	eventCount(scenario.MetricDef{Name: MetricSlow, Kind: scenario.KindStat, Arg: scenario.ArgDuration,
		Help: "responses slower than DURATION (corrected latency) in each run, failures included: slow(variant, 20ms)"},
		false, slowCount),
	eventCount(scenario.MetricDef{Name: MetricSlowShare, Kind: scenario.KindStat, Arg: scenario.ArgDuration,
		Help: "the share of responses slower than DURATION in each run: slow_share(variant, 20ms)"},
		true, slowCount),
	eventCount(scenario.MetricDef{Name: MetricWorkerShare, Kind: scenario.KindStat, Arg: scenario.ArgIndex,
		Help: "the share of each run's requests that worker INDEX answered: worker_share(variant, 0); worker(variant, INDEX) is the same count judged on every run"},
		true, workerCount),
	{MetricDef: scenario.MetricDef{Name: MetricCPUPerRequest, Kind: scenario.KindStat, Arg: scenario.ArgName, Choices: CPURoles,
		Help: "CPU time per request of role NAME (workers, proxy, generator, or all) over each run's load, warm-up included"},
		Unit: "ns", HigherIsWorse: true,
		Read: func(r *Run, role string, _ int) (float64, string) { return r.CPUPerRequest(role) }},
	// cpu_relative is cpu_per_request measured against the machine's
	// speed during the run: every process's CPU time for the same work
	// swells and shrinks together from run to run on a shared 2-CPU host
	// (the hypervisor's other guests, frequency): over ten A/A gates the
	// per-round log sd of cpu_per_request(proxy) was 0.088 (median over
	// the gates) and that of the proxy's over the generator's 0.031
	// (docs/verdicts.md). The generator does the same work on both sides of a
	// comparison of builds (one harness, one schedule), so its CPU time is
	// the run's own yardstick.
	{MetricDef: scenario.MetricDef{Name: MetricCPURelative, Kind: scenario.KindStat, Arg: scenario.ArgName, Choices: RelativeRoles,
		Help: "CPU time of role NAME (workers or proxy) over the generator's in each run: CPU per request against the machine's speed during the run, for comparing builds of one topology (the generator's work is the same on both sides)"},
		Unit: "ratio", HigherIsWorse: true,
		Read: func(r *Run, role string, _ int) (float64, string) {
			cpu, why := roleCPU(r, role)
			if why != "" {
				return 0, why
			}
			gen, why := roleCPU(r, RoleGenerator)
			if why != "" || gen <= 0 {
				return 0, "no CPU time of the generator in run " + r.ID
			}
			return float64(cpu) / float64(gen), ""
		}},
	{MetricDef: scenario.MetricDef{Name: MetricCPU, Kind: scenario.KindStat, Arg: scenario.ArgName, Choices: CPURoles,
		Help: "CPU time of role NAME over each run's load, warm-up included"},
		Unit: "ns", HigherIsWorse: true,
		Read: func(r *Run, role string, _ int) (float64, string) {
			cpu, why := roleCPU(r, role)
			return float64(cpu), why
		}},
	{MetricDef: stat(MetricCPUSkew, "max/min of the workers' CPU time of each run"), Unit: "ratio", HigherIsWorse: true,
		Read: func(r *Run, _ string, _ int) (float64, string) {
			s := r.CPUSkew()
			if s == 0 {
				return 0, "no per-worker CPU time in run " + r.ID
			}
			return s, ""
		}},
	count("requests", "measured requests of each run", func(r *Run) float64 { return float64(r.Requests) }),
	count("errors", "failed requests of each run", func(r *Run) float64 { return float64(r.Errors) }),
	count("responses", "responses that named a worker (X-Worker) in each run", func(r *Run) float64 {
		var v uint64
		for _, n := range r.ByWorker {
			v += n
		}
		return float64(v)
	}),
	proxyCount("decisions", "the proxy's decisions in each run", func(p *ProxyStats) uint64 { return p.Decisions }),
	proxyCount("client_conns", "client connections the proxy accepted in each run", func(p *ProxyStats) uint64 { return p.ClientConns }),
	proxyCount("upstream_conns", "upstream connections the proxy opened in each run", func(p *ProxyStats) uint64 { return p.UpstreamConns }),
	{MetricDef: exact("worker", scenario.ArgIndex, "responses of worker INDEX in each run"), Unit: "count",
		Read: func(r *Run, _ string, i int) (float64, string) {
			if i < 0 || i >= len(r.Workers) {
				return 0, fmt.Sprintf("run %s has no worker %d", r.ID, i)
			}
			return float64(r.Workers[i].Responses), ""
		}},
	{MetricDef: exact("workers", "", "responses of every worker in each run, as a list"), Unit: "count",
		ReadList: func(r *Run) []float64 {
			out := make([]float64, len(r.Workers))
			for i, w := range r.Workers {
				out[i] = float64(w.Responses)
			}
			return out
		}},
	{MetricDef: exact("class", scenario.ArgName, "requests of class NAME in each run"), Unit: "count",
		Read: func(r *Run, name string, _ int) (float64, string) {
			i := slices.IndexFunc(r.Classes, func(c Class) bool { return c.Name == name })
			if i < 0 {
				return 0, fmt.Sprintf("run %s has no class %s", r.ID, name)
			}
			return float64(r.Classes[i].Requests), ""
		}},
	{MetricDef: exact("client", scenario.ArgName, "requests of named client NAME in each run"), Unit: "count",
		Read: func(r *Run, name string, _ int) (float64, string) {
			i := slices.IndexFunc(r.Clients, func(c Client) bool { return c.Name == name })
			if i < 0 {
				return 0, fmt.Sprintf("run %s has no client %s", r.ID, name)
			}
			return float64(r.Clients[i].Requests), ""
		}},
	{MetricDef: exact("pool", scenario.ArgName, "requests the proxy sent to pool NAME in each run"), Unit: "count",
		Read: func(r *Run, name string, _ int) (float64, string) {
			if r.Proxy == nil {
				return 0, "no proxy counters in run " + r.ID
			}
			i := slices.IndexFunc(r.Proxy.Pools, func(p PoolStats) bool { return p.Name == name })
			if i < 0 {
				return 0, fmt.Sprintf("run %s has no pool %s", r.ID, name)
			}
			return float64(r.Proxy.Pools[i].Requests), ""
		}},
	{MetricDef: exact("maxload", "", "largest load of any burst that arrived together in each run (burst workloads)"), Unit: "count",
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Bursts == nil {
				return 0, "no bursts in run " + r.ID
			}
			maxes, _, _ := r.Bursts.MaxLoads()
			if len(maxes) == 0 {
				return 0, "no fully answered burst that arrived together in run " + r.ID
			}
			return float64(slices.Max(maxes)), ""
		}},
	{MetricDef: scenario.MetricDef{Name: "pmax", Kind: scenario.KindModel, Arg: scenario.ArgIndex,
		Help: "fraction of bursts whose largest load is >= INDEX (burst workloads), run by run, against `model balls`: pmax(v, K) ~ model within 0.03"}, Unit: "fraction"},
}

func stat(name, help string) scenario.MetricDef {
	return scenario.MetricDef{Name: name, Kind: scenario.KindStat, Help: help}
}

func exact(name, arg, help string) scenario.MetricDef {
	return scenario.MetricDef{Name: name, Kind: scenario.KindExact, Arg: arg, Help: help}
}

// quantile is a latency percentile of the run's corrected latency.
func quantile(name string, q float64, benchUnit, help string, verdict bool) Metric {
	return Metric{MetricDef: stat(name, help), Unit: "ns", HigherIsWorse: true, Verdict: verdict, BenchUnit: benchUnit,
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Latency == nil || r.Latency.Histogram == nil || r.Latency.TotalCount() == 0 {
				return 0, "no latency recorded in run " + r.ID
			}
			return float64(r.Latency.Quantile(q)), ""
		}}
}

// waitQuantile is a percentile of the run's wait (Measurement.Wait).
func waitQuantile(name string, q float64, help string) Metric {
	return Metric{MetricDef: stat(name, help), Unit: "ns", HigherIsWorse: true,
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Wait == nil || r.Wait.Histogram == nil || r.Wait.TotalCount() == 0 {
				return 0, "wait not measured in run " + r.ID + " (its workers do not stamp their answers)"
			}
			return float64(r.Wait.Quantile(q)), ""
		}}
}

// slowCount is how many of run r's responses took longer than the
// duration arg.
func slowCount(r *Run, arg string) (uint64, string) {
	d, err := time.ParseDuration(arg)
	if err != nil || d <= 0 {
		return 0, fmt.Sprintf("%q is not a positive duration", arg)
	}
	if r.Latency == nil || r.Latency.Histogram == nil || r.Requests == 0 {
		return 0, "no latency recorded in run " + r.ID
	}
	return r.Latency.CountAbove(d), ""
}

// workerCount is the responses of worker arg (its index) in run r.
func workerCount(r *Run, arg string) (uint64, string) {
	i, err := strconv.Atoi(arg)
	if err != nil || i < 0 {
		return 0, fmt.Sprintf("%q is not a worker's index", arg)
	}
	if i >= len(r.Workers) {
		return 0, fmt.Sprintf("run %s has no worker %d", r.ID, i)
	}
	if r.Requests == 0 {
		return 0, "no measured request in run " + r.ID
	}
	return r.Workers[i].Responses, ""
}

func count(name, help string, f func(r *Run) float64) Metric {
	return Metric{MetricDef: exact(name, "", help), Unit: "count",
		Read: func(r *Run, _ string, _ int) (float64, string) { return f(r), "" }}
}

func proxyCount(name, help string, f func(p *ProxyStats) uint64) Metric {
	return Metric{MetricDef: exact(name, "", help), Unit: "count",
		Read: func(r *Run, _ string, _ int) (float64, string) {
			if r.Proxy == nil {
				return 0, "no proxy counters in run " + r.ID
			}
			return float64(f(r.Proxy)), ""
		}}
}

// LookupMetric returns the metric called name.
func LookupMetric(name string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// MetricDefs returns what the scenario language knows of every metric,
// for scenario.Catalog.Metrics.
func MetricDefs() []scenario.MetricDef {
	out := make([]scenario.MetricDef, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.MetricDef
	}
	return out
}

// VerdictMetrics returns the names of the metrics compared by default, in
// report order.
func VerdictMetrics() []string {
	var out []string
	for _, m := range Metrics {
		if m.Verdict {
			out = append(out, m.Name)
		}
	}
	return out
}

// CPUPerRequest is the CPU time in nanoseconds the run's processes of
// role ("all" for every one) spent per request sent, warm-up included
// (cpu_per_request(ROLE)); why says why there is none.
func (r *Run) CPUPerRequest(role string) (ns float64, why string) {
	cpu, why := roleCPU(r, role)
	if why != "" {
		return 0, why
	}
	n := r.Requests + r.WarmupRequests
	if n == 0 {
		return 0, "no request in run " + r.ID
	}
	return float64(cpu) / float64(n), ""
}

// roleCPU is the CPU time of run r's processes of role (Run.CPUOf), or
// why there is none: what the CPU metrics read.
func roleCPU(r *Run, role string) (time.Duration, string) {
	cpu, ok := r.CPUOf(role)
	if !ok {
		return 0, fmt.Sprintf("no CPU time of %s in run %s", role, r.ID)
	}
	return cpu, ""
}

// ComparisonMetric returns the metric a comparison (compare, verdicts,
// tolerances) calls name: a metric compared by default (VerdictMetrics),
// one that may be asked for (throughput), or one of a role: CPU time per
// request, written cpu_per_request(ROLE) with ROLE one of CPURoles, or
// relative to the generator's, cpu_relative(ROLE) with ROLE one of
// RelativeRoles; its Name is that whole term and its Read is bound to the
// role.
func ComparisonMetric(name string) (Metric, bool) {
	if m, ok := LookupMetric(name); ok {
		return m, m.Verdict || m.Comparable
	}
	for _, of := range []struct {
		metric, unit string
		roles        []string
	}{{MetricCPUPerRequest, "-cpu-ns/req", CPURoles}, {MetricCPURelative, "-cpu/generator-cpu", RelativeRoles}} {
		role, ok := strings.CutPrefix(name, of.metric+"(")
		if role, ok = strings.CutSuffix(role, ")"); !ok || !slices.Contains(of.roles, role) {
			continue
		}
		m, _ := LookupMetric(of.metric)
		read := m.Read
		m.Name = name
		m.Arg = ""
		m.BenchUnit = role + of.unit
		m.Read = func(r *Run, _ string, i int) (float64, string) { return read(r, role, i) }
		return m, true
	}
	return Metric{}, false
}

// ComparisonMetrics lists the names ComparisonMetric knows: the default
// ones first, for help and errors.
func ComparisonMetrics() []string {
	out := VerdictMetrics()
	for _, m := range Metrics {
		if m.Comparable {
			out = append(out, m.Name)
		}
	}
	for _, role := range CPURoles {
		out = append(out, MetricCPUPerRequest+"("+role+")")
	}
	for _, role := range RelativeRoles {
		out = append(out, MetricCPURelative+"("+role+")")
	}
	return out
}

// Value returns run r's value of a metric that takes no argument; ok is
// false when the run lacks the data (or the metric is a list or the
// model's).
func (m Metric) Value(r *Run) (v float64, ok bool) {
	if m.Read == nil {
		return 0, false
	}
	v, why := m.Read(r, "", 0)
	return v, why == ""
}

// Format says a value of m in its unit: 41.2ms, 1523.4 req/s, 1.25%,
// 1.07, 3.
func (m Metric) Format(v float64) string {
	switch m.Unit {
	case "ns":
		return numfmt.Dur(time.Duration(v))
	case "req/s":
		return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
	case "fraction":
		return numfmt.Percent(v)
	case "ratio":
		return numfmt.Skew(v)
	}
	return numfmt.Num(v)
}

// FormatTolerance says a tolerance of m, the same in every output: "10%"
// of change for a relative metric, "1 pt" (percentage points: an absolute
// difference of the fraction) for an absolute one, the error rate.
func (m Metric) FormatTolerance(tol float64) string {
	s := strconv.FormatFloat(100*tol, 'g', 3, 64)
	if m.Absolute {
		return s + " pt"
	}
	return s + "%"
}
