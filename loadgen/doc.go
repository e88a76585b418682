// Package loadgen is lbbench's instrument: the load generator. Attack
// offers a workload (package workloads) to an entry URL from this process
// in one of three modes chosen by the workload: open loop (an arrival
// process, the default, closed.go for the other two), closed loop (named
// clients that each wait for their answers) or bursts (connections opened
// together). In open loop each request has an intended send time from the
// arrival schedule, and latency is recorded from it (corrected) as well as
// from the actual send (uncorrected), with the send lag in its own
// histogram: a target that stalls cannot hide its queue.
//
// Its files: the attack and its streams (attack.go), the HTTP client that
// stamps each request's wire send time (client.go), the recorders that
// turn vegeta's results into HDR histograms (recorder.go), the in-flight
// cap (inflight.go), live figures for a progress display (live.go),
// literal vegeta targets (targets.go), what "lbbench attack" is told
// beside its workload, checked (config.go), and K generator processes whose
// measurements are merged losslessly (generators.go), launched as
// "lbbench attack" (command.go) on this machine (LocalExec) or in a
// driver's container.
//
// It imports only workloads, results, internal/* and vegeta among
// lbbench's and third-party packages (internal/archtest), so that the
// instrument cannot depend on what it measures.
package loadgen
