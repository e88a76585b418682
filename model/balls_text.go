package model

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// tailCutoff is the smallest P(max = k) WriteBallsText shows on a row of its
// own; the rest of the tail is summed on one row.
const tailCutoff = 1e-9

// WriteBallsText writes r as terminal tables: the headline probabilities
// per dispatcher, their exact fractions, and the distribution of the
// largest load.
func WriteBallsText(w io.Writer, r *BallsResult) error {
	s := r.Spec
	k := s.AtLeast
	fmt.Fprintf(w, "%d tasks arrive together at %d single-task workers; each dispatcher places every task on one worker\n", s.Tasks, s.Workers)
	fmt.Fprintf(w, "exact figures are exact; simulated ones show a 95%% confidence interval [low, high]\n\n")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dispatch\tP(a given worker gets >= %d)\tP(some worker gets >= %d)\tmean max load\n", k, k)
	for _, d := range r.Dispatch {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", dispatchLabel(d), probCell(d.Given), probCell(d.Some), probCell(d.MeanMax))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nexact fractions (random dispatch)\n")
	for _, d := range r.Dispatch {
		if d.Name != DispatchRandom {
			continue
		}
		fmt.Fprintf(w, "  P(given worker >= %d) = %s\n", k, d.Given.Exact)
		fmt.Fprintf(w, "  P(some worker >= %d)  = %s\n", k, d.Some.Exact)
		fmt.Fprintf(w, "  E[max load]          = %s\n", d.MeanMax.Exact)
	}

	fmt.Fprintf(w, "\ndistribution of the largest load, P(max load = k)\n")
	lo, hi := maxLoadRows(r)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(first string, cells func(d DispatchResult) string) {
		parts := []string{first}
		for _, d := range r.Dispatch {
			parts = append(parts, cells(d))
		}
		fmt.Fprintln(tw, strings.Join(parts, "\t"))
	}
	row("k", dispatchLabel)
	for j := lo; j <= hi; j++ {
		row(strconv.Itoa(j), func(d DispatchResult) string { return probCell(d.MaxLoad[j]) })
	}
	if hi < s.Tasks {
		row("> "+strconv.Itoa(hi), func(d DispatchResult) string {
			var tail float64
			for _, p := range d.MaxLoad[hi+1:] {
				tail += p.Value
			}
			return num(tail)
		})
	}
	return tw.Flush()
}

// maxLoadRows returns the range of k worth a row: from the smallest k any
// dispatcher reaches to the largest with a probability of at least
// tailCutoff (or any simulated occurrence).
func maxLoadRows(r *BallsResult) (lo, hi int) {
	lo, hi = r.Spec.Tasks, 0
	for _, d := range r.Dispatch {
		for j, p := range d.MaxLoad {
			if p.Value > 0 {
				lo = min(lo, j)
			}
			if p.Value >= tailCutoff || (d.Simulated && p.Value > 0) {
				hi = max(hi, j)
			}
		}
	}
	return lo, max(hi, lo)
}

func dispatchLabel(d DispatchResult) string {
	if d.Simulated {
		return fmt.Sprintf("%s (simulated, %d trials)", d.Name, d.Trials)
	}
	return d.Name + " (exact)"
}

// probCell formats a figure: exact ones as a number, simulated ones with
// their interval.
func probCell(p Prob) string {
	if p.Exact != "" || (p.Low == 0 && p.High == 0 && p.Value == 0) {
		return num(p.Value)
	}
	return num(p.Value) + " [" + num(p.Low) + ", " + num(p.High) + "]"
}

// num formats a probability or a mean with about four significant digits.
func num(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x == float64(int64(x)) && x < 1e6:
		return strconv.FormatInt(int64(x), 10)
	case x >= 1e-4:
		s := strconv.FormatFloat(x, 'f', 6, 64)
		return strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return strconv.FormatFloat(x, 'e', 3, 64)
}
