package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"go.yaml.in/yaml/v3"
)

//go:embed report.html.tmpl
var reportTemplate string

// The page's CSS is shared with the published site's index.
//
//go:embed report.css
var reportCSS string

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"css": func() template.CSS { return template.CSS(reportCSS) },
	"f":   px,
	"add": func(a, b float64) float64 { return a + b },
	"mid": func(a, b float64) float64 { return (a + b) / 2 },
}).Parse(reportTemplate))

// Option configures WriteHTML and WriteDir.
type Option func(*options)

type options struct {
	verdicts  []Verdict
	sources   []Source
	unitRatio float64
	generated time.Time
}

// WithVerdicts adds a comparison's verdicts: the report shows a verdict
// table, and WriteDir writes junit.xml. Without verdicts neither appears.
func WithVerdicts(vs []Verdict) Option { return func(o *options) { o.verdicts = vs } }

// WithSources names the results files a combined report was built from
// (see Combine), so the environment of each is shown.
func WithSources(ss []Source) Option { return func(o *options) { o.sources = ss } }

// WithUnitRatio sets the divisor from microseconds to the unit of the
// .hgrm exports; zero means DefaultUnitRatio (milliseconds).
func WithUnitRatio(r float64) Option { return func(o *options) { o.unitRatio = r } }

