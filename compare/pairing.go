package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// BuildSeparator joins a variant's name and its build in the name of a
// variant that runs another build of lbbench ("least_conn@base").
const BuildSeparator = scenario.BuildSeparator

// Pair is one candidate and the baseline it is compared with.
type Pair struct {
	// Variant labels the candidate; Baseline the baseline.
	Variant, Baseline string
	// Base and Cand are the runs of each side, invalid ones included:
	// Compare leaves those out and says how many it left out.
	Base, Cand []results.Run
	// Paired says both sides' runs were made in the same rounds of one
	// scenario (Run.Rep numbers the round), so that Compare pairs them
	// round by round; otherwise they are compared as two samples.
	Paired bool
}

// PairVariants pairs the same-named variants of two results, in cand's
// scenario order; the baseline is labelled name@base. Variants found in
// only one of them are not compared. It fails when none is shared.
func PairVariants(base, cand *results.Results) ([]Pair, error) {
	var pairs []Pair
	for _, v := range cand.Scenario.Variants {
		if !slices.ContainsFunc(base.Scenario.Variants, func(b scenario.Variant) bool { return b.Name == v.Name }) {
			continue
		}
		pairs = append(pairs, Pair{Variant: v.Name, Baseline: v.Name + BuildSeparator + "base",
			Base: base.RunsOf(v.Name), Cand: cand.RunsOf(v.Name)})
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("compare: the results share no variant name (baseline %s, candidate %s)",
			variantNames(base), variantNames(cand))
	}
	return pairs, nil
}

// PairWith pairs every other variant of r with its variant named baseline,
// in scenario order.
func PairWith(r *results.Results, baseline string) ([]Pair, error) {
	if !slices.ContainsFunc(r.Scenario.Variants, func(v scenario.Variant) bool { return v.Name == baseline }) {
		return nil, fmt.Errorf("compare: no baseline variant %q (variants: %s)", baseline, variantNames(r))
	}
	base := r.RunsOf(baseline)
	var pairs []Pair
	for _, v := range r.Scenario.Variants {
		if v.Name != baseline {
			pairs = append(pairs, Pair{Variant: v.Name, Baseline: baseline, Base: base, Cand: r.RunsOf(v.Name), Paired: true})
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("compare: %q is the only variant; nothing to compare it with", baseline)
	}
	return pairs, nil
}

// PairBuilds pairs every variant that runs another build of lbbench
// (topologies.Variant.Build, named name@build by lbbench run --baseline)
// with the variant of that name that runs this build, in scenario order.
// It returns nil when r has no such variants.
func PairBuilds(r *results.Results) []Pair {
	var pairs []Pair
	for _, b := range r.Scenario.Variants {
		if b.Build == "" {
			continue
		}
		name, ok := strings.CutSuffix(b.Name, BuildSeparator+b.Build)
		if !ok {
			continue
		}
		for _, c := range r.Scenario.Variants {
			if c.Name == name && c.Build == "" {
				pairs = append(pairs, Pair{Variant: c.Name, Baseline: b.Name, Base: r.RunsOf(b.Name), Cand: r.RunsOf(c.Name), Paired: true})
			}
		}
	}
	return pairs
}

func variantNames(r *results.Results) string {
	names := make([]string, len(r.Scenario.Variants))
	for i, v := range r.Scenario.Variants {
		names[i] = v.Name
	}
	return "[" + strings.Join(names, ", ") + "]"
}
