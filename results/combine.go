package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Source is one results file that went into a report.
type Source struct {
	// Label prefixes the source's variant names when names collide.
	Label string
	// Path is where the results were read from.
	Path string
	// Results are the results as read.
	Results *Results
}

// Combine merges several results into one report's worth (beside the
// other merges: MergeRuns, Measurement.Merge): the runs of every source
// side by side, as variants of one scenario. When a variant
// name appears in more than one source, every variant is renamed
// "label/name" (and its runs "label/id") so that they stay apart. The
// scenario and environment are the first source's; a report given the
// sources shows every environment.
func Combine(srcs []Source) (*Results, error) {
	if len(srcs) == 0 {
		return nil, errors.New("results: no results to combine")
	}
	if len(srcs) == 1 {
		return srcs[0].Results, nil
	}
	seen := map[string]int{}
	collide := false
	for i, s := range srcs {
		if s.Results == nil {
			return nil, fmt.Errorf("results: source %d (%s) has no results", i, s.Path)
		}
		for _, v := range s.Results.Scenario.Variants {
			if j, ok := seen[v.Name]; ok && j != i {
				collide = true
			}
			seen[v.Name] = i
		}
	}
	first := srcs[0].Results
	for _, src := range srcs[1:] {
		if src.Results.Scenario.Workload.Deterministic() != first.Scenario.Workload.Deterministic() {
			return nil, fmt.Errorf("results: %s and %s: closed-loop results (latency as response time, hiding queueing) cannot be shown beside open-loop ones; report them apart", srcs[0].Path, src.Path)
		}
	}
	schema := first.Schema // the oldest source's: what a missing field means in all of them
	for _, src := range srcs[1:] {
		schema = min(schema, src.Results.Schema)
	}
	out := &Results{Schema: schema, Scenario: first.Scenario, Env: first.Env,
		Started: first.Started, Finished: first.Finished, Complete: true}
	out.Scenario.Variants = nil
	out.Scenario.Repeat = 0
	// Claims name one scenario's variants; side by side they are judged
	// per source (lbbench report --claims), not here.
	out.Scenario.Claims = nil
	var errs []string
	labels := map[string]bool{}
	for _, s := range srcs {
		r := s.Results
		if labels[s.Label] && collide {
			return nil, fmt.Errorf("results: two sources labelled %q; their variants would mix", s.Label)
		}
		labels[s.Label] = true
		rename := func(name string) string {
			if collide {
				return s.Label + "/" + name
			}
			return name
		}
		for _, v := range r.Scenario.Variants {
			v.Name = rename(v.Name)
			out.Scenario.Variants = append(out.Scenario.Variants, v)
		}
		out.Scenario.Repeat = max(out.Scenario.Repeat, r.Scenario.Repeat)
		for _, id := range r.Order {
			out.Order = append(out.Order, rename(id))
		}
		for _, run := range r.Runs {
			run.ID, run.Variant = rename(run.ID), rename(run.Variant)
			out.Runs = append(out.Runs, run)
		}
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		if r.Finished.After(out.Finished) {
			out.Finished = r.Finished
		}
		out.Complete = out.Complete && r.Complete
		if r.Error != "" {
			errs = append(errs, s.Label+": "+r.Error)
		}
	}
	out.Error = strings.Join(errs, "; ")
	var names []string
	for _, s := range srcs {
		if n := s.Results.Scenario.Name; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	out.Scenario.Name = strings.Join(names, " + ")
	return out, nil
}
