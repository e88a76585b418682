package harness

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// generatorBusy is the share of its CPUs past which the generator is taken
// to have been the limit of a run: CPU time over the run's time, per CPU
// it could use.
const generatorBusy = 0.9

// judge fills run's validity from its measurement (measurement.md, "Who
// fell behind: generator or target"). A run whose sends were late or too
// few is invalid when the generator was the limit: it had free in-flight
// slots, or its CPU was used up, or it shared the server's CPUs and took
// what a target that alone would have kept up needed (crowdedOut). When
// instead the in-flight cap was reached (requests waited for a slot, or
// were never sent) and the generator had CPU to spare, the target could
// not keep up: the run is a
// valid measurement of a saturated target, marked so, its percentiles
// lower bounds. A run in which every request failed is invalid for
// latency: its histograms hold only errors. Whatever its figures, a run
// is invalid when another lbbench run was running on the host meanwhile
// (run.Concurrent, unless v.AllowConcurrent), or when the host stole more
// than v.MaxSteal of the time of the CPUs it used (run.HostSteal, beyond
// what the steal counter's tick can add: Steal.Least): these
// reasons come first, as the likely cause of any other.
func judge(run *results.Run, v scenario.Validity, warmup time.Duration) {
	run.Valid = true
	invalid := func(format string, args ...any) {
		run.Valid = false
		run.Invalid = append(run.Invalid, fmt.Sprintf(format, args...))
	}
	if len(run.Concurrent) > 0 && !v.AllowConcurrent {
		invalid("another lbbench run was running on this host during the load (%s): this run measured a shared machine (validity.allow_concurrent keeps such runs)", strings.Join(run.Concurrent, "; "))
	}
	maxSteal := v.MaxSteal
	if maxSteal == 0 {
		maxSteal = scenario.DefaultMaxSteal
	}
	if st, ok := run.HostSteal(warmup); ok && maxSteal < 1 && st.Least > maxSteal {
		invalid("the host stole %s, more than the threshold of %s%%: the machine measured was not there the whole time", st, strconv.FormatFloat(100*maxSteal, 'f', -1, 64))
	}
	if run.Requests == 0 {
		invalid("no measured requests")
	}
	if run.Unmapped > 0 {
		invalid("%d results could not be mapped to their intended send time", run.Unmapped)
	}
	if run.Requests > 0 && run.Errors == run.Requests {
		invalid("every one of the %d measured requests failed (%s): nothing to measure latency on", run.Requests, results.ErrorKindsString(run.ErrorKinds))
	}
	g := run.Generator
	capped := g.Held > 0 || g.Unsent > 0
	cpuBound, cpuWhy := generatorCPUBound(run, warmup)
	if !cpuBound {
		cpuBound, cpuWhy = crowdedOut(run)
	}
	saturated := capped && !cpuBound
	behind := func(what string) {
		switch {
		case saturated:
			run.Saturated = fmt.Sprintf("%s: the target could not keep up (%d requests waited at the generator's cap of %d in flight, %d never sent; the generator had CPU to spare)",
				what, g.Held, g.MaxInFlight, g.Unsent)
		case cpuBound:
			invalid("%s: the generator fell behind (%s)%s", what, cpuWhy, stealNote(run, warmup))
		default:
			invalid("%s: the generator fell behind (it had free in-flight slots, yet sent late)%s", what, stealNote(run, warmup))
		}
	}
	if run.IntendedRate > 0 {
		if e := 1 - run.AchievedRate/run.IntendedRate; e > v.MaxRateError {
			behind(fmt.Sprintf("achieved rate %.1f/s is %.1f%% below intended %.1f/s (tolerance %.1f%%)",
				run.AchievedRate, 100*e, run.IntendedRate, 100*v.MaxRateError))
		}
	}
	if run.Requests > 0 && run.SendLag != nil {
		if p99 := run.SendLag.Quantile(0.99); p99 > v.MaxSendLagP99 {
			behind(fmt.Sprintf("send lag p99 %s exceeds %s", p99, v.MaxSendLagP99))
		}
	}
	if capped && run.Saturated == "" && run.Valid {
		// The cap was reached briefly, without distorting the sends.
		run.Saturated = fmt.Sprintf("%d requests waited at the generator's cap of %d in flight", g.Held, g.MaxInFlight)
	}
}