// WithGenerated sets the time the report says it was generated; the zero
// time (the default) leaves it out, so the same results give the same
// bytes.
func WithGenerated(t time.Time) Option { return func(o *options) { o.generated = t } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Source is one results file that went into a report.
type Source struct {
	// Label prefixes the source's variant names when names collide.
	Label string
	// Path is where the results were read from.
	Path string
	// Results are the results as read.
	Results *results.Results
}

// WriteHTML writes r as one self-contained HTML page: inline CSS and SVG,
// no script, no external URL, so it opens offline, prints, and can be
// shared as a single file. Every plotted figure is also given as a table.
// All text from the results is escaped by html/template.
func WriteHTML(w io.Writer, r *results.Results, opts ...Option) error {
	o := collect(opts)
	p, err := buildPage(r, o)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("reports: render html: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// page is the template's view of a report.
type page struct {
	Title       string
	Scenario    scenario.Scenario
	Load        string
	Generated   string
	Started     string
	Duration    string
	Incomplete  string
	NoValid     []string // variants whose runs are all invalid
	Variants    []variantView
	HDR         *plot
	Percentiles []string // column heads of the percentile table
	Classes     []classView
	WorkerTop   float64
	Workers     []workerView
	WorkerCols  []int
	Timeline    *timelineView
	Runs        []runView
	InvalidRuns []runView
	Bound       string // validity bounds in words
	Proxies     []proxyView
	Engines     []engineRow
	Clients     []clientView
	ErrorKinds  []string
	Errors      []errorRow
	Verdicts    []verdictView
	VerdictSum  string
	Envs        []envView
	ScenarioDoc string
}

// clientView is one named client's merged figures in one variant.
type clientView struct {
	Variant          string
	Style            style
	Name             string
	Share            float64
	Requests, Errors uint64
	P50, P99, P999   string
}

type variantView struct {
	Name      string
	Style     style
	Runs      string
	Requests  uint64
	Rate      string
	Errors    string
	P50, P90  string
	P99, P999 string
	Max       string
	RunP99    string
	Skew      string
	SendLag   string
	// Tail is the row of the percentile table: value per hdrMarks plus max.
	Tail []cell
}

type cell struct {
	Text string
	// Thin marks a percentile the sample count cannot resolve: the value
	// shown is the maximum.
	Thin bool
}

type classView struct {
	Name string
	Plot *plot
	Rows []classRow
}

type classRow struct {
	Variant  string
	Style    style
	Requests uint64
	Tail     []cell
}

type workerView struct {
	Variant string
	Style   style
	Plot    *plot
	Counts  []uint64
	Skew    string
	RunSkew string
}

type timelineView struct {
	P99, Rate *plot
	Seconds   []string
	Rows      []timelineRow
}

type timelineRow struct {
	Variant string
	Style   style
	P99     []string
	Rate    []string
}

type runView struct {
	ID, Variant   string
	Rep           int
	Started       string
	Requests      uint64
	Intended      string
	Achieved      string
	Errors        string
	P99           string
	LagP50        string
	LagP99        string
	LagMax        string
	CPU           string
	Skew          string
	Valid         bool
	Invalid       []string
	LagOver       bool
	AchievedShort bool
}

type proxyView struct {
	Run, Variant  string
	Policy        string
	Decisions     uint64
	ClientConns   uint64
	UpstreamConns uint64
	PerRequest    string
	Backends      []backendView
}

type backendView struct {
	Addr       string
	Requests   uint64
	Errors     uint64
	PeakActive int64
}

type errorRow struct {
	Run    string
	Counts []uint64
}

type verdictView struct {
	Verdict
	Class    string
	Ratio    string
	CI       string
	Tol      string
	Sentence string
}

type envView struct {
	Label string
	Rows  [][2]string
}

func buildPage(r *results.Results, o options) (*page, error) {
	sums, err := Summarize(r)
	if err != nil {
		return nil, err
	}
	s := r.Scenario
	wl := s.Workload
	p := &page{
		Title:    "lbbench: " + s.Name,
		Scenario: s,
		Load: fmt.Sprintf("%d workers (concurrency %d), %s arrivals at %s req/s (mean) for %s after %s of warm-up, %d connections (keep-alive %s), %d runs per variant",
			s.Workers.Count, s.Workers.Concurrency, wl.Arrival.Kind, strconv.FormatFloat(wl.Arrival.MeanRate(wl.Duration), 'f', -1, 64), wl.Duration, wl.WarmupTime(),
			wl.Clients.Connections, onOff(wl.Clients.KeepAliveOn()), s.Repeat),
		Started: r.Started.Format(time.RFC3339),
		Bound: fmt.Sprintf("a run is invalid when its achieved rate is more than %s below the intended rate or its send-lag p99 exceeds %s",
			strconv.FormatFloat(100*s.Validity.MaxRateError, 'f', -1, 64)+"%", s.Validity.MaxSendLagP99),
	}
	if !o.generated.IsZero() {
		p.Generated = o.generated.Format(time.RFC3339)
	}
	if !r.Finished.IsZero() {
		p.Duration = r.Finished.Sub(r.Started).Round(time.Second).String()
	}
	if !r.Complete {
		p.Incomplete = fmt.Sprintf("Incomplete: %d of %d runs finished", len(r.Runs), len(r.Order))
		if r.Error != "" {
			p.Incomplete += " (" + r.Error + ")"
		}
	}
	styles := map[string]style{}
	for i, v := range s.Variants {
		styles[v.Name] = styleFor(i)
	}
	for _, m := range hdrMarks {
		p.Percentiles = append(p.Percentiles, m.Label)
	}
	p.Percentiles = append(p.Percentiles, "max")

	// Summary and the HDR plot of every variant's merged runs.
	var curves []hdrCurve
	for _, vs := range sums {
		st := styles[vs.Name]
		runs := strconv.Itoa(vs.Runs)
		if vs.Valid != vs.Runs {
			runs = fmt.Sprintf("%d (%d valid)", vs.Runs, vs.Valid)
		}
		p.Variants = append(p.Variants, variantView{
			Name: vs.Name, Style: st, Runs: runs, Requests: vs.Requests,
			Rate: strconv.FormatFloat(vs.Rate, 'f', 1, 64), Errors: errorsCell(vs.Errors, vs.Requests),
			P50: Dur(vs.Latency.P50), P90: Dur(vs.Latency.P90), P99: Dur(vs.Latency.P99), P999: Dur(vs.Latency.P999),
			Max: Dur(vs.Latency.Max), RunP99: durList(vs.RunP99), Skew: SkewString(vs.Skew), SendLag: Dur(vs.SendLagP99),
			Tail: tailCells(vs.Histogram),
		})
		curves = append(curves, hdrCurve{name: vs.Name, style: st, h: vs.Histogram})
		if vs.Runs > 0 && vs.Valid == 0 {
			p.NoValid = append(p.NoValid, vs.Name)
		}
	}
	p.HDR = percentilePlot("hdr-plot", "Latency by percentile, every variant (valid runs merged)", curves, 900, 440)

	// Per class: the same plot and table for each request class.
	var classNames []string
	for _, vs := range sums {
		for _, c := range vs.Classes {
			if !slices.Contains(classNames, c.Name) {
				classNames = append(classNames, c.Name)
			}
		}
	}
	for ci, name := range classNames {
		cv := classView{Name: name}
		var cc []hdrCurve
		for _, vs := range sums {
			for _, c := range vs.Classes {
				if c.Name == name {
					st := styles[vs.Name]
					cc = append(cc, hdrCurve{name: vs.Name, style: st, h: c.Histogram})
					cv.Rows = append(cv.Rows, classRow{Variant: vs.Name, Style: st, Requests: c.Requests, Tail: tailCells(c.Histogram)})
				}
			}
		}
		cv.Plot = percentilePlot(fmt.Sprintf("class-plot-%d", ci), "Latency by percentile, class "+name, cc, 900, 360)
		p.Classes = append(p.Classes, cv)
	}

	// Workers: share of responses per worker, on one shared scale.
	top := 0.0
	maxWorkers := 0
	for _, vs := range sums {
		var total uint64
		for _, c := range vs.Workers {
			total += c
		}
		for _, c := range vs.Workers {
			if total > 0 {
				top = max(top, 100*float64(c)/float64(total))
			}
		}
		maxWorkers = max(maxWorkers, len(vs.Workers))
	}
	for i := range maxWorkers {
		p.WorkerCols = append(p.WorkerCols, i)
	}
	for i, vs := range sums {
		st := styles[vs.Name]
		counts := slices.Clone(vs.Workers)
		for len(counts) < maxWorkers {
			counts = append(counts, 0)
		}
		wv := workerView{Variant: vs.Name, Style: st, Counts: counts, Skew: SkewString(results.Skew(vs.Workers)), RunSkew: SkewString(vs.Skew)}
		wv.Plot = workerBars(fmt.Sprintf("worker-bars-%d", i), "Responses per worker, "+vs.Name, st, vs.Workers, top, 440, 220)
		p.Workers = append(p.Workers, wv)
	}

	for _, vs := range sums {
		for _, c := range vs.Clients {
			p.Clients = append(p.Clients, clientView{Variant: vs.Name, Style: styles[vs.Name], Name: c.Name, Share: c.Share,
				Requests: c.Requests, Errors: c.Errors, P50: Dur(c.Latency.P50), P99: Dur(c.Latency.P99), P999: Dur(c.Latency.P999)})
		}
	}
	p.Engines = engineRows(r)

	tl, err := buildTimeline(r, sums, styles)
	if err != nil {
		return nil, err
	}
	p.Timeline = tl

	// Runs: validity, send lag and the generator's own cost.
	kinds := map[string]bool{}
	for _, run := range r.Runs {
		rv := runView{ID: run.ID, Variant: run.Variant, Rep: run.Rep, Started: run.Started.Format("15:04:05"),
			Requests: run.Requests, Intended: strconv.FormatFloat(run.IntendedRate, 'f', 1, 64),
			Achieved: strconv.FormatFloat(run.AchievedRate, 'f', 1, 64), Errors: errorsCell(run.Errors, run.Requests),
			P99: Dur(run.Summary.P99), CPU: run.Generator.CPU.Round(time.Millisecond).String(),
			Skew: SkewString(run.Skew()), Valid: run.Valid, Invalid: run.Invalid}
		if run.SendLag != nil && run.SendLag.Histogram != nil {
			rv.LagP50, rv.LagP99 = Dur(run.SendLag.Quantile(0.5)), Dur(run.SendLag.Quantile(0.99))
			rv.LagMax = Dur(time.Duration(run.SendLag.Max()) * time.Microsecond)
			rv.LagOver = run.SendLag.Quantile(0.99) > s.Validity.MaxSendLagP99
		}
		if run.IntendedRate > 0 {
			rv.AchievedShort = 1-run.AchievedRate/run.IntendedRate > s.Validity.MaxRateError
		}
		p.Runs = append(p.Runs, rv)
		if !run.Valid {
			p.InvalidRuns = append(p.InvalidRuns, rv)
		}
		if run.Proxy != nil {
			pv := proxyView{Run: run.ID, Variant: run.Variant, Policy: run.Proxy.Policy, Decisions: run.Proxy.Decisions,
				ClientConns: run.Proxy.ClientConns, UpstreamConns: run.Proxy.UpstreamConns}
			if run.Requests > 0 {
				pv.PerRequest = strconv.FormatFloat(float64(run.Proxy.UpstreamConns)/float64(run.Requests), 'f', 3, 64)
			}
			for _, b := range run.Proxy.Backends {
				pv.Backends = append(pv.Backends, backendView{Addr: b.Addr, Requests: b.Requests, Errors: b.Errors, PeakActive: b.PeakActive})
			}
			p.Proxies = append(p.Proxies, pv)
		}
		for k := range run.ErrorKinds {
			kinds[k] = true
		}
	}
	for k := range kinds {
		p.ErrorKinds = append(p.ErrorKinds, k)
	}
	slices.Sort(p.ErrorKinds)
	for _, run := range r.Runs {
		if run.Errors == 0 {
			continue
		}
		row := errorRow{Run: run.ID}
		for _, k := range p.ErrorKinds {
			row.Counts = append(row.Counts, run.ErrorKinds[k])
		}
		p.Errors = append(p.Errors, row)
	}

	for _, v := range o.verdicts {
		vv := verdictView{Verdict: v, Class: string(v.Outcome), Sentence: verdictSentence(v), Ratio: "-", CI: "-", Tol: "-"}
		if v.Ratio != 0 {
			vv.Ratio = ratioString(v.Ratio)
		}
		if v.CILow != 0 || v.CIHigh != 0 {
			vv.CI = "[" + ratioString(v.CILow) + ", " + ratioString(v.CIHigh) + "]"
		}
		if v.Tolerance != 0 {
			vv.Tol = "±" + strconv.FormatFloat(100*v.Tolerance, 'g', 4, 64) + "%"
		}
		p.Verdicts = append(p.Verdicts, vv)
	}
	if len(o.verdicts) > 0 {
		pass, fail, inc := CountOutcomes(o.verdicts)
		p.VerdictSum = fmt.Sprintf("%d fail, %d inconclusive, %d pass", fail, inc, pass)
	}

	if len(o.sources) == 0 {
		p.Envs = append(p.Envs, envOf("", r))
	}
	for _, src := range o.sources {
		p.Envs = append(p.Envs, envOf(src.Label+" ("+src.Path+")", src.Results))
	}
	doc, err := yaml.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("reports: encode scenario: %w", err)
	}
	p.ScenarioDoc = string(doc)
	return p, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// tailCells lists h's value at every marked percentile, then the max.
func tailCells(h *results.Histogram) []cell {
	out := make([]cell, 0, len(hdrMarks)+1)
	if h == nil || h.Histogram == nil || h.TotalCount() == 0 {
		for range len(hdrMarks) + 1 {
			out = append(out, cell{Text: "-"})
		}
		return out
	}
	n := float64(h.TotalCount())
	for _, m := range hdrMarks {
		out = append(out, cell{Text: Dur(h.Quantile(m.P)), Thin: 1/(1-m.P) > n*1.0000001})
	}
	return append(out, cell{Text: Dur(time.Duration(h.Max()) * time.Microsecond)})
}

func envOf(label string, r *results.Results) envView {
	e := r.Env
	ev := envView{Label: label}
	add := func(k, v string) {
		if v != "" {
			ev.Rows = append(ev.Rows, [2]string{k, v})
		}
	}
	add("scenario", r.Scenario.Name)
	add("started", r.Started.Format(time.RFC3339))
	if !r.Finished.IsZero() {
		add("finished", r.Finished.Format(time.RFC3339))
	}
	add("lbbench", strings.TrimSpace(e.Version+" "+e.Commit))
	add("driver", e.Driver)
	add("pinning", e.Pinning)
	if c := e.Containers; c != nil {
		add("docker", "Engine "+c.Engine+", API "+c.API+"; image "+c.Image+"; session "+c.Session)
		add("network", c.Network)
		add("generator", c.Generator)
	}
	add("host", e.Hostname)
	add("kernel", e.Kernel)
	add("os/arch", e.OS+"/"+e.Arch)
	add("cpu", fmt.Sprintf("%s × %d", e.CPUModel, e.CPUs))
	add("go", e.GoVersion)
	engines := make([]string, 0, len(e.Engines))
	for k := range e.Engines {
		engines = append(engines, k)
	}
	slices.Sort(engines)
	for _, k := range engines {
		add(k, e.Engines[k])
	}
	add("schema", strconv.Itoa(r.Schema))
	return ev
}

// buildTimeline merges each variant's valid runs interval by interval:
// p99 of the merged interval histograms, and the mean completion rate. It
// returns nil when no run carries intervals.
func buildTimeline(r *results.Results, sums []VariantSummary, styles map[string]style) (*timelineView, error) {
	any := false
	for _, run := range r.Runs {
		if len(run.Intervals) > 0 {
			any = true
			break
		}
	}
	if !any {
		return nil, nil
	}
	byID := map[string]results.Run{}
	for _, run := range r.Runs {
		byID[run.ID] = run
	}
	type slot struct {
		h        *results.Histogram
		requests uint64
		length   time.Duration
		runs     int
	}
	tv := &timelineView{}
	var p99s, rates []timeSeries
	var starts []time.Duration
	var end time.Duration
	perVariant := make([]map[time.Duration]*slot, len(sums))
	for i, vs := range sums {
		slots := map[time.Duration]*slot{}
		for _, id := range vs.Merged {
			run := byID[id]
			for _, iv := range run.Intervals {
				if run.Duration > 0 && iv.Start >= run.Duration {
					// Completions after the window (the backlog draining)
					// would show as a fall in throughput that never was.
					continue
				}
				h, err := iv.Histogram()
				if err != nil {
					return nil, fmt.Errorf("reports: %s: interval at %s: %w", id, iv.Start, err)
				}
				sl := slots[iv.Start]
				if sl == nil {
					sl = &slot{h: results.NewHistogram(), length: iv.Length}
					slots[iv.Start] = sl
					if !slices.Contains(starts, iv.Start) {
						starts = append(starts, iv.Start)
					}
				}
				if err := sl.h.MergeFrom(h); err != nil {
					return nil, fmt.Errorf("reports: %s: interval at %s: %w", id, iv.Start, err)
				}
				sl.requests += iv.Requests
				sl.runs++
				end = max(end, iv.Start+iv.Length)
			}
		}
		perVariant[i] = slots
	}
	slices.Sort(starts)
	for _, st := range starts {
		tv.Seconds = append(tv.Seconds, strconv.FormatFloat(st.Seconds(), 'f', -1, 64))
	}
	for i, vs := range sums {
		style := styles[vs.Name]
		p99 := timeSeries{name: vs.Name, style: style}
		rate := timeSeries{name: vs.Name, style: style}
		row := timelineRow{Variant: vs.Name, Style: style}
		for _, st := range starts {
			sl := perVariant[i][st]
			if sl == nil || sl.runs == 0 || sl.length <= 0 {
				row.P99 = append(row.P99, "-")
				row.Rate = append(row.Rate, "-")
				continue
			}
			mid := (st + sl.length/2).Seconds()
			v := float64(sl.h.ValueAtQuantile(99)) / 1000
			rps := float64(sl.requests) / float64(sl.runs) / sl.length.Seconds()
			p99.t, p99.v = append(p99.t, mid), append(p99.v, v)
			rate.t, rate.v = append(rate.t, mid), append(rate.v, rps)
			row.P99 = append(row.P99, Dur(sl.h.Quantile(0.99)))
			row.Rate = append(row.Rate, strconv.FormatFloat(rps, 'f', 0, 64))
		}
		p99s, rates = append(p99s, p99), append(rates, rate)
		tv.Rows = append(tv.Rows, row)
	}
	tv.P99 = timePlot("p99-over-time", "p99 latency per interval (valid runs merged)", "p99 (ms)", p99s, end.Seconds(), msLabel, 900, 320)
	tv.Rate = timePlot("rate-over-time", "Completed requests per second (mean of valid runs)", "requests/s",
		rates, end.Seconds(), func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }, 900, 320)
	return tv, nil
}
