// Package reports turns results into what people and tools read:
// summaries per variant (histograms merged across runs, never percentiles
// averaged: summary.go), and every renderer: a terminal table (text.go), a
// self-contained HTML report with inline SVG plots (html.go, plot.go: no
// script, no external URL), a markdown summary for CI (markdown.go), a CSV
// summary (csv.go), HdrHistogram percentile distributions and interval
// logs (hgrm.go, hlog.go), JUnit XML (junit.go), Go benchmark lines for
// benchstat (benchstat.go), verdicts and calibrations (compareout.go), the
// claims of one scenario and of a suite (claims.go, claimsuite.go), and a
// static site indexing many runs (site.go). It writes a run's output
// directory (output.go, dir.go, check.go) and a comparison's files
// (comparison.go).
//
// A report is one document, Doc (document.go), built once by job.Report:
// the results, the variants' summaries, the verdicts, the judged claims,
// the bursts beside the model and the sources' environments. Every format
// is a function of a Doc (func(io.Writer, *Doc) error, or WriteDir for
// all of them) and only formats it: none summarises, judges or merges.
//
// It renders what packages compare (verdicts) and claims (judged claims)
// computed, and never computes statistics or reads the model itself
// (internal/archtest). It does not reach the network.
package reports
