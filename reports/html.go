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

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/numfmt"
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

// writeHTML writes d as one self-contained HTML page: inline CSS and SVG,
// no script, no external URL, so it opens offline, prints, and can be
// shared as a single file. Every plotted figure is also given as a table.
// All text from the results is escaped by html/template.
func writeHTML(w io.Writer, d *Doc) error {
	p, err := buildPage(d)
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
	Workers     []workerView
	WorkerCols  []int
	Timeline    *timelineView
	Runs        []runView
	InvalidRuns []runView
	// Steal shows each run's host steal in the runs table: some run had
	// any (hostSteals).
	Steal   bool
	Bound   string // validity bounds in words
	Proxies []proxyView
	Engines []engineRow
	Clients []clientView
	// Waits has a row per variant when any variant's wait was measured.
	Waits       []waitView
	WaitHeads   []string
	ErrorKinds  []string
	Errors      []errorRow
	Answers     []answer // one per comparison, first on the page
	Verdicts    []verdictView
	VerdictSum  string
	Claims      []claimView
	ClaimSum    string
	ClosedNote  string // set for closed-loop and burst scenarios
	Bursts      []claims.VariantMaxLoad
	Envs        []envView
	ScenarioDoc string
}

// waitView is one variant's row of the wait table; Cells is nil when its
// wait was not measured.
type waitView struct {
	Name  string
	Style style
	Cells []string
}

