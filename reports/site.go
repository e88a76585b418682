package reports

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/results"
)

//go:embed index.html.tmpl
var indexTemplate string

var indexTmpl = template.Must(template.New("index").Funcs(template.FuncMap{
	"css": func() template.CSS { return template.CSS(reportCSS) },
}).Parse(indexTemplate))

// ResultsFileName is the name of a results file in a run's directory.
const ResultsFileName = "results.json"

// SiteEntry is one run of a published site.
type SiteEntry struct {
	// Dir is the entry's directory inside the site; its report is
	// Dir/report.html.
	Dir string `json:"dir"`
	// Source is the results file it was built from.
	Source string `json:"source"`
	// Started is when the scenario started; Scenario its name.
	Started  time.Time `json:"started"`
	Scenario string    `json:"scenario"`
	// Commit is the lbbench commit that produced the results.
	Commit string `json:"commit"`
	// Variants, Runs and Valid count what the results hold.
	Variants []string `json:"variants"`
	Runs     int      `json:"runs"`
	Valid    int      `json:"valid"`
	Complete bool     `json:"complete"`
	// Pass, Fail and Inconclusive count verdicts, when there are any.
	Verdicts     int `json:"verdicts"`
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	Inconclusive int `json:"inconclusive"`
}

// Site is what Publish wrote.
type Site struct {
	// Entries are the published runs, newest first.
	Entries []SiteEntry `json:"entries"`
	// Skipped lists results files that could not be published, with why.
	Skipped []string `json:"skipped,omitempty"`
}

// Publish turns every results file under root (root/results.json or any
// */results.json below it, hidden directories and site itself excluded)
// into a static site in site: one directory per run with its report.html,
// exports and a copy of results.json (and verdicts.json when one lies
// beside the results), and an index.html listing the runs newest first
// with date, scenario, commit and verdicts, plus index.json for tools.
// Each run's Doc is built by newDoc (job.Report). Every link is
// relative, so the site works from any static host or from
// the file system. A results file that cannot be read is skipped and
// reported in Site.Skipped; finding none at all is an error.
func Publish(root, site string, newDoc DocFunc) (*Site, error) {
	absSite, err := filepath.Abs(site)
	if err != nil {
		return nil, fmt.Errorf("reports: site %s: %w", site, err)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(path)
			if abs == absSite || (path != root && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == ResultsFileName {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reports: publish: %w", err)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("reports: publish: no %s under %s", ResultsFileName, root)
	}
	out := &Site{}
	names := fileNamer{}
	for _, path := range found {
		e, err := publishOne(root, site, path, names, newDoc)
		if err != nil {
			out.Skipped = append(out.Skipped, path+": "+err.Error())
			continue
		}
		out.Entries = append(out.Entries, e)
	}
	slices.SortStableFunc(out.Entries, func(a, b SiteEntry) int { return b.Started.Compare(a.Started) })
	var buf bytes.Buffer
	if err := indexTmpl.Execute(&buf, out); err != nil {
		return nil, fmt.Errorf("reports: render index: %w", err)
	}
	if err := files.Write(filepath.Join(site, "index.html"), buf.Bytes()); err != nil {
		return nil, err
	}
	idx, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("reports: encode index: %w", err)
	}
	if err := files.Write(filepath.Join(site, "index.json"), append(idx, '\n')); err != nil {
		return nil, err
	}
	return out, nil
}

func publishOne(root, site, path string, names fileNamer, newDoc DocFunc) (SiteEntry, error) {
	r, err := results.ReadFile(path)
	if err != nil {
		return SiteEntry{}, err
	}
	dir := filepath.Dir(path)
	vs, err := compare.ReadVerdicts(filepath.Join(dir, compare.VerdictsFileName))
	if err != nil {
		return SiteEntry{}, err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		rel = filepath.Base(dir)
	}
	slug := names.name(strings.ReplaceAll(filepath.ToSlash(rel), "/", "-"))
	dst := filepath.Join(site, slug)
	d, err := newDoc(r, vs)
	if err != nil {
		return SiteEntry{}, err
	}
	if _, err := WriteDir(dst, d); err != nil {
		return SiteEntry{}, err
	}
	for _, name := range []string{ResultsFileName, compare.VerdictsFileName} {
		data, err := files.Read(filepath.Join(dir, name), results.MaxFileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = files.Write(filepath.Join(dst, name), data)
		}
		if err != nil {
			return SiteEntry{}, err
		}
	}
	e := SiteEntry{Dir: slug, Source: path, Started: r.Started, Scenario: r.Scenario.Name, Commit: r.Env.Commit,
		Runs: len(r.Runs), Complete: r.Complete, Verdicts: len(vs)}
	for _, v := range r.Scenario.Variants {
		e.Variants = append(e.Variants, v.Name)
	}
	for _, run := range r.Runs {
		if run.Valid {
			e.Valid++
		}
	}
	e.Pass, e.Fail, e.Inconclusive = compare.CountOutcomes(vs)
	return e, nil
}
