// Package results is the contract between the layers that make numbers
// (harness and its drivers, the model's simulator) and the layers that read
// them (reports, compare): Results, Run, Measurement, Histogram, Interval,
// Env and the counters of workers, proxies and engines, with their file
// I/O, lossless merge (of runs: MergeRuns; of several results side by
// side in one report: Combine, combine.go) and schema number.
//
// Both producers record through the same code: NewMeasurement starts a
// stream's measurement from its workload, Measurement.Record counts each
// measured request into it (totals, error kinds, class, client, step), and
// an IntervalRecorder keeps the per-interval histograms by completion time.
// Each producer only says what a request's latencies and failure were.
//
// It owns its counter structs rather than embedding the targets' own, so
// that a JSON tag changed inside the balancer or an engine reader cannot
// change results.json silently: the driver's conversion stops compiling
// instead.
package results
