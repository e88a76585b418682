// Package docker runs lbbench's topologies in containers on the local Docker
// Engine: the isolated testbed behind "lbbench run --driver docker".
//
// # Image
//
// The image holds nothing but the static lbbench binary: it is built FROM
// scratch through the Engine API from a tar context (no registry, nothing
// pulled), tagged lbbench:<first 16 hex digits of the binary's SHA-256> so
// that an unchanged binary is never rebuilt, and runs as user 65534 with a
// read-only root filesystem (EnsureImage). Every container also drops all
// capabilities, sets no-new-privileges and has pids and memory limits
// (harden, WithLimits); the run directories it writes are owned by its
// user, mode 0755 (ownDir).
//
// # Layout of one run
//
// Every run (one variant, one repetition) gets a fresh user-defined bridge
// network, created internal: nothing in it can reach the outside world, and
// nothing outside but the daemon reaches in. On it:
//
//   - the server: one container per process of the plan, all in one network
//     namespace, like a Kubernetes pod. The first process (the workers: one
//     "lbbench serve" with N worker processes) owns the namespace, with the
//     hostname and network alias "server"; the proxy, when the topology has
//     one, joins it. SO_REUSEPORT groups and inherited listening sockets
//     only form inside one namespace, so reuseport and shared need the N
//     workers in one container anyway; the per-endpoint topologies (proxy,
//     unix, l4, l7, l7-pools) keep them there too, as one container with N
//     endpoints rather than one container per worker, so that every
//     topology runs the same worker processes in the same cgroup and the
//     variants differ only in how connections reach the workers. The proxy
//     talks to the workers inside the namespace, as nginx in front of a
//     pre-forking server does on one machine, but has a container (a
//     cgroup, a CPU budget) of its own. The server's containers share a
//     tmpfs volume at /tmp, where the unix topology's sockets live.
//   - the generator: a container of its own, playing the client machine. It
//     idles until the harness runs "lbbench probe" (readiness and counters)
//     and "lbbench attack" (the load) in it with the Engine's exec API, so
//     load crosses the run's bridge (a veth pair each way) as it would
//     cross a network, and never the host's docker-proxy. Its histograms
//     come back through a bind-mounted directory.
//
// Containers are named lbbench-<session>-<run>-<role>-<i> and labelled
// lbbench.managed=true, lbbench.session, lbbench.run, lbbench.role and
// lbbench.owner (host, pid and start time of the lbbench process that made
// them); networks and volumes carry the same labels. Clean removes what a
// dead owner left, and everything with All.
//
// # CPUs
//
// With at least MinCpusetCPUs (2) CPUs the generator gets the first CPU and
// the server's containers the others, as disjoint cpusets; with one, each
// container gets a CPU limit of half of it. WithPlacement forces either, or
// none; the results record which.
package docker
