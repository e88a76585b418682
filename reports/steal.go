package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/results"
)

// shownSteal is the least share of a run's CPUs' time stolen that makes
// the reports show steal: what rounds to 0.1% in them.
const shownSteal = 0.0005

// hostSteals is the host's steal during each run of r that measured it
// (results.Run.HostSteal), by run ID, and whether any run's was at least
// shownSteal. The reports show steal per run only then: outside a
// virtual machine, or on a quiet host, it is 0 (or a tick or two of
// /proc/stat, 10 ms, over a whole run) and they stay as they were
// (results.json always has it: generator.steal, server.steal).
func hostSteals(r *results.Results) (map[string]results.Steal, bool) {
	out := map[string]results.Steal{}
	any := false
	warmup := r.Scenario.Workload.WarmupTime()
	for _, run := range r.Runs {
		if st, ok := run.HostSteal(warmup); ok {
			out[run.ID] = st
			any = any || st.Share >= shownSteal
		}
	}
	return out, any
}

// stealCell is a run's steal in a table: "7.1% of 4 CPUs", or "-" when
// it was not measured.
func stealCell(steals map[string]results.Steal, id string) string {
	st, ok := steals[id]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f%% of %d CPUs", 100*st.Share, st.CPUs)
}

// stealHeading says what the steal figures are, and the threshold past
// which a run is invalid when the results record one; it follows "host"
// or "Host".
func stealHeading(r *results.Results) string {
	h := " steal by run (share of the time of the run's CPUs, the generator's and the server's, that the hypervisor gave to something else"
	if m := r.Scenario.Validity.MaxSteal; m > 0 && m < 1 {
		h += "; a run is invalid above " + strconv.FormatFloat(100*m, 'f', -1, 64) + "%"
	}
	return h + ")"
}

// stealByVariant is, per variant of r in scenario order, its runs' steal
// cells in run order.
func stealByVariant(r *results.Results, steals map[string]results.Steal) [][2]string {
	var out [][2]string
	for _, v := range r.Scenario.Variants {
		var cells []string
		for _, run := range r.RunsOf(v.Name) {
			st, ok := steals[run.ID]
			cell := "-"
			if ok {
				cell = fmt.Sprintf("%.1f%%", 100*st.Share)
			}
			cells = append(cells, cell)
		}
		out = append(out, [2]string{v.Name, strings.Join(cells, " ")})
	}
	return out
}
