// Package model answers lbbench's questions without running anything: exact
// balls-into-bins figures for tasks that arrive together (Balls), and a
// discrete-event simulator of a scenario's variants and workload
// (Simulate) for scales one machine cannot run.
//
// Balls computes with big integers: the probability that a given worker or
// some worker gets at least K of M tasks dispatched uniformly at random,
// the whole distribution of the largest load and its mean, all as exact
// fractions; least-loaded dispatch is exact by construction; power of two
// choices is simulated with the balancer's own p2c policy and reported with
// 95% confidence intervals.
//
// Simulate replays the workload as the generator would offer it (the same
// Pacer schedule and the same class and service-time draws from the same
// seeds), through the client's connection cap with keep-alive, the
// kernel's per-connection choice for SO_REUSEPORT (uniform, seeded) or the
// built-in balancer's registered policies (the real Policy code, driven on
// simulated time), into single- or multi-task workers with FIFO queues. It
// returns results.Results marked Simulated, so every report reads them.
// The proxy hop costs nothing in the model and upstream keep-alive does
// not change a policy's choices, so variants that differ only in those
// simulate alike.
package model
