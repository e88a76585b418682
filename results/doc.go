// Package results is the contract between the layers that make numbers
// (harness and its drivers, the model's simulator) and the layers that read
// them (reports, compare): Results, Run, Measurement, Histogram, Interval,
// Env and the counters of workers, proxies and engines, with their file
// I/O, lossless merge and schema number.
//
// It owns its counter structs rather than embedding the targets' own, so
// that a JSON tag changed inside the balancer or an engine reader cannot
// change results.json silently: the driver's conversion stops compiling
// instead.
package results
