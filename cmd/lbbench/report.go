package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

type reportOptions struct {
	out       string
	verdicts  string
	unitRatio float64
	claims    bool
}

func newReportCmd() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report RESULTS...",
		Short: "Write the HTML report and exports of results",
		Long: `Report reads one or more results (a results.json, or the directory holding
it) and writes into the output directory:

  report.html    one self-contained page: percentile plot of every variant,
                 per-class views, per-worker bars, latency and throughput
                 over time, send lag and validity, proxy counters, verdicts,
                 environment; no script, no external resource
  summary.md     a markdown summary that fits a CI step summary
  summary.csv    one row per variant and per run
  hgrm/*.hgrm    HdrHistogram percentile distributions (per variant and class)
  hlog/*.hlog    HdrHistogram interval logs, when the runs carry intervals
  junit.xml      one test case per variant and metric, when there are verdicts

Several RESULTS are shown side by side as variants of one report; variants
with the same name in several results are prefixed with their directory's
name. Verdicts are read from --verdicts, or from verdicts.json beside a
single RESULTS.

With --claims, report writes instead one report of the claims of every
RESULTS (each its own scenario, judged on its own runs): claims.html,
claims.md, claims.txt and junit.xml (a test case per claim), and exits with
status 4 when a claim fails. make claims uses it for the claims suite.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeReport(o, args, cmd.Flags().Changed("verdicts"), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "output directory (default: the directory of a single RESULTS)")
	f.StringVar(&o.verdicts, "verdicts", "", "verdicts file (JSON, {\"verdicts\": [...]}) to show and export as JUnit")
	f.BoolVar(&o.claims, "claims", false, "write one report of every RESULTS' claims (claims.html, claims.md, claims.txt, junit.xml); exit 4 when one fails")
	f.Float64Var(&o.unitRatio, "unit-ratio", reports.DefaultUnitRatio, "microseconds per unit in .hgrm files (1000: milliseconds)")
	return cmd
}

// resultsPath accepts a results file or the directory holding one.
func resultsPath(arg string) (string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", fmt.Errorf("results %s: %w", arg, err)
	}
	if st.IsDir() {
		return filepath.Join(arg, reports.ResultsFileName), nil
	}
	return arg, nil
}

func writeReport(o reportOptions, args []string, verdictsGiven bool, stdout io.Writer) error {
	if !(o.unitRatio > 0) || math.IsInf(o.unitRatio, 0) {
		return fmt.Errorf("--unit-ratio must be > 0, got %g", o.unitRatio)
	}
	var srcs []results.Source
	labels := map[string]int{}
	for _, arg := range args {
		path, err := resultsPath(arg)
		if err != nil {
			return err
		}
		r, err := results.ReadFile(path)
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(path)
		label := filepath.Base(filepath.Dir(abs))
		if labels[label]++; labels[label] > 1 {
			label += "-" + strconv.Itoa(labels[label])
		}
		srcs = append(srcs, results.Source{Label: label, Path: path, Results: r})
	}
	if o.claims {
		return writeClaimsSuite(o.out, srcs, stdout)
	}
	out := o.out
	if out == "" {
		if len(srcs) > 1 {
			return fmt.Errorf("with several RESULTS, say where the report goes with -o DIR")
		}
		out = filepath.Dir(srcs[0].Path)
	}
	vpath := o.verdicts
	if !verdictsGiven && len(srcs) == 1 {
		vpath = filepath.Join(filepath.Dir(srcs[0].Path), compare.VerdictsFileName)
	}
	var verdicts []compare.Verdict
	if vpath != "" {
		if verdictsGiven {
			if _, err := os.Stat(vpath); err != nil {
				return fmt.Errorf("--verdicts: %w", err)
			}
		}
		vs, err := compare.ReadVerdicts(vpath)
		if err != nil {
			return err
		}
		verdicts = vs
	}
	r, err := results.Combine(srcs)
	if err != nil {
		return err
	}
	var shown []results.Source // every environment, when several
	if len(srcs) > 1 {
		shown = srcs
	}
	doc, err := job.Report(r, verdicts, shown)
	if err != nil {
		return err
	}
	doc.UnitRatio = o.unitRatio
	files, err := reports.WriteDir(out, doc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (and %d exports in %s)\n", filepath.Join(out, reports.HTMLFile), len(files)-1, out)
	return nil
}

// writeClaimsSuite writes the claims report of srcs into dir and prints it.
func writeClaimsSuite(dir string, srcs []results.Source, stdout io.Writer) error {
	if dir == "" {
		return fmt.Errorf("--claims: say where the report goes with -o DIR")
	}
	es, err := job.JudgeSuite(srcs, dir)
	if err != nil {
		return err
	}
	if err := reports.WriteSuiteText(stdout, es); err != nil {
		return err
	}
	written, err := reports.WriteClaimsSuite(dir, es)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nclaims report: %s\n", written[2])
	if _, fails, _ := reports.SuiteCounts(es); fails > 0 {
		return &exitError{code: 4, err: fmt.Errorf("%d claims fail", fails)}
	}
	return nil
}
