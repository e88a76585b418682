// Package model answers lbbench's questions without running anything: exact
// balls-into-bins figures for tasks that arrive together (Balls), and a
// discrete-event simulator of a scenario's runs (SimulateRun) for scales
// one machine cannot run.
//
// Balls computes with big integers: the probability that a given worker or
// some worker gets at least K of M tasks dispatched uniformly at random,
// the whole distribution of the largest load and its mean, all as exact
// fractions; least-loaded dispatch is exact by construction; power of two
// choices is simulated with the balancer's own p2c policy and reported with
// 95% confidence intervals.
//
// SimulateRun replays the workload as the generator would offer it (the same
// Pacer schedule and the same class and service-time draws from the same
// seeds), through the client's connection cap with keep-alive, the
// kernel's per-connection choice for SO_REUSEPORT (uniform, seeded) or the
// built-in balancer's registered policies (the real Policy code, driven on
// simulated time), into single- or multi-task workers with FIFO queues. It
// returns a results.Run in the measured schema. The rounds are not the
// model's: harness.Run makes them, with the simulator as its driver
// (package job), so a simulated scenario follows the measured schedule and
// round workloads and gets the same checkpoints, progress and
// interruption; its results are marked Simulated, so every report reads
// them.
// The proxy hop costs nothing in the model and upstream keep-alive does
// not change a policy's choices, so variants that differ only in those
// simulate alike.
package model
