// Package topologies names the arrangements lbbench compares and renders each
// one into a Plan: the processes to start, in order, with their arguments,
// readiness and stats endpoints, and the entry point load goes to. It starts
// nothing itself; a driver (harness.LocalDriver, later Docker) does.
package topologies
