// Package kube is lbbench's Kubernetes driver: it runs a scenario's
// variants as pods on a real cluster, so that the load generators do not
// share CPUs with what they measure.
//
// Per run it creates one server pod and K generator pods (--generators K):
//
//   - The server pod has one container per process of the variant's plan
//     (the workers' "lbbench serve" and, when the topology has one, the
//     built-in proxy), so they share the pod's network namespace as the
//     Docker driver's containers share one; the workers listen on the
//     pod's address, which the plan names through PodIPPlaceholder and
//     the container's LBBENCH_POD_IP (the downward API's status.podIP).
//     An emptyDir at /tmp holds Unix sockets; a proxy engine gets one of
//     its own as its working directory (see below).
//   - Each generator pod runs "lbbench idle"; the run execs "lbbench
//     attack --spec -" in it with its share of the workload's streams on
//     stdin and reads its measurement (histograms and counters) back on
//     stdout, then merges the generators' measurements losslessly, as
//     --generators does locally. Readiness and the workers' counters come
//     from "lbbench probe" exec'd in the first generator pod: no shared
//     volume, no service, no port forward.
//
// Placement: the server pod goes to the first ready node by name (or
// --server-node), the generator pods to the other nodes, round robin, by
// nodeName (the driver refuses up front a node that lacks the CPUs); with one node the driver refuses ("no other node") unless
// --kube-share-node allows generators beside the server. Pods get whole
// CPUs as pod-level requests equal to limits (Guaranteed QoS, shared by a
// pod's containers), and the results record every pod's node, address,
// CPU request and limit, memory limit and QoS class (results.Pod).
//
// Everything the driver creates is labelled lbbench.managed, session, run,
// role and owner (host.pid.start of the lbbench that made it), like the
// Docker driver's containers; a run deletes its pods by label when it
// ends, however it ends, and Clean deletes what an lbbench that is no
// longer alive left behind (lbbench clean --driver kubernetes).
//
// Wait time (results.Run.Wait) is measured only when the worker's
// CLOCK_MONOTONIC stamps name the generator's own clock (the boot ID in
// the X-Lbbench-Times header): pods on nodes of one host share it, pods on
// different hosts do not, and their runs record no wait.
//
// nginx and HAProxy run from the image Config.EngineImages names for
// them (FindEngine): a user's, run once on the server's node to read its
// version, or one HostEngineImage builds of this machine's engine and the
// driver pushes. lbbench's image holds only the static binary: an init
// container of it stages the engine's files and a copy of the binary in
// the pod's volumes (Stage), an init container of the engine's image
// checks the configuration, and the engine runs under lbbench guard;
// "lbbench engine-stats" exec'd in its container reads its CPU and
// HAProxy's stats socket. Without an image an engine is refused before
// any run. BuildImage makes lbbench's image as an OCI image
// (go-containerregistry), to push to a registry or to write as an archive
// for the nodes' container runtime to import.
package kube
