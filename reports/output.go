package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lbbench/lbbench/internal/files"
)

// summaryFile is the summary table's file in an output directory.
const summaryFile = "summary.txt"

// Output is what "lbbench run" and "lbbench model sim" leave when a
// scenario ends, finished or not: results.json, summary.txt and the report
// with its exports (WriteDir) in Dir, and the summary table on the
// terminal followed by the comparison and where the files are.
type Output struct {
	// Dir is the output directory.
	Dir string
	// Note heads the table (simulated results say that they are).
	Note string
	// Comparison is printed after the table: the verdicts, if any.
	Comparison []byte
	// Saved says results.json is already up to date (lbbench run's
	// checkpoint writes it after every run), so Write does not write it
	// again.
	Saved bool
}

// ResultsPath is where Write puts results.json.
func (o Output) ResultsPath() string { return filepath.Join(o.Dir, ResultsFileName) }

// Write writes d's files into o.Dir and prints the table to w. Every
// file is written atomically; when one fails the table is still printed
// and the error says which.
func (o Output) Write(w io.Writer, d *Doc) error {
	res := d.Results
	var table bytes.Buffer
	table.WriteString(o.Note)
	if err := WriteText(&table, d); err != nil {
		return err
	}
	var errs []error
	if !o.Saved {
		errs = append(errs, res.WriteFile(o.ResultsPath()))
	}
	if err := files.Write(filepath.Join(o.Dir, summaryFile), table.Bytes()); err != nil {
		errs = append(errs, fmt.Errorf("reports: %w", err))
	}
	if _, err := WriteDir(o.Dir, d); err != nil {
		errs = append(errs, err)
	}
	fmt.Fprintln(w)
	w.Write(table.Bytes())
	w.Write(o.Comparison)
	fmt.Fprintf(w, "\nresults: %s\nreport:  %s\n", o.ResultsPath(), filepath.Join(o.Dir, HTMLFile))
	return errors.Join(errs...)
}