// buildWaits is the wait table: nil when no variant measured wait.
func buildWaits(sums []VariantSummary, styles map[string]style) []waitView {
	if !slices.ContainsFunc(sums, func(s VariantSummary) bool { return s.Wait != nil }) {
		return nil
	}
	out := make([]waitView, len(sums))
	for i, s := range sums {
		cells, _ := waitRow(s)
		out[i] = waitView{Name: s.Name, Style: styles[s.Name], Cells: cells}
	}
	return out
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
	// P50CI, P99CI and P999CI are the 95% intervals across the merged
	// runs ("" with fewer than two).
	P50CI, P99CI, P999CI string
	Max                  string
	RunP99               string
	Skew                 string
	SendLag              string
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
	Steal         string // stealCell
	StealOver     bool
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
	compare.Verdict
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

// buildPage builds the template's view of d, section by section in the
// order the page shows them.
func buildPage(d *Doc) (*page, error) {
	r, sums := d.Results, d.Summaries
	styles := variantStyles(r.Scenario)
	p := buildHeader(r, d.Generated)
	var err error
	p.Percentiles = percentileHeads()
	p.Variants, p.NoValid, p.HDR = buildSummary(sums, styles)
	p.Classes = buildClasses(sums, styles)
	p.WorkerCols, p.Workers = buildWorkers(sums, styles)
	if p.Timeline, err = buildTimeline(r, sums, styles); err != nil {
		return nil, err
	}
	steals, anySteal := hostSteals(r)
	p.Runs, p.InvalidRuns = buildRuns(r.Runs, r.Scenario.Validity, steals)
	p.Steal = anySteal
	p.ErrorKinds, p.Errors = buildErrors(r.Runs)
	p.Proxies = buildProxies(r.Runs)
	p.Engines = engineRows(r)
	p.Clients = buildClients(sums, styles)
	p.Waits, p.WaitHeads = buildWaits(sums, styles), waitHeads
	p.Answers = answers(d.Verdicts, r.Scenario.Verdicts)
	p.Verdicts, p.VerdictSum = buildVerdicts(d.Verdicts)
	p.Claims, p.ClaimSum = buildClaims(d.Claims)
	p.Bursts = d.Bursts
	if r.Scenario.Workload.Deterministic() {
		p.ClosedNote = DeterministicString(r.Scenario.Workload) + ". " + closedLoopNote
	}
	p.Envs = buildEnvs(r, d.Sources)
	if p.ScenarioDoc, err = buildScenarioDoc(r.Scenario); err != nil {
		return nil, err
	}
	return p, nil
}

// buildHeader starts the page with its title, the load in words, the
// times, the validity bounds and the incomplete banner.
func buildHeader(r *results.Results, generated time.Time) *page {
	s := r.Scenario
	wl := s.Workload
	p := &page{
		Title:    "lbbench: " + s.Name,
		Scenario: s,
		Load: fmt.Sprintf("%d workers (concurrency %d), %s arrivals at %s req/s (mean) for %s after %s of warm-up, %d connections (keep-alive %s), %s",
			s.Workers.Count, s.Workers.Concurrency, wl.Arrival.Kind, strconv.FormatFloat(wl.Arrival.MeanRate(wl.Duration), 'f', -1, 64), wl.Duration, wl.WarmupTime(),
			wl.Clients.Connections, onOff(wl.Clients.KeepAliveOn()), r.RoundsString()),
		Started: r.Started.Format(time.RFC3339),
		Bound:   "a run is invalid when " + validityBounds(r),
	}
	if !generated.IsZero() {
		p.Generated = generated.Format(time.RFC3339)
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
	return p
}

// variantStyles gives every variant of s its plot style, by scenario order.
func variantStyles(s scenario.Scenario) map[string]style {
	styles := map[string]style{}
	for i, v := range s.Variants {
		styles[v.Name] = styleFor(i)
	}
	return styles
}

// percentileHeads are the column heads of the percentile tables: every
// marked percentile, then the max.
func percentileHeads() []string {
	var heads []string
	for _, m := range hdrMarks {
		heads = append(heads, m.Label)
	}
	return append(heads, "max")
}

// buildSummary builds the summary table, the variants with no valid run,
// and the HDR plot of every variant's merged runs.
func buildSummary(sums []VariantSummary, styles map[string]style) (rows []variantView, noValid []string, hdr *plot) {
	var curves []hdrCurve
	for _, vs := range sums {
		st := styles[vs.Name]
		runs := strconv.Itoa(vs.Runs)
		if vs.Valid != vs.Runs {
			runs = fmt.Sprintf("%d (%d valid)", vs.Runs, vs.Valid)
		}
		rows = append(rows, variantView{
			Name: vs.Name, Style: st, Runs: runs, Requests: vs.Requests,
			Rate: strconv.FormatFloat(vs.Rate, 'f', 1, 64), Errors: errorsCell(vs.Errors, vs.Requests),
			P50: lowerBound(vs) + numfmt.Dur(vs.Latency.P50), P90: lowerBound(vs) + numfmt.Dur(vs.Latency.P90),
			P99: lowerBound(vs) + numfmt.Dur(vs.Latency.P99), P999: lowerBound(vs) + numfmt.Dur(vs.Latency.P999),
			P50CI: acrossCell(vs, results.MetricP50), P99CI: acrossCell(vs, results.MetricP99), P999CI: acrossCell(vs, results.MetricP999),
			Max: lowerBound(vs) + numfmt.Dur(vs.Latency.Max), RunP99: durList(vs.RunP99), Skew: numfmt.Skew(vs.Skew), SendLag: numfmt.Dur(vs.SendLagP99),
			Tail: tailCells(vs.Histogram),
		})
		curves = append(curves, hdrCurve{name: vs.Name, style: st, h: vs.Histogram})
		if vs.Runs > 0 && vs.Valid == 0 {
			noValid = append(noValid, vs.Name)
		}
	}
	hdr = percentilePlot("hdr-plot", "Latency by percentile, every variant (valid runs merged)", curves, 900, 440)
	return rows, noValid, hdr
}

// buildClasses builds, per request class, the same plot and table as the
// summary's.
func buildClasses(sums []VariantSummary, styles map[string]style) []classView {
	var classNames []string
	for _, vs := range sums {
		for _, c := range vs.Classes {
			if !slices.Contains(classNames, c.Name) {
				classNames = append(classNames, c.Name)
			}
		}
	}
	var out []classView
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
		out = append(out, cv)
	}
	return out
}

// buildWorkers builds the share of responses per worker, every variant's
// bars on one shared scale, and the table's worker columns.
func buildWorkers(sums []VariantSummary, styles map[string]style) (cols []int, views []workerView) {
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
		cols = append(cols, i)
	}
	for i, vs := range sums {
		st := styles[vs.Name]
		counts := slices.Clone(vs.Workers)
		for len(counts) < maxWorkers {
			counts = append(counts, 0)
		}
		wv := workerView{Variant: vs.Name, Style: st, Counts: counts, Skew: numfmt.Skew(results.Skew(vs.Workers)), RunSkew: numfmt.Skew(vs.Skew)}
		wv.Plot = workerBars(fmt.Sprintf("worker-bars-%d", i), "Responses per worker, "+vs.Name, st, vs.Workers, top, 440, 220)
		views = append(views, wv)
	}
	return cols, views
}

