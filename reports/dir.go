package reports

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/internal/atomicfile"
	"github.com/lbbench/lbbench/results"
)

// The files WriteDir writes, relative to its directory.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "summary.md"
	CSVFile      = "summary.csv"
	JUnitFile    = "junit.xml"
	// HgrmDir holds one .hgrm per variant and per variant and class.
	HgrmDir = "hgrm"
	// HlogDir holds one .hlog interval log per run that has intervals.
	HlogDir = "hlog"
)

// WriteDir writes the HTML report and every export for r into dir:
// report.html, summary.md, summary.csv, hgrm/<variant>.hgrm (and
// hgrm/<variant>.<class>.hgrm), hlog/<run>.hlog when runs carry interval
// histograms, and junit.xml when verdicts are given. Each file is written
// atomically. It returns the paths written.
func WriteDir(dir string, r *results.Results, opts ...Option) ([]string, error) {
	o := collect(opts)
	var written []string
	write := func(name string, render func(*bytes.Buffer) error) error {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		if err := atomicfile.Write(path, buf.Bytes()); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	err := errors.Join(
		write(HTMLFile, func(b *bytes.Buffer) error { return WriteHTML(b, r, opts...) }),
		write(MarkdownFile, func(b *bytes.Buffer) error { return WriteMarkdown(b, r, o.verdicts) }),
		write(CSVFile, func(b *bytes.Buffer) error { return WriteCSV(b, r) }),
	)
	if err != nil {
		return written, err
	}
	if len(o.verdicts) > 0 {
		if err := write(JUnitFile, func(b *bytes.Buffer) error { return WriteJUnit(b, r.Scenario.Name, o.verdicts) }); err != nil {
			return written, err
		}
	}
	sums, err := Summarize(r)
	if err != nil {
		return written, err
	}
	names := fileNamer{}
	for _, s := range sums {
		base := names.name(s.Name)
		if err := write(filepath.Join(HgrmDir, base+".hgrm"), func(b *bytes.Buffer) error {
			return WriteHgrm(b, s.Histogram, o.unitRatio)
		}); err != nil {
			return written, err
		}
		for _, c := range s.Classes {
			if err := write(filepath.Join(HgrmDir, names.name(s.Name+"\x00"+c.Name)+".hgrm"), func(b *bytes.Buffer) error {
				return WriteHgrm(b, c.Histogram, o.unitRatio)
			}); err != nil {
				return written, err
			}
		}
	}
	for _, run := range r.Runs {
		if len(run.Intervals) == 0 {
			continue
		}
		if err := write(filepath.Join(HlogDir, names.name(run.ID)+".hlog"), func(b *bytes.Buffer) error {
			return WriteIntervalLog(b, run, r.Scenario)
		}); err != nil {
			return written, err
		}
	}
	return written, nil
}

// fileNamer turns names from results into distinct, safe file names.
type fileNamer map[string]string

// name returns a file name for key made of letters, digits, '-', '_' and
// '.', never starting with '.', and distinct from every name returned
// before for another key. A NUL in key separates parts, joined with '.'.
func (n fileNamer) name(key string) string {
	if s, ok := n[key]; ok {
		return s
	}
	parts := strings.Split(key, "\x00")
	for i, p := range parts {
		parts[i] = safeName(p)
	}
	base := strings.Join(parts, ".")
	s := base
	for k := 2; n.taken(s); k++ {
		s = base + "-" + strconv.Itoa(k)
	}
	n[key] = s
	return s
}

func (n fileNamer) taken(s string) bool {
	for _, v := range n {
		if v == s {
			return true
		}
	}
	return false
}

// safeName keeps letters, digits, '-' and '_' of s, replacing the rest by
// '_'; an empty result becomes "_".
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// Combine merges several results into one report's worth: the runs of
// every source side by side, as variants of one scenario. When a variant
// name appears in more than one source, every variant is renamed
// "label/name" (and its runs "label/id") so that they stay apart. The
// scenario and environment are the first source's; pass the sources to
// WriteHTML with WithSources to show every environment.
func Combine(srcs []Source) (*results.Results, error) {
	if len(srcs) == 0 {
		return nil, errors.New("reports: no results to combine")
	}
	if len(srcs) == 1 {
		return srcs[0].Results, nil
	}
	seen := map[string]int{}
	collide := false
	for i, s := range srcs {
		if s.Results == nil {
			return nil, fmt.Errorf("reports: source %d (%s) has no results", i, s.Path)
		}
		for _, v := range s.Results.Scenario.Variants {
			if j, ok := seen[v.Name]; ok && j != i {
				collide = true
			}
			seen[v.Name] = i
		}
	}
	first := srcs[0].Results
	out := &results.Results{Schema: first.Schema, Scenario: first.Scenario, Env: first.Env,
		Started: first.Started, Finished: first.Finished, Complete: true}
	out.Scenario.Variants = nil
	out.Scenario.Repeat = 0
	var errs []string
	labels := map[string]bool{}
	for _, s := range srcs {
		r := s.Results
		if labels[s.Label] && collide {
			return nil, fmt.Errorf("reports: two sources labelled %q; their variants would mix", s.Label)
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
