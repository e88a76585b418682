package selftest

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/stats"
)

// Figures are a self-benchmark's results reduced to what it answers.
type Figures struct {
	// Target names the generators' target.
	Target string
	// Rates has a row per open-loop rate.
	Rates []RateRow
	// Wrk is wrk's closed loop, when it ran.
	Wrk *WrkRow
	// ServerRate is the rate of Servers' runs.
	ServerRate int
	// Servers has a row per server.
	Servers []ServerRow
}

// RateRow compares the generators at one rate: medians over the rounds.
type RateRow struct {
	Rate int
	// Lbbench and Vegeta are CPU time per request (vegeta's zero when it
	// did not run).
	Lbbench, Vegeta time.Duration
	// Ratio is lbbench's over vegeta's CPU per request: the geometric
	// mean over the rounds' ratios, with its skew-safe 95% interval
	// (NaN with fewer than 3 rounds).
	Ratio, Low, High float64
	// SendLagP99 is lbbench's send lag p99; P99s the latency p99s
	// (lbbench's from each request's intended send, vegeta's from its
	// actual send).
	SendLagP99                  time.Duration
	LbbenchP99, VegetaP99       time.Duration
	LbbenchRSS, VegetaRSS       int64
	LbbenchRate, VegetaRate     float64 // achieved requests per second
	LbbenchErrors, VegetaErrors uint64
}

// WrkRow is wrk's closed-loop ceiling: medians over the rounds.
type WrkRow struct {
	Rate float64
	CPU  time.Duration // per request
}

// ServerRow is one server's CPU time per request: median, least and most
// over the rounds.
type ServerRow struct {
	Name        string
	Median      time.Duration
	Least, Most time.Duration
	Rounds      int
}

// Reduce reduces a self-benchmark's runs to its figures.
func Reduce(res *results.Results) Figures {
	f := Figures{}
	by := map[string][]results.Run{}
	for _, r := range res.Runs {
		by[r.Variant] = append(by[r.Variant], r)
		if strings.HasPrefix(r.Variant, ToolLbbench+"@") && f.Target == "" {
			f.Target = r.Entry
		}
	}
	for _, v := range res.Scenario.Variants {
		tool, rateS, ok := strings.Cut(v.Name, "@")
		rate, err := strconv.Atoi(rateS)
		if !ok || err != nil {
			continue
		}
		switch tool {
		case ToolLbbench:
			f.Rates = append(f.Rates, rateRow(rate, by[v.Name], by[variant(ToolVegeta, rate)]))
		case ServerBuiltin0, ServerBuiltin2, ServerNginx:
			f.ServerRate = rate
			if row, ok := serverRow(tool, by[v.Name]); ok {
				f.Servers = append(f.Servers, row)
			}
		}
	}
	if runs := by[ToolWrk]; len(runs) > 0 {
		var rate, cpu []float64
		for _, r := range runs {
			rate = append(rate, r.AchievedRate)
			cpu = append(cpu, perRequest(r, results.RoleGenerator))
		}
		f.Wrk = &WrkRow{Rate: stats.Median(rate), CPU: time.Duration(stats.Median(cpu))}
	}
	return f
}

// perRequest is a run's CPU time of role per request, in ns (NaN
// without one).
func perRequest(r results.Run, role string) float64 {
	ns, why := r.CPUPerRequest(role)
	if why != "" {
		return math.NaN()
	}
	return ns
}

