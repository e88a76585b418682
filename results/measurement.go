package results

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// IntervalLength is the length of the interval histograms a recorder keeps.
const IntervalLength = time.Second

// Measurement is what one generator records during one run: the raw
// material of a RunResult. Streams of one generator (named clients) and
// separate generator processes (`lbbench attack`) each produce one, and
// Merge adds them up losslessly.
type Measurement struct {
	// Duration is the measured window.
	Duration time.Duration `json:"duration"`
	// Requests counts measured requests, errors included; Errors the
	// failed ones, split by kind in ErrorKinds.
	Requests   uint64            `json:"requests"`
	Errors     uint64            `json:"errors"`
	ErrorKinds map[string]uint64 `json:"error_kinds,omitempty"`
	// WarmupRequests were sent during warm-up and not recorded.
	WarmupRequests uint64 `json:"warmup_requests"`
	// Unmapped counts results whose intended send time was unknown.
	Unmapped uint64 `json:"unmapped,omitempty"`
	// Latency is measured from the intended send time (the corrected
	// latency); Uncorrected from when the request went on the wire (what a
	// closed-loop tool reports); SendLag is when the generator handed the
	// request to its client minus the intended time (the generator's own
	// lateness, excluding waits for a free connection); ErrorLatency covers
	// failed requests only.
	Latency      *Histogram `json:"latency"`
	Uncorrected  *Histogram `json:"uncorrected"`
	SendLag      *Histogram `json:"send_lag"`
	ErrorLatency *Histogram `json:"error_latency"`
	// Wait is, per request whose worker stamped its answer
	// (workloads.TimesHeader), when the worker began it minus its
	// intended send time: the time it waited before a worker started on
	// it, queueing in a proxy, in the kernel's accept queue or in the
	// worker included, its own service excluded. ConnWait is when the
	// worker accepted the request's connection minus the intended send
	// time, 0 for a connection accepted before the request was due. Both
	// are nil when nothing was stamped ("not measured": an exec'd server,
	// a proxy that hides the header, or a worker on another host's clock).
	Wait     *Histogram `json:"wait,omitempty"`
	ConnWait *Histogram `json:"conn_wait,omitempty"`
	// Classes, in the workload's order.
	Classes []Class `json:"classes"`
	// Clients has one entry per named client, when the workload has them.
	Clients []Client `json:"clients,omitempty"`
	// Steps has one entry per step of a steps arrival.
	Steps []Step `json:"steps,omitempty"`
	// Intervals are per-second latency histograms by completion time,
	// from the start of the measured window.
	Intervals []Interval `json:"intervals,omitempty"`
	// ByWorker counts measured responses per X-Worker header value.
	ByWorker map[int]uint64 `json:"by_worker,omitempty"`
	// IntendedRate is the measured requests over the window, per second;
	// AchievedRate the same count over the time sending them really took.
	IntendedRate float64 `json:"intended_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// Generator describes the generator's own cost.
	Generator Generator `json:"generator"`
	// Closed marks a closed-loop measurement (workloads.Closed or
	// workloads.Bursts): latency is response time, without an intended
	// send time, so it hides queueing (coordinated omission). Such runs
	// are kept apart from open-loop ones.
	Closed bool `json:"closed,omitempty"`
	// Bursts holds each burst's per-worker load, for a burst workload.
	Bursts *Bursts `json:"bursts,omitempty"`
}

// ClientResult is one named client's share of a run.
type Client struct {
	Name     string     `json:"name"`
	Share    float64    `json:"share"`
	Requests uint64     `json:"requests"`
	Errors   uint64     `json:"errors"`
	Latency  *Histogram `json:"latency"`
	Summary  Summary    `json:"summary"`
}

// StepResult is one step of a steps arrival, by intended send time.
type Step struct {
	RatePerSec float64       `json:"rate"`
	Start      time.Duration `json:"start"`
	Duration   time.Duration `json:"duration"`
	Requests   uint64        `json:"requests"`
	Errors     uint64        `json:"errors"`
	Latency    *Histogram    `json:"latency"`
	Summary    Summary       `json:"summary"`
}

// Interval is the latency of the requests that completed in one interval
// of the measured window. Its histogram is kept encoded, so that a long run
// holds a few hundred bytes per interval rather than a whole histogram.
type Interval struct {
	// Start is the interval's offset from the start of the measured window.
	Start    time.Duration `json:"start"`
	Length   time.Duration `json:"length"`
	Requests uint64        `json:"requests"`
	Errors   uint64        `json:"errors"`
	// Latency is the encoded histogram (HdrHistogram base64 V2 compressed).
	Latency string `json:"latency"`
	// P99 is the interval's 99th percentile latency.
	P99 time.Duration `json:"p99"`
}

// Histogram decodes the interval's latency histogram.
func (iv Interval) Histogram() (*Histogram, error) {
	var h Histogram
	if err := h.UnmarshalJSON([]byte(`"` + iv.Latency + `"`)); err != nil {
		return nil, err
	}
	return &h, nil
}

// Generator describes the load generator during one run.
type Generator struct {
	// CPU is user plus system CPU time of the generating processes during
	// the attack.
	CPU time.Duration `json:"cpu"`
	// MaxRSS is the largest resident set of a generating process, in bytes.
	MaxRSS int64 `json:"max_rss"`
	// Processes and Streams count generator processes and the open-loop
	// streams they ran (one per named client).
	Processes int `json:"processes"`
	Streams   int `json:"streams"`
	// Connections is the client connection cap; Opened how many
	// connections the generator actually opened.
	Connections int    `json:"connections"`
	Opened      uint64 `json:"opened"`
	// KeepAlive reports whether client connections were reused;
	// RequestsPerConn after how many requests they were closed (0: never).
	KeepAlive       bool `json:"keepalive"`
	RequestsPerConn int  `json:"requests_per_conn,omitempty"`
	// Preopen reports that every connection was opened before the
	// schedule started (workloads.Clients.Preopen).
	Preopen bool `json:"preopen,omitempty"`
	// MaxInFlight is the cap on outstanding requests (workloads.Spec.
	// InFlightCap) and PeakInFlight the most there were; both are summed
	// over streams and processes, so the peak is an upper bound there.
	// Held counts the requests that found the cap reached when due and were
	// sent late (their lateness is in SendLag).
	MaxInFlight  int    `json:"max_in_flight,omitempty"`
	PeakInFlight int    `json:"peak_in_flight,omitempty"`
	Held         uint64 `json:"held,omitempty"`
	// Unsent counts the requests never sent: the attack ended when one
	// waited at the cap past its request timeout (the target could not
	// keep up), and the rest of the schedule was recorded as failed
	// ("unsent"), so that a run ends at its duration plus the timeout.
	Unsent uint64 `json:"unsent,omitempty"`
	// CPUs is how many CPUs the generating processes could run on at once
	// (GOMAXPROCS, which follows their CPU affinity), summed over
	// processes; 0 in results written before it was recorded. CPU over
	// the run's time near it means the generator was short of CPU.
	CPUs int `json:"cpus,omitempty"`
	// Steal is the hypervisor's steal time on the CPUs the generating
	// processes could run on, during the attack (/proc/stat), summed over
	// processes: time those CPUs had work and ran something else. It is
	// 0 outside a virtual machine, and in results written before it was
	// recorded. A burst of it makes sends late without showing in CPU.
	Steal time.Duration `json:"steal,omitempty"`
}

// Merge adds o to m. Both must come from the same workload; histograms
// merge losslessly or Merge fails.
func (m *Measurement) Merge(o *Measurement) error {
	m.Duration = max(m.Duration, o.Duration)
	m.Requests += o.Requests
	m.Errors += o.Errors
	m.WarmupRequests += o.WarmupRequests
	m.Unmapped += o.Unmapped
	for k, v := range o.ErrorKinds {
		if m.ErrorKinds == nil {
			m.ErrorKinds = map[string]uint64{}
		}
		m.ErrorKinds[k] += v
	}
	for _, p := range []struct{ dst, src **Histogram }{
		{&m.Latency, &o.Latency}, {&m.Uncorrected, &o.Uncorrected},
		{&m.SendLag, &o.SendLag}, {&m.ErrorLatency, &o.ErrorLatency},
		{&m.Wait, &o.Wait}, {&m.ConnWait, &o.ConnWait},
	} {
		if err := mergeInto(p.dst, *p.src); err != nil {
			return err
		}
	}
	if err := m.mergeParts(o); err != nil {
		return err
	}
	for i, st := range o.Steps {
		// Concurrent generators each offer their share of a step's rate.
		m.Steps[i].RatePerSec += st.RatePerSec
	}
	if err := m.mergeIntervals(o.Intervals); err != nil {
		return err
	}
	for w, n := range o.ByWorker {
		if m.ByWorker == nil {
			m.ByWorker = map[int]uint64{}
		}
		m.ByWorker[w] += n
	}
	m.IntendedRate += o.IntendedRate
	m.AchievedRate += o.AchievedRate
	m.Closed = m.Closed || o.Closed
	if o.Bursts != nil {
		if m.Bursts == nil {
			m.Bursts = &Bursts{Size: o.Bursts.Size, Workers: o.Bursts.Workers}
		}
		if err := m.Bursts.merge(o.Bursts); err != nil {
			return err
		}
	}
	g, og := &m.Generator, o.Generator
	g.CPU += og.CPU
	g.MaxRSS = max(g.MaxRSS, og.MaxRSS)
	g.Processes = max(g.Processes, og.Processes)
	g.Streams += og.Streams
	g.Connections += og.Connections
	g.Opened += og.Opened
	g.KeepAlive, g.RequestsPerConn, g.Preopen = og.KeepAlive, og.RequestsPerConn, og.Preopen
	g.MaxInFlight += og.MaxInFlight
	g.PeakInFlight += og.PeakInFlight
	g.Held += og.Held
	g.Unsent += og.Unsent
	g.CPUs += og.CPUs
	g.Steal += og.Steal
	return nil
}

// mergeIntervals merges intervals by start offset.
func (m *Measurement) mergeIntervals(ivs []Interval) error {
	for _, iv := range ivs {
		i := 0
		for i < len(m.Intervals) && m.Intervals[i].Start < iv.Start {
			i++
		}
		if i == len(m.Intervals) || m.Intervals[i].Start != iv.Start {
			m.Intervals = append(m.Intervals[:i], append([]Interval{iv}, m.Intervals[i:]...)...)
			continue
		}
		a, err := m.Intervals[i].Histogram()
		if err != nil {
			return err
		}
		b, err := iv.Histogram()
		if err != nil {
			return err
		}
		if err := a.MergeFrom(b); err != nil {
			return err
		}
		merged, err := EncodeInterval(iv.Start, iv.Length, a, m.Intervals[i].Requests+iv.Requests, m.Intervals[i].Errors+iv.Errors)
		if err != nil {
			return err
		}
		m.Intervals[i] = merged
	}
	return nil
}

// EncodeInterval stores h as the interval of the measured window that
// starts at start and lasts length.
func EncodeInterval(start, length time.Duration, h *Histogram, requests, errors uint64) (Interval, error) {
	b, err := h.MarshalJSON()
	if err != nil {
		return Interval{}, err
	}
	return Interval{Start: start, Length: length, Requests: requests, Errors: errors,
		Latency: string(b[1 : len(b)-1]), P99: h.Quantile(0.99)}, nil
}

// mergeInto merges src into *dst, allocating *dst when nil.
// mergeParts adds o's per-class, per-client and per-step counts and
// histograms into m's: classes and steps by position (both come from the
// same workload), clients by name. A step m lacks is added with a rate of
// zero; the callers decide how rates combine.
func (m *Measurement) mergeParts(o *Measurement) error {
	if len(m.Classes) == 0 {
		m.Classes = make([]Class, len(o.Classes))
		for i, c := range o.Classes {
			m.Classes[i] = Class{Name: c.Name}
		}
	}
	if len(o.Classes) != len(m.Classes) && len(o.Classes) > 0 {
		return fmt.Errorf("results: merge: %d classes into %d", len(o.Classes), len(m.Classes))
	}
	for i, c := range o.Classes {
		mc := &m.Classes[i]
		mc.Requests += c.Requests
		mc.Errors += c.Errors
		if err := mergeInto(&mc.Latency, c.Latency); err != nil {
			return fmt.Errorf("class %s: %w", c.Name, err)
		}
		if err := mergeInto(&mc.Wait, c.Wait); err != nil {
			return fmt.Errorf("class %s: %w", c.Name, err)
		}
	}
	for _, c := range o.Clients {
		i := slices.IndexFunc(m.Clients, func(mc Client) bool { return mc.Name == c.Name })
		if i < 0 {
			i = len(m.Clients)
			m.Clients = append(m.Clients, Client{Name: c.Name, Share: c.Share})
		}
		mc := &m.Clients[i]
		mc.Requests += c.Requests
		mc.Errors += c.Errors
		if err := mergeInto(&mc.Latency, c.Latency); err != nil {
			return fmt.Errorf("client %s: %w", c.Name, err)
		}
	}
	for i, st := range o.Steps {
		if i == len(m.Steps) {
			m.Steps = append(m.Steps, Step{Start: st.Start, Duration: st.Duration})
		}
		ms := &m.Steps[i]
		ms.Requests += st.Requests
		ms.Errors += st.Errors
		if err := mergeInto(&ms.Latency, st.Latency); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// MergeRuns merges the measurements of runs made one after another (the
// runs of one variant) into one: requests, errors and the corrected
// latency and send lag histograms, and per class, client and step their
// counts and histograms, all losslessly. Rates are not added (each run
// offered the whole rate): a step keeps its rate. Generator figures,
// intervals and per-worker counts are left out; the callers that need them
// read them run by run. It fails when two histograms do not merge
// losslessly or the runs' classes differ.
func MergeRuns(runs []Run) (*Measurement, error) {
	m := &Measurement{Latency: NewHistogram(), SendLag: NewHistogram()}
	for _, run := range runs {
		if err := m.Latency.MergeFrom(run.Latency); err != nil {
			return nil, fmt.Errorf("results: %s: %w", run.ID, err)
		}
		if err := m.SendLag.MergeFrom(run.SendLag); err != nil {
			return nil, fmt.Errorf("results: %s: %w", run.ID, err)
		}
		if err := errors.Join(mergeInto(&m.Wait, run.Wait), mergeInto(&m.ConnWait, run.ConnWait)); err != nil {
			return nil, fmt.Errorf("results: %s: %w", run.ID, err)
		}
		m.Requests += run.Requests
		m.Errors += run.Errors
		if err := m.mergeParts(&run.Measurement); err != nil {
			return nil, fmt.Errorf("results: %s: %w", run.ID, err)
		}
		for i, st := range run.Steps {
			m.Steps[i].RatePerSec = st.RatePerSec
		}
	}
	return m, nil
}

func mergeInto(dst **Histogram, src *Histogram) error {
	if src == nil || src.Histogram == nil {
		return nil
	}
	if *dst == nil {
		*dst = NewHistogram()
	}
	return (*dst).MergeFrom(src)
}

// Summarize fills every Summary field of m's classes, clients and steps
// from its histogram. A wait histogram that holds nothing becomes nil: not
// measured, rather than a wait of zero.
func (m *Measurement) Summarize() {
	m.Wait, m.ConnWait = nonEmpty(m.Wait), nonEmpty(m.ConnWait)
	for i := range m.Classes {
		m.Classes[i].Summary = m.Classes[i].Latency.Summarize()
		m.Classes[i].Wait = nonEmpty(m.Classes[i].Wait)
	}
	for i := range m.Clients {
		m.Clients[i].Summary = m.Clients[i].Latency.Summarize()
	}
	for i := range m.Steps {
		m.Steps[i].Summary = m.Steps[i].Latency.Summarize()
	}
}

// nonEmpty is h, or nil if it holds no value.
func nonEmpty(h *Histogram) *Histogram {
	if h == nil || h.Histogram == nil || h.TotalCount() == 0 {
		return nil
	}
	return h
}

// ErrorKindsString says error kinds and their counts, most first: "500:
// 30, eof: 2".
func ErrorKindsString(kinds map[string]uint64) string {
	type kc struct {
		k string
		n uint64
	}
	var l []kc
	for k, n := range kinds {
		l = append(l, kc{k, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || (l[i].n == l[j].n && l[i].k < l[j].k) })
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprintf("%s: %d", e.k, e.n)
	}
	return strings.Join(parts, ", ")
}
