package reports

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/files"
)

// Preflight makes sure, before a scenario's first run, that everything Write
// and the run itself will write under o.Dir can be written: the directory
// exists (it is made) and takes new files; results.json, summary.txt,
// the report's and the comparison's files are not directories; the
// report's folders (and the caller's dirs, relative to o.Dir: logs, raw,
// ...) are directories that take new files, or can be made, and hold no
// directory where a file may go. A bad output is found at once, not after
// the first run.
func (o Output) Preflight(dirs ...string) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := writable(o.Dir); err != nil {
		return fmt.Errorf("output directory %s: %w", o.Dir, err)
	}
	var errs []error
	for _, name := range []string{ResultsFileName, summaryFile, HTMLFile, markdownFile, csvFile, JUnitFile,
		compare.VerdictsFileName, ComparisonMarkdownFile, BaseBenchFile, CandBenchFile} {
		path := filepath.Join(o.Dir, name)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("output %s is a directory: lbbench writes a file there (remove it or choose another -o)", path))
			continue
		}
		check := files.Check
		if name == ResultsFileName {
			check = files.CheckWhole
		}
		if err := check(path); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range append([]string{hgrmDir, hlogDir}, dirs...) {
		path := filepath.Join(o.Dir, name)
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Made when needed, in o.Dir, which takes new files.
		case err != nil:
			errs = append(errs, fmt.Errorf("output %s: %w", path, err))
		case !fi.IsDir():
			errs = append(errs, fmt.Errorf("output %s is not a directory: lbbench writes files into it (remove it or choose another -o)", path))
		default:
			if err := writable(path); err != nil {
				errs = append(errs, fmt.Errorf("output %s: %w", path, err))
			}
			if name == hgrmDir || name == hlogDir {
				errs = append(errs, checkEntries(path))
			}
		}
	}
	return errors.Join(errs...)
}

// checkEntries checks what is already in an output folder: lbbench writes
// files there (hgrm/<variant>.hgrm, hlog/<run>.hlog, ...) whose names
// depend on the results, so any directory or unwritable entry could be
// one of them.
func checkEntries(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("output %s is a directory, where lbbench may write a file (remove it or choose another -o)", path))
			continue
		}
		if err := files.Check(path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writable checks that dir takes a new file, by making one and removing
// it.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".lbbench-check-*")
	if err != nil {
		return fmt.Errorf("cannot write there: %w", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Checkpoint writes results.json and summary.txt of d, each atomically:
// what "lbbench run" saves after every run, so that a reader (or a
// scenario that dies) always finds both whole and up to date.
func (o Output) Checkpoint(d *Doc) error {
	if err := d.Results.WriteFile(o.ResultsPath()); err != nil {
		return err
	}
	var table bytes.Buffer
	table.WriteString(o.Note)
	if err := WriteText(&table, d); err != nil {
		return err
	}
	if err := files.Write(filepath.Join(o.Dir, summaryFile), table.Bytes()); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}
