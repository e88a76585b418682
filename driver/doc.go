// Package driver holds what every driver shares: waiting for a process to
// be ready (WaitHTTP) and fetching its counters (Fetch), from this process
// or through "lbbench probe" inside a driver's network (ProbeCommand);
// decoding those counters into the results format's types (DecodeStats),
// so that no target's type crosses the harness.Deployment contract;
// naming the worker or engine process that died (NameDeadWorker); writing
// a plan's files (WritePlanFiles); the proxy engines' versions for the
// environment (EngineVersions); the FROM-scratch image's contents
// (ImageBinary, CheckStatic) and the owner label of what a run creates
// (Owner, OwnerAlive); and the timeouts every driver uses.
//
// The drivers themselves are its subpackages: local (child processes on
// loopback, CPU pinning), docker (containers on a network per run) and
// kube (pods on a Kubernetes cluster, generators on other nodes).
// Each implements harness.Driver, and its deployments the harness's
// Attacker through package loadgen. It must not import harness's caller
// (cmd) or the report layers.
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
