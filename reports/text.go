package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
)

// WriteText writes d as terminal tables: one row per variant with latency
// percentiles of the merged runs, then each variant's per-worker responses.
func WriteText(w io.Writer, d *Doc) error {
	r, sums := d.Results, d.Summaries
	wl := r.Scenario.Workload
	if wl.Deterministic() {
		fmt.Fprintf(w, "scenario %s: %d workers (concurrency %d), %s, %s\n",
			r.Scenario.Name, r.Scenario.Workers.Count, r.Scenario.Workers.Concurrency, DeterministicString(wl), r.RoundsString())
		fmt.Fprintf(w, "%s\n\n", closedLoopNote)
	} else {
		fmt.Fprintf(w, "scenario %s: %d workers (concurrency %d), %s %.0f req/s for %s (+%s warm-up), %s\n",
			r.Scenario.Name, r.Scenario.Workers.Count, r.Scenario.Workers.Concurrency,
			wl.Arrival.Kind, wl.Arrival.MeanRate(wl.Duration), wl.Duration, wl.WarmupTime(), r.RoundsString())
		fmt.Fprintf(w, "latency from intended send time; percentiles of all valid runs merged\n\n")
	}

	// The answer first: what each comparison came to, one line each.
	if as := answers(d.Verdicts, r.Scenario.Verdicts); len(as) > 0 {
		fmt.Fprintln(w, "answer:")
		for _, a := range as {
			fmt.Fprintf(w, "  %s\n", a.Text)
		}
		fmt.Fprintln(w)
	}

	// Numbers align right; names are padded so that they align left.
	width := len("variant")
	for _, s := range sums {
		width = max(width, len(s.Name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\truns\trequests\trate/s\terrors\tp50\tp90\tp99\tp99.9\tmax\tp99 by run\tskew\tsend lag p99\t\n", width, "variant")
	for _, s := range sums {
		runs := strconv.Itoa(s.Runs)
		if s.Valid != s.Runs {
			runs = fmt.Sprintf("%d (%d valid)", s.Runs, s.Valid)
		}
		q := func(d time.Duration) string { return lowerBound(s) + numfmt.Dur(d) }
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			fmt.Sprintf("%-*s", width, s.Name), runs, s.Requests, s.Rate, errorsCell(s.Errors, s.Requests),
			q(s.Latency.P50), q(s.Latency.P90), q(s.Latency.P99), q(s.Latency.P999), q(s.Latency.Max),
			durList(s.RunP99), numfmt.Skew(s.Skew), numfmt.Dur(s.SendLagP99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	writeAcross(w, sums, width)
	writeCPU(w, sums, width)
	writeWait(w, sums, width)
	fmt.Fprintf(w, "\nresponses per worker (all merged runs)\n")
	for _, s := range sums {
		parts := make([]string, len(s.Workers))
		for i, c := range s.Workers {
			parts[i] = strconv.FormatUint(c, 10)
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, s.Name, strings.Join(parts, " "))
	}
	if steals, any := hostSteals(r); any {
		fmt.Fprintf(w, "\nhost%s\n", stealHeading(r))
		for _, row := range stealByVariant(r, steals) {
			fmt.Fprintf(w, "  %-*s  %s\n", width, row[0], row[1])
		}
	}
	writeProxyCounters(w, sums, width)
	writeEngineCounters(w, r)
	writeClients(w, sums)
	writeSteps(w, sums)
	var invalid, saturated []string
	for _, s := range sums {
		invalid = append(invalid, s.Invalid...)
		saturated = append(saturated, s.Saturated...)
	}
	if len(saturated) > 0 {
		fmt.Fprintf(w, "\nsaturated runs (kept: the target could not keep up; percentiles marked >= are lower bounds):\n")
		for _, why := range saturated {
			fmt.Fprintf(w, "  %s\n", why)
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintf(w, "\ninvalid runs (left out of the figures above):\n")
		for _, why := range invalid {
			fmt.Fprintf(w, "  %s\n", why)
		}
	}
	writeBurstsText(w, d.Bursts)
	writeClaimsText(w, d.Claims)
	if !r.Complete {
		fmt.Fprintf(w, "\nINCOMPLETE: %d of %d runs finished (%s)\n", len(r.Runs), len(r.Order), r.Error)
	}
	return nil
}

func errorsCell(errs, reqs uint64) string {
	if errs == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%.2f%%)", errs, 100*float64(errs)/float64(max(reqs, 1)))
}

func durList(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = numfmt.Dur(d)
	}
	return strings.Join(parts, " ")
}

// writeProxyCounters explains the proxy variants' results: how many
// decisions the proxy made and how many connections it saw on each side.
func writeProxyCounters(w io.Writer, sums []VariantSummary, width int) {
	has := false
	for _, s := range sums {
		has = has || s.Proxy != nil
	}
	if !has {
		return
	}
	fmt.Fprintf(w, "\nproxy counters (all merged runs, warm-up included)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tmode\tpolicy\tdecisions\tclient conns\tupstream conns\tretries\tno backend\tpools\t\n", width, "variant")
	for _, s := range sums {
		p := s.Proxy
		if p == nil {
			continue
		}
		var pools []string
		for name, n := range p.PoolRequests {
			pools = append(pools, name+"="+strconv.FormatUint(n, 10))
		}
		slices.Sort(pools)
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", width, s.Name, p.Mode, p.Policy,
			p.Decisions, p.ClientConns, p.UpstreamConns, p.Retries, p.NoBackend, strings.Join(pools, " "))
	}
	tw.Flush()
}

// writeSteps shows latency against load for steps arrivals.
func writeSteps(w io.Writer, sums []VariantSummary) {
	for _, s := range sums {
		if len(s.Steps) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nlatency by step: %s\n", s.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "rate/s\trequests\terrors\tp50\tp99\tp99.9\t")
		for _, st := range s.Steps {
			fmt.Fprintf(tw, "%.0f\t%d\t%d\t%s\t%s\t%s\t\n", st.RatePerSec, st.Requests, st.Errors,
				numfmt.Dur(st.Latency.P50), numfmt.Dur(st.Latency.P99), numfmt.Dur(st.Latency.P999))
		}
		tw.Flush()
	}
}

// writeClients shows each named client's latency: uneven clients fare
// differently when connections pin them to workers.
func writeClients(w io.Writer, sums []VariantSummary) {
	for _, s := range sums {
		if len(s.Clients) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nlatency by client: %s\n", s.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "client\tshare\trequests\terrors\tp50\tp99\tp99.9\t")
		for _, c := range s.Clients {
			fmt.Fprintf(tw, "%s\t%g\t%d\t%d\t%s\t%s\t%s\t\n", c.Name, c.Share, c.Requests, c.Errors,
				numfmt.Dur(c.Latency.P50), numfmt.Dur(c.Latency.P99), numfmt.Dur(c.Latency.P999))
		}
		tw.Flush()
	}
}

// writeEngineCounters shows nginx's and HAProxy's own counters per run.
func writeEngineCounters(w io.Writer, r *results.Results) {
	rows := engineRows(r)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nengine counters (per run, warm-up included)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tengine\tclient conns\trequests\tupstream conns\treused\tper worker\t")
	for _, e := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t\n", e.Run, e.Engine, e.ClientConns, e.Requests, e.UpstreamConns, e.Reused, e.PerWorker)
	}
	tw.Flush()
}

// lowerBound is ">=" for a variant whose merged runs include a saturated
// one: its percentiles are lower bounds.
func lowerBound(s VariantSummary) string {
	if len(s.Saturated) > 0 {
		return ">="
	}
	return ""
}

// writeAcross writes the 95% interval of p50, p99 and p99.9 across each
// variant's merged runs, when a variant has two or more.
func writeAcross(w io.Writer, sums []VariantSummary, width int) {
	has := false
	for _, s := range sums {
		has = has || len(s.Across) > 0
	}
	if !has {
		return
	}
	fmt.Fprintf(w, "\npercentiles across runs (95%% interval of the runs' own values, geometric)\n")
	fmt.Fprintf(w, "  %-*s  %-22s  %-22s  %-22s\n", width, "variant", "p50", "p99", "p99.9")
	for _, s := range sums {
		cell := func(name string) string {
			if c := acrossCell(s, name); c != "" {
				return c
			}
			return "-"
		}
		fmt.Fprintf(w, "  %-*s  %-22s  %-22s  %-22s\n", width, s.Name, cell(results.MetricP50), cell(results.MetricP99), cell(results.MetricP999))
	}
}

// acrossCell says a variant's 95% interval of a percentile across its
// runs, "[67.1ms, 76.3ms]", or "" with fewer than two runs.
func acrossCell(s VariantSummary, name string) string {
	ci, ok := s.Across[name]
	if !ok {
		return ""
	}
	return fmt.Sprintf("[%s, %s]", numfmt.Dur(ci[0]), numfmt.Dur(ci[1]))
}

// writeWait shows, where workers stamped their answers, how long requests
// waited before a worker began them, and for their connection.
func writeWait(w io.Writer, sums []VariantSummary, width int) {
	if !slices.ContainsFunc(sums, func(s VariantSummary) bool { return s.Wait != nil }) {
		return
	}
	fmt.Fprintf(w, "\nwait before a worker began (its stamp minus the intended send time; service excluded)\n")
	fmt.Fprintf(w, "  %-*s  %9s  %9s  %9s  %9s  %14s  %s\n", width, "variant", "p50", "p99", "p99.9", "max", "conn wait p99.9", "p99.9 by class")
	for _, s := range sums {
		if s.Wait == nil {
			fmt.Fprintf(w, "  %-*s  not measured (no worker stamp)\n", width, s.Name)
			continue
		}
		var classes []string
		for _, c := range s.Classes {
			if c.Wait != nil {
				classes = append(classes, c.Name+" "+numfmt.Dur(c.Wait.P999))
			}
		}
		conn := "-"
		if s.ConnWait != nil {
			conn = numfmt.Dur(s.ConnWait.P999)
		}
		fmt.Fprintf(w, "  %-*s  %9s  %9s  %9s  %9s  %14s  %s\n", width, s.Name, numfmt.Dur(s.Wait.P50), numfmt.Dur(s.Wait.P99),
			numfmt.Dur(s.Wait.P999), numfmt.Dur(s.Wait.Max), conn, strings.Join(classes, ", "))
	}
}

// waitRow is one variant's wait figures as the markdown and HTML tables
// show them; ok is false when its wait was not measured.
func waitRow(s VariantSummary) (cells []string, ok bool) {
	if s.Wait == nil {
		return nil, false
	}
	conn := "-"
	if s.ConnWait != nil {
		conn = numfmt.Dur(s.ConnWait.P999)
	}
	var classes []string
	for _, c := range s.Classes {
		if c.Wait != nil {
			classes = append(classes, c.Name+" "+numfmt.Dur(c.Wait.P999))
		}
	}
	p999 := numfmt.Dur(s.Wait.P999)
	if c := acrossCell(s, results.MetricWaitP999); c != "" {
		p999 += " " + c
	}
	return []string{strconv.FormatUint(s.Waited, 10), numfmt.Dur(s.Wait.P50), numfmt.Dur(s.Wait.P99), p999,
		numfmt.Dur(s.Wait.Max), conn, strings.Join(classes, ", ")}, true
}

// waitHeads are waitRow's column names.
var waitHeads = []string{"stamped", "p50", "p99", "p99.9", "max", "conn wait p99.9", "p99.9 by class"}

// writeCPU writes each variant's CPU time per request by role and the
// spread of CPU over its workers, when runs measured CPU.
func writeCPU(w io.Writer, sums []VariantSummary, width int) {
	has := false
	for _, s := range sums {
		has = has || s.CPUPerRequest != nil
	}
	if !has {
		return
	}
	fmt.Fprintf(w, "\nCPU per request (user+system time over the load, warm-up included) and workers' CPU\n")
	fmt.Fprintf(w, "  %-*s  %9s  %9s  %9s  %9s  %9s  %s\n", width, "variant", "workers", "proxy", "generator", "all", "cpu skew", "CPU share per worker")
	for _, s := range sums {
		if s.CPUPerRequest == nil {
			fmt.Fprintf(w, "  %-*s  not measured\n", width, s.Name)
			continue
		}
		cell := func(role string) string {
			if d, ok := s.CPUPerRequest[role]; ok {
				return numfmt.Dur(d)
			}
			return "-"
		}
		var total time.Duration
		for _, c := range s.WorkerCPU {
			total += c
		}
		shares := make([]string, len(s.WorkerCPU))
		for i, c := range s.WorkerCPU {
			shares[i] = "-"
			if total > 0 {
				shares[i] = strconv.FormatFloat(100*float64(c)/float64(total), 'f', 1, 64) + "%"
			}
		}
		fmt.Fprintf(w, "  %-*s  %9s  %9s  %9s  %9s  %9s  %s\n", width, s.Name, cell(results.RoleWorkers), cell(results.RoleProxy),
			cell(results.RoleGenerator), cell("all"), numfmt.Skew(s.CPUSkew), strings.Join(shares, " "))
	}
}
