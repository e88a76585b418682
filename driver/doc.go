// Package driver holds what every driver shares, so that a driver costs
// only its substrate: waiting for a process to be ready (WaitHTTP) and
// fetching its counters (Fetch), from this process or through "lbbench
// probe" inside a driver's network (ProbeCommand); decoding those counters
// into the results format's types (DecodeStats), so that no target's type
// crosses the harness.Deployment contract; naming the worker or engine
// process that died (NameDeadWorker); writing a plan's files
// (WritePlanFiles); the proxy engines' versions for the environment
// (EngineVersions) and, for the container drivers, the engine images
// resolved once (EngineImages); the FROM-scratch image's contents
// (ImageBinary, CheckStatic); the ports of a run's own network namespace
// (PortCounter); the labels of what a run creates (Labels, Owner) and
// the removal of what dead runs left (Labelled.Clean); the check that a
// workload can be split across generators (OneGenerator,
// CheckGeneratorCount); bringing a plan up with teardown on failure (Up,
// Start); and the timeouts every driver uses.
//
// The drivers themselves are its subpackages: local (child processes on
// loopback, CPU pinning), docker (containers on a network per run) and
// kube (pods on a Kubernetes cluster, generators on other nodes).
// Each implements harness.Driver, and its deployments the harness's
// Attacker through package loadgen. It must not import harness's caller
// (cmd) or the report layers.
//
// # A fourth driver
//
// A new driver provides only its substrate:
//
//   - New(required..., opts ...Option) (*Driver, error), with options
//     that only set fields (WithGenerators, WithLive, WithLog,
//     WithEngineImages, WithRaw, WithPlacement where they apply) and one
//     validation in New that refuses, with what to do, an option it
//     cannot honour (CheckGeneratorCount for the generators);
//   - topologies.Allocator (Host, and Ports: PortCounter when every run
//     has a network namespace of its own), and topologies.EngineFinder
//     (EngineImages when engines run from images);
//   - Up as driver.Up(ctx, d, r), and UpPlan, which makes a deployment
//     implementing Starting and returns driver.Start(ctx, dep): Start
//     brings the processes up, each ready before the next; Down is
//     idempotent and removes everything;
//   - Describe, refusing several generators for a workload OneGenerator
//     names;
//   - for objects that outlive the process (containers, pods): Labels on
//     each, and a Kind per kind of object, so that Labelled's Clean and
//     Managed find and remove what a killed run left.
package driver

import "time"

// Timeouts every driver uses.
const (
	// DefaultReadyTimeout bounds the wait for one process to answer its
	// readiness probe.
	DefaultReadyTimeout = 15 * time.Second
	// DefaultStopTimeout is how long a process is given to drain after
	// it was asked to stop, before it is killed.
	DefaultStopTimeout = 10 * time.Second
)
