package reports

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/internal/files"
)

// The files WriteDir writes, relative to its directory.
const (
	HTMLFile     = "report.html"
	markdownFile = "summary.md"
	csvFile      = "summary.csv"
	JUnitFile    = "junit.xml"
	// hgrmDir holds one .hgrm per variant and per variant and class.
	hgrmDir = "hgrm"
	// hlogDir holds one .hlog interval log per run that has intervals.
	hlogDir = "hlog"
)

// WriteDir writes the HTML report and every export of d into dir:
// report.html, summary.md, summary.csv, hgrm/<variant>.hgrm (and
// hgrm/<variant>.<class>.hgrm), hlog/<run>.hlog when runs carry interval
// histograms, and junit.xml when d has verdicts or judged claims. Each
// file is written atomically. It returns the paths written.
func WriteDir(dir string, d *Doc) ([]string, error) {
	r := d.Results
	files := &fileSet{dir: dir}
	write := files.write
	err := errors.Join(
		write(HTMLFile, func(b *bytes.Buffer) error { return writeHTML(b, d) }),
		write(markdownFile, func(b *bytes.Buffer) error { return writeMarkdown(b, d) }),
		write(csvFile, func(b *bytes.Buffer) error { return writeCSV(b, d) }),
	)
	if err != nil {
		return files.written, err
	}
	if len(d.Verdicts) > 0 || len(d.Claims) > 0 {
		if err := write(JUnitFile, func(b *bytes.Buffer) error {
			return writeJUnitWithClaims(b, r.Scenario.Name, d.Verdicts, d.Claims, runTimes(r.Runs, d.Verdicts))
		}); err != nil {
			return files.written, err
		}
	}
	names := fileNamer{}
	for _, s := range d.Summaries {
		base := names.name(s.Name)
		if err := write(filepath.Join(hgrmDir, base+".hgrm"), func(b *bytes.Buffer) error {
			return writeHistogramHgrm(b, s.Histogram, d.UnitRatio)
		}); err != nil {
			return files.written, err
		}
		for _, c := range s.Classes {
			if err := write(filepath.Join(hgrmDir, names.name(s.Name+"\x00"+c.Name)+".hgrm"), func(b *bytes.Buffer) error {
				return writeHistogramHgrm(b, c.Histogram, d.UnitRatio)
			}); err != nil {
				return files.written, err
			}
		}
	}
	for _, run := range r.Runs {
		if len(run.Intervals) == 0 {
			continue
		}
		if err := write(filepath.Join(hlogDir, names.name(run.ID)+".hlog"), func(b *bytes.Buffer) error {
			return writeIntervalLog(b, run, r.Scenario)
		}); err != nil {
			return files.written, err
		}
	}
	return files.written, nil
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

// fileSet renders files into one directory, each written atomically, and
// keeps the paths it wrote.
type fileSet struct {
	dir     string
	written []string
}

func (f *fileSet) write(name string, render func(*bytes.Buffer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	path := filepath.Join(f.dir, name)
	if err := files.Write(path, buf.Bytes()); err != nil {
		return err
	}
	f.written = append(f.written, path)
	return nil
}
