// Package selftest measures what lbbench itself costs on this machine,
// beside the tools people would use instead ("lbbench selftest", "make
// bench-self"):
//
//   - the generator: lbbench attack and vegeta attack, open loop, at the
//     same rates against one fast target (nginx answering 200 where it is
//     installed, else one built-in worker with no service time), the two
//     tools alternating round by round so that they share the machine's
//     state; CPU time and peak RSS of each attack process (wait4's
//     rusage), requests, latency p99 and, for lbbench, send-lag p99; and
//     wrk's closed-loop ceiling (one thread, 32 connections) on the same
//     target, the floor for an HTTP/1.1 client here;
//   - the server: the CPU time per request of one built-in worker ("lbbench
//     serve --workers 1") with a zero and a 2 ms service, and of nginx (one
//     worker process), at the same open-loop rate, read from the kernel's
//     per-process CPU clocks of the server's process tree.
//
// Each run is recorded as a run of the results schema (one variant per
// tool and rate, one round per repetition; the CPU time under the role
// generator or workers), so "lbbench compare BASE CAND --metric
// cpu_per_request(generator)" tracks the figures between two builds. The
// ratios of lbbench to vegeta are paired by round: the mean of the
// rounds' log ratios with its skew-safe 95% interval (stats.SkewSafeMean),
// as the verdicts judge paired rounds.
package selftest
