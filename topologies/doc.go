// Package topologies renders each variant of a scenario (scenario.Variant,
// whose topology is one of scenario.Topologies()) into a Plan: the
// processes to start, in order, with their configuration, readiness and
// stats endpoints, and the entry point load goes to. Every scenario
// topology has a renderer here (a test checks it). The package starts
// nothing itself: a driver (harness.LocalDriver for local processes,
// docker.Driver for containers) does.
//
// Catalog returns what this lbbench supports (policies, engines, accept
// strategies) for scenario validation.
package topologies
