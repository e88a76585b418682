// Package harness runs scenarios: for each repetition it brings every
// variant up through a Driver, in a randomized balanced order
// (scenario.Scenario.Order), offers the workload open-loop, records latency
// from each request's intended send time into HDR histograms, collects the
// targets' counters and takes the variant down again. What it returns is a
// results.Results, the unit of all later statistics.
//
// It holds the run loop (run.go), the local process driver (local.go), the
// readiness and counter probes both drivers use (probe.go, stats.go,
// counters.go), the open-loop generator and its recorder (attack.go,
// recorder.go, generators.go, client.go), live progress (live.go) and CPU
// pinning (pin.go). The scenario format lives in package scenario, the
// results format in package results.
//
// The package never prints to a terminal and never handles signals: callers
// pass a context and observe progress through WithProgress.
package harness
