package harness

import (
	"context"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// Driver brings plans up on some substrate: local processes
// (driver/local), containers (driver/docker), pods on a cluster
// (driver/kube). Run uses one driver for a whole scenario, one deployment
// at a time.
type Driver interface {
	// Name is the driver's name in the results: "local", "docker" or
	// "kubernetes".
	Name() string
	// Describe records the driver's part of s's environment in env (CPU
	// pinning, engine versions, container engine and image, ...) and
	// refuses, before any run, what it cannot run: an engine s needs that
	// it cannot find, a workload its generators cannot offer.
	Describe(ctx context.Context, s scenario.Scenario, env *results.Env) error
	// Up renders r's plan (topologies.RenderRun, with the driver's own
	// addresses), starts its processes and returns once all are ready. On
	// failure it has removed what it started.
	Up(ctx context.Context, r Bring) (Deployment, error)
}

// Bring is what a driver brings up for one run. The harness knows
// variants, not the processes that serve them: the driver renders them.
type Bring struct {
	// ID names the run (scenario.Schedule's run ID).
	ID string
	// Variant and Workers are what to render.
	Variant scenario.Variant
	Workers scenario.Workers
	// Exe is the lbbench binary that runs the plan's lbbench processes for
	// a variant of another build (WithBuilds); empty for this one.
	Exe string
}

// Deployment is one running plan.
type Deployment interface {
	// Entry is the base URL load goes to.
	Entry() string
	// Attacker offers the load, from the driver's generator: the load
	// generator in this process or in processes or containers of the
	// driver's, chosen once, when the driver was made.
	Attacker
	// Stats collects the per-worker, proxy and engine counters, and names
	// the processes that died.
	Stats(ctx context.Context) (Stats, error)
	// Down stops and removes everything Up started. It is idempotent. Run
	// calls it with a context that outlives the run's (a teardown after
	// Ctrl-C) but is bounded, and that ends at once on a hard stop (a
	// second Ctrl-C): waits then turn into kills.
	Down(ctx context.Context) error
}

// Simulator is a Driver whose deployments are simulated, not measured
// (the model's simulator, through package job): Run marks its results
// Simulated, so that no report takes them for a measurement.
type Simulator interface {
	Driver
	Simulated() bool
}

// Placed is a Deployment that can say where its processes ran: the pods of
// a cluster, with their nodes and resources, recorded in the run.
type Placed interface {
	Pods() []results.Pod
}

// Attacker offers a workload to a deployment and returns what the
// generator recorded. On ctx's end it stops sending and returns ctx's
// error; what it recorded until then is discarded by Run (a partial run
// would bias the statistics).
type Attacker interface {
	Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error)
}

// Stats are the counters a deployment's processes report, in the results
// format's own types: no target's type crosses this contract.
type Stats struct {
	// Workers are the workers' own counters, by worker index.
	Workers []results.WorkerStats
	// Proxy holds the built-in proxy's counters, when one runs.
	Proxy *results.ProxyStats
	// Engine holds nginx's or HAProxy's own counters, when one runs.
	Engine *results.EngineStats
	// Dead lists the processes that died during the run: a process the
	// driver started, or a worker its supervisor reports as exited or
	// restarted.
	Dead []results.Failure
	// CPU is the CPU time each process has used since it started (Run
	// asks before and after the load and keeps the difference); empty
	// when the driver cannot tell.
	CPU []results.ProcessCPU
	// Steal is the host's steal time so far, by CPU number, on every CPU
	// the server's processes may run on (the union of what they report:
	// the workers' supervisor reports its affinity's, which its workers
	// and, in every driver, the proxy share). Run asks before and after
	// the load and keeps the difference (results.Run.Server). The server
	// side runs on one host in every driver, so a CPU number names one
	// CPU. Empty when no process reports it.
	Steal map[int]time.Duration
}
