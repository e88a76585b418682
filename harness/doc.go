// Package harness runs scenarios: for each repetition it brings every
// variant up through a Driver, in a randomized balanced order, offers the
// workload open-loop, records latency from each request's intended send time
// into HDR histograms, collects the targets' counters and takes the variant
// down again. The results it returns are the unit of all later statistics.
//
// The package never prints to a terminal and never handles signals: callers
// pass a context and observe progress through WithProgress.
package harness