// validityBounds says when a run of r is invalid: "its achieved rate is
// more than 5% below the intended rate or its send-lag p99 exceeds 5ms",
// then the host's steal when the results record a threshold, and another
// lbbench run on the host when a run saw one.
func validityBounds(r *results.Results) string {
	v := r.Scenario.Validity
	conds := []string{
		"its achieved rate is more than " + strconv.FormatFloat(100*v.MaxRateError, 'f', -1, 64) + "% below the intended rate",
		"its send-lag p99 exceeds " + v.MaxSendLagP99.String(),
	}
	if v.MaxSteal > 0 && v.MaxSteal < 1 {
		conds = append(conds, "the host stole more than "+strconv.FormatFloat(100*v.MaxSteal, 'f', -1, 64)+"% of the time of its CPUs (the generator's and the server's)")
	}
	if !v.AllowConcurrent && slices.ContainsFunc(r.Runs, func(run results.Run) bool { return len(run.Concurrent) > 0 }) {
		conds = append(conds, "another lbbench run was running on the host during its load")
	}
	last := len(conds) - 1
	return strings.Join(conds[:last], ", ") + " or " + conds[last]
}

// buildRuns builds the runs table (validity, send lag and the generator's
// own cost) and the list of invalid runs.
func buildRuns(runs []results.Run, v scenario.Validity, steals map[string]results.Steal) (all, invalid []runView) {
	for _, run := range runs {
		rv := runView{ID: run.ID, Variant: run.Variant, Rep: run.Rep, Started: run.Started.Format("15:04:05"),
			Requests: run.Requests, Intended: strconv.FormatFloat(run.IntendedRate, 'f', 1, 64),
			Achieved: strconv.FormatFloat(run.AchievedRate, 'f', 1, 64), Errors: errorsCell(run.Errors, run.Requests),
			P99: numfmt.Dur(run.Summary.P99), CPU: run.Generator.CPU.Round(time.Millisecond).String(),
			Skew: numfmt.Skew(run.Skew()), Valid: run.Valid, Invalid: run.Invalid, Steal: stealCell(steals, run.ID)}
		if st, ok := steals[run.ID]; ok && v.MaxSteal > 0 && v.MaxSteal < 1 {
			rv.StealOver = st.Share > v.MaxSteal
		}
		if run.SendLag != nil && run.SendLag.Histogram != nil {
			rv.LagP50, rv.LagP99 = numfmt.Dur(run.SendLag.Quantile(0.5)), numfmt.Dur(run.SendLag.Quantile(0.99))
			rv.LagMax = numfmt.Dur(time.Duration(run.SendLag.Max()) * time.Microsecond)
			rv.LagOver = run.SendLag.Quantile(0.99) > v.MaxSendLagP99
		}
		if run.IntendedRate > 0 {
			rv.AchievedShort = 1-run.AchievedRate/run.IntendedRate > v.MaxRateError
		}
		all = append(all, rv)
		if !run.Valid {
			invalid = append(invalid, rv)
		}
	}
	return all, invalid
}

