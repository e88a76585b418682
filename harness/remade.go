package harness

import (
	"strings"

	"github.com/lbbench/lbbench/results"
)

// The causes Remade counts a run made again under: the reasons judge
// gives for what WithRetries is for, each named by words its message
// holds.
const (
	// CauseNeighbour: another lbbench run was running on the host.
	CauseNeighbour = "another lbbench run on the host"
	// CauseSteal: the host stole more than validity.max_steal of the
	// run's CPUs' time.
	CauseSteal = "host steal"
	// CauseBehind: the generator fell behind its schedule.
	CauseBehind = "generator fell behind"
)

// causes maps words of judge's messages to the cause they name, in the
// order judge gives its reasons: the first reason of a run that names one
// is the run's cause.
var causes = []struct{ words, cause string }{
	{"another lbbench run was running on this host", CauseNeighbour},
	{"the host stole", CauseSteal},
	{"the generator fell behind", CauseBehind},
}

// Cause is the short cause of invalid run r: CauseNeighbour, CauseSteal
// or CauseBehind for the first of its reasons that names one, else its
// first reason as it is ("" for a valid run).
func Cause(r results.Run) string {
	for _, why := range r.Invalid {
		for _, c := range causes {
			if strings.Contains(why, c.words) {
				return c.cause
			}
		}
	}
	if len(r.Invalid) > 0 {
		return r.Invalid[0]
	}
	return ""
}

// Remade counts the runs of res that WithRetries made again, by Cause:
// every attempt of a run (a variant in a round) but its last, in the
// order they ran. Nil when none was.
func Remade(res *results.Results) map[string]int {
	type slot struct {
		variant string
		round   int
	}
	last := map[slot]int{} // the index of each slot's last attempt
	for i, r := range res.Runs {
		last[slot{r.Variant, r.Rep}] = i
	}
	var out map[string]int
	for i, r := range res.Runs {
		if last[slot{r.Variant, r.Rep}] == i {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[Cause(r)]++
	}
	return out
}