// generatorCPUBound says whether the generator used up its CPUs during
// the run: its CPU time over the run's time (warmup included) at least
// generatorBusy of the CPUs it could use. Unknown (results without
// Generator.CPUs) counts as not bound.
func generatorCPUBound(run *results.Run, warmup time.Duration) (bool, string) {
	g := run.Generator
	wall := run.Duration + warmup
	if g.CPUs <= 0 || wall <= 0 {
		return false, ""
	}
	used := g.CPU.Seconds() / wall.Seconds() / float64(g.CPUs)
	if used < generatorBusy {
		return false, ""
	}
	return true, fmt.Sprintf("its CPU time was %.0f%% of its %d CPUs over the run", 100*used, g.CPUs)
}

// crowdedOut says whether the generator, sharing the server's CPUs (local
// processes, containers on this host, a pod on a server's node), took
// the CPU the target needed: at the intended rate the generator and the
// target together would have needed at least generatorBusy of those CPUs,
// while the target alone would have needed less. Such a target was not
// past its own capacity, and calling it saturated would charge it with
// the generator's cost. The demands are each side's CPU per request sent
// (warm-up included) times the intended rate, so a run that fell behind
// is judged by what its schedule asked for, not by what it managed.
func crowdedOut(run *results.Run) (bool, string) {
	if run.Server == nil || run.Server.CPUs <= 0 || run.IntendedRate <= 0 || !sharesServerCPUs(run) {
		return false, ""
	}
	all, why := run.CPUPerRequest("all")
	gen, _ := run.CPUPerRequest(results.RoleGenerator)
	if why != "" || all-gen <= 0 {
		return false, ""
	}
	// CPUs busy at the intended rate, as a share of the server's.
	need := func(ns float64) float64 { return ns / 1e9 * run.IntendedRate / float64(run.Server.CPUs) }
	both, alone := need(all), need(all-gen)
	if both < generatorBusy || alone >= generatorBusy {
		return false, ""
	}
	return true, fmt.Sprintf("it shared the server's %d CPUs and took what the target needed: at the intended rate the two would have needed %.0f%% of them, the target alone %.0f%%",
		run.Server.CPUs, 100*both, 100*alone)
}

// sharesServerCPUs says whether the generator ran on the server's host:
// always for local processes and containers, on a cluster when a
// generator's pod was on a server pod's node.
func sharesServerCPUs(run *results.Run) bool {
	if len(run.Pods) == 0 {
		return true
	}
	servers := map[string]bool{}
	for _, p := range run.Pods {
		if p.Role == results.PodServer {
			servers[p.Node] = true
		}
	}
	for _, p := range run.Pods {
		if p.Role == results.PodGenerator && servers[p.Node] {
			return true
		}
	}
	return false
}

// stealNote says, for a run the generator fell behind in, how much of its
// CPUs' time the hypervisor gave to something else (Generator.Steal): on a
// virtual machine that delays sends as a busy CPU does, and no process's
// CPU time shows it. Empty when none was measured.
func stealNote(run *results.Run, warmup time.Duration) string {
	g := run.Generator
	wall := run.Duration + warmup
	if g.Steal <= 0 || wall <= 0 {
		return ""
	}
	note := fmt.Sprintf("; the hypervisor took %s of its CPUs' time meanwhile (steal", g.Steal.Round(time.Millisecond))
	if g.CPUs > 0 {
		note += fmt.Sprintf(", %.1f%% of %d CPUs", 100*g.Steal.Seconds()/wall.Seconds()/float64(g.CPUs), g.CPUs)
	}
	return note + ")"
}