// buildErrors builds the errors table: every error kind seen, sorted, and
// a row of counts per run that had errors.
func buildErrors(runs []results.Run) (kinds []string, rows []errorRow) {
	seen := map[string]bool{}
	for _, run := range runs {
		for k := range run.ErrorKinds {
			seen[k] = true
		}
	}
	for k := range seen {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, run := range runs {
		if run.Errors == 0 {
			continue
		}
		row := errorRow{Run: run.ID}
		for _, k := range kinds {
			row.Counts = append(row.Counts, run.ErrorKinds[k])
		}
		rows = append(rows, row)
	}
	return kinds, rows
}

// buildProxies builds the proxy table: the counters of every run through
// lbbench's proxy.
func buildProxies(runs []results.Run) []proxyView {
	var out []proxyView
	for _, run := range runs {
		if run.Proxy == nil {
			continue
		}
		pv := proxyView{Run: run.ID, Variant: run.Variant, Policy: run.Proxy.Policy, Decisions: run.Proxy.Decisions,
			ClientConns: run.Proxy.ClientConns, UpstreamConns: run.Proxy.UpstreamConns}
		if run.Requests > 0 {
			pv.PerRequest = strconv.FormatFloat(float64(run.Proxy.UpstreamConns)/float64(run.Requests), 'f', 3, 64)
		}
		for _, b := range run.Proxy.Backends {
			pv.Backends = append(pv.Backends, backendView{Addr: b.Addr, Requests: b.Requests, Errors: b.Errors, PeakActive: b.PeakActive})
		}
		out = append(out, pv)
	}
	return out
}

// buildClients builds the clients table: every named client's merged
// figures, variant by variant.
func buildClients(sums []VariantSummary, styles map[string]style) []clientView {
	var out []clientView
	for _, vs := range sums {
		for _, c := range vs.Clients {
			out = append(out, clientView{Variant: vs.Name, Style: styles[vs.Name], Name: c.Name, Share: c.Share,
				Requests: c.Requests, Errors: c.Errors, P50: numfmt.Dur(c.Latency.P50), P99: numfmt.Dur(c.Latency.P99), P999: numfmt.Dur(c.Latency.P999)})
		}
	}
	return out
}

// buildVerdicts builds the verdict table and its count by outcome; both
// are empty without verdicts.
func buildVerdicts(vs []compare.Verdict) (rows []verdictView, sum string) {
	for _, v := range vs {
		vv := verdictView{Verdict: v, Class: string(v.Outcome), Sentence: verdictSentence(v)}
		vv.Ratio, vv.CI, vv.Tol, _ = cells(v)
		rows = append(rows, vv)
	}
	if len(vs) > 0 {
		pass, fail, inc := compare.CountOutcomes(vs)
		sum = fmt.Sprintf("%d fail, %d inconclusive, %d pass", fail, inc, pass)
	}
	return rows, sum
}

// buildEnvs builds the environment section: r's, or that of every source
// of a combined report.
func buildEnvs(r *results.Results, sources []results.Source) []envView {
	var out []envView
	if len(sources) == 0 {
		out = append(out, envOf("", r))
	}
	for _, src := range sources {
		out = append(out, envOf(src.Label+" ("+src.Path+")", src.Results))
	}
	return out
}

// buildScenarioDoc is the scenario as YAML, shown at the end of the page.
func buildScenarioDoc(s scenario.Scenario) (string, error) {
	doc, err := yaml.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("reports: encode scenario: %w", err)
	}
	return string(doc), nil
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
		out = append(out, cell{Text: numfmt.Dur(h.Quantile(m.P)), Thin: 1/(1-m.P) > n*1.0000001})
	}
	return append(out, cell{Text: numfmt.Dur(time.Duration(h.Max()) * time.Microsecond)})
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
	if k := e.Kubernetes; k != nil {
		add("kubernetes", k.Server+" ("+k.Version+"); namespace "+k.Namespace+"; image "+k.Image+"; session "+k.Session)
		add("placement", k.Placement)
		add("server pod", podPlacement(r.Runs, "server"))
		add("generator pods", podPlacement(r.Runs, "generator"))
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

// podPlacement says where a role's pods ran over all runs and with what
// resources: "node1: 2 CPUs (request = limit), 1Gi, Guaranteed, 9 pods".
func podPlacement(runs []results.Run, role string) string {
	type key struct{ node, cpu, limit, mem, qos string }
	count := map[key]int{}
	var order []key
	for _, run := range runs {
		for _, p := range run.Pods {
			if p.Role != role {
				continue
			}
			k := key{p.Node, p.CPURequest, p.CPULimit, p.MemoryLimit, p.QOS}
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		cpu := k.cpu + " CPUs (request = limit)"
		if k.cpu != k.limit {
			cpu = "CPU request " + k.cpu + ", limit " + k.limit
		}
		pods := "pods"
		if count[k] == 1 {
			pods = "pod"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %s, %s, %d %s", k.node, cpu, k.mem, k.qos, count[k], pods))
	}
	return strings.Join(parts, "; ")
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
			row.P99 = append(row.P99, numfmt.Dur(sl.h.Quantile(0.99)))
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