func rateRow(rate int, lb, veg []results.Run) RateRow {
	row := RateRow{Rate: rate, Ratio: math.NaN(), Low: math.NaN(), High: math.NaN()}
	med := func(runs []results.Run, f func(results.Run) float64) float64 {
		var x []float64
		for _, r := range runs {
			x = append(x, f(r))
		}
		if len(x) == 0 {
			return 0
		}
		return stats.Median(x)
	}
	cpu := func(r results.Run) float64 { return perRequest(r, results.RoleGenerator) }
	row.Lbbench = time.Duration(med(lb, cpu))
	row.Vegeta = time.Duration(med(veg, cpu))
	row.SendLagP99 = time.Duration(med(lb, func(r results.Run) float64 {
		if r.SendLag == nil {
			return math.NaN()
		}
		return float64(r.SendLag.Quantile(0.99))
	}))
	row.LbbenchP99 = time.Duration(med(lb, func(r results.Run) float64 { return float64(r.Summary.P99) }))
	row.VegetaP99 = time.Duration(med(veg, func(r results.Run) float64 { return float64(r.Summary.P99) }))
	row.LbbenchRSS = int64(med(lb, func(r results.Run) float64 { return float64(r.Generator.MaxRSS) }))
	row.VegetaRSS = int64(med(veg, func(r results.Run) float64 { return float64(r.Generator.MaxRSS) }))
	row.LbbenchRate = med(lb, func(r results.Run) float64 { return r.AchievedRate })
	row.VegetaRate = med(veg, func(r results.Run) float64 { return r.AchievedRate })
	for _, r := range lb {
		row.LbbenchErrors += r.Errors
	}
	for _, r := range veg {
		row.VegetaErrors += r.Errors
	}
	// Pair the rounds: lbbench's and vegeta's runs of the same round.
	vegOf := map[int]results.Run{}
	for _, r := range veg {
		vegOf[r.Rep] = r
	}
	var logs []float64
	for _, r := range lb {
		v, ok := vegOf[r.Rep]
		if !ok {
			continue
		}
		a, b := cpu(r), cpu(v)
		if a > 0 && b > 0 {
			logs = append(logs, math.Log(a/b))
		}
	}
	if len(logs) > 0 {
		mean, ci := stats.SkewSafeMean(logs, 0, 0.025)
		row.Ratio, row.Low, row.High = math.Exp(mean), math.Exp(ci.Low), math.Exp(ci.High)
	}
	return row
}

func serverRow(name string, runs []results.Run) (ServerRow, bool) {
	var x []float64
	for _, r := range runs {
		if ns := perRequest(r, results.RoleWorkers); !math.IsNaN(ns) {
			x = append(x, ns)
		}
	}
	if len(x) == 0 {
		return ServerRow{}, false
	}
	return ServerRow{
		Name:   name,
		Median: time.Duration(stats.Median(x)),
		Least:  time.Duration(slices.Min(x)),
		Most:   time.Duration(slices.Max(x)),
		Rounds: len(x),
	}, true
}

// serverLabel says what a server row measured.
var serverLabel = map[string]string{
	ServerBuiltin0: "built-in worker, no service",
	ServerBuiltin2: "built-in worker, 2 ms service (a sleep)",
	ServerNginx:    "nginx, one worker, return 200",
}

// Text writes f as the terminal's tables.
func Text(w io.Writer, f Figures) error {
	us := func(d time.Duration) string {
		if d <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64)
	}
	ms := func(d time.Duration) string {
		if d <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64)
	}
	mb := func(b int64) string {
		if b <= 0 {
			return "-"
		}
		return strconv.FormatInt(b>>20, 10)
	}
	fmt.Fprintf(w, "generators, open loop against %s (medians over the rounds; CPU of the whole attack process, user + system):\n", f.Target)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate/s\tlbbench µs/req\tvegeta µs/req\tratio [95%]\tlbbench send-lag p99 ms\tlbbench p99 ms\tvegeta p99 ms\tlbbench RSS MB\tvegeta RSS MB\tachieved/s (lbbench, vegeta)\t")
	for _, r := range f.Rates {
		ratio := "-"
		if !math.IsNaN(r.Ratio) {
			ratio = fmt.Sprintf("%.2f [%.2f, %.2f]", r.Ratio, r.Low, r.High)
			if math.IsInf(r.Low, 0) || math.IsNaN(r.Low) {
				ratio = fmt.Sprintf("%.2f [3+ rounds]", r.Ratio)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f, %.0f\t\n", r.Rate, us(r.Lbbench), us(r.Vegeta), ratio,
			ms(r.SendLagP99), ms(r.LbbenchP99), ms(r.VegetaP99), mb(r.LbbenchRSS), mb(r.VegetaRSS), r.LbbenchRate, r.VegetaRate)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(ratio: lbbench's CPU per request over vegeta's, paired by round; latency p99 is lbbench's from each request's intended send, vegeta's from its actual send)")
	if f.Wrk != nil {
		fmt.Fprintf(w, "wrk, closed loop (1 thread, 32 connections): %.0f requests/s, %s µs of CPU a request\n", f.Wrk.Rate, us(f.Wrk.CPU))
	}
	if len(f.Servers) > 0 {
		fmt.Fprintf(w, "\nservers at %d requests/s open loop (CPU of the server's processes per request; median [least, most] over the rounds):\n", f.ServerRate)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range f.Servers {
			fmt.Fprintf(tw, "  %s\t%s µs\t[%s, %s]\n", serverLabel[s.Name], us(s.Median), us(s.Least), us(s.Most))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
