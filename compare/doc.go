// Package compare judges variants against each other from their runs:
// pairing the runs of a candidate with those of its baseline (pairing.go),
// a verdict per pair and metric (pass, fail or inconclusive, with the
// ratio, its confidence interval and the test's corrected p-value,
// compare.go and decide.go), tolerances per metric (tolerance.go), A/A
// calibration of the noise floor and the runs a change needs (calibrate.go,
// power.go), and the verdicts file (verdict.go). The statistics come from
// package stats, the metrics from results.Metrics.
//
// It computes; it does not render or write files: package reports says
// verdicts in text, markdown, HTML and JUnit. It imports neither reports
// nor model (internal/archtest).
package compare
