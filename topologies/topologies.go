package topologies

import (
	"slices"

	"github.com/lbbench/lbbench/internal/guard"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
)

// Names returns the known topology names, sorted.
func Names() []string {
	names := make([]string, 0, len(renderers))
	for n := range renderers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Roles of the processes in a plan.
const (
	RoleWorkers = "workers"
	RoleProxy   = "proxy"
)

// Stats kinds tell a driver how to decode a process's /stats answer.
const (
	StatsWorkers = "workers" // prefork.StatsReport
	StatsProxy   = "proxy"   // balancer.Stats
	// StatsNginx: Stats is the URL of nginx's stub_status page
	// (engines.ReadNginxStatus).
	StatsNginx = "nginx_stub_status"
	// StatsHAProxy: Stats is the path of HAProxy's stats socket, which may
	// use DirPlaceholder (engines.ReadHAProxyStats, CSV of "show stat").
	StatsHAProxy = "haproxy_csv"
)

// Plan is a rendered variant: what to start, in order, and where load goes.
type Plan struct {
	// ID names this bring-up (the harness sets it to the run's ID); drivers
	// use it in process, log and container names.
	ID string `json:"id"`
	// Variant is the variant's name.
	Variant string `json:"variant"`
	// Topology is the variant's topology.
	Topology string `json:"topology"`
	// Entry is the base URL load is sent to, for example "http://127.0.0.1:8080".
	Entry string `json:"entry"`
	// Processes are started in order; each is ready before the next starts.
	Processes []Process `json:"processes"`
}

// DirPlaceholder in a Process's arguments or Files stands for the process's own
// working directory, which the driver creates (config files, pid and temp
// paths of engines such as nginx go there).
const DirPlaceholder = "{dir}"

// Process is one process of a plan: what it runs, as a typed command, and
// how a driver knows it is ready and reads its counters. Exactly one of
// Serve, Proxy and Engine is set.
type Process struct {
	// Role is RoleWorkers or RoleProxy.
	Role string `json:"role"`
	// Serve runs "lbbench serve": the workers.
	Serve *prefork.ServeConfig `json:"serve,omitempty"`
	// Proxy runs "lbbench proxy": the built-in proxy.
	Proxy *balancer.Command `json:"proxy,omitempty"`
	// Engine runs nginx or HAProxy under "lbbench guard".
	Engine *EngineCommand `json:"engine,omitempty"`
	// Exe is the lbbench binary that runs the process; empty means the
	// running one. RenderRun sets it for a variant of another build, and
	// for this build's when it runs from a copy (harness.WithBuilds).
	Exe string `json:"exe,omitempty"`
	// Files are written into the working directory before the start.
	Files []File `json:"files,omitempty"`
	// Health is a URL that answers 200 once the process is ready.
	Health string `json:"health"`
	// Stats is a URL whose JSON answer has the process's counters, or
	// where the engine named by StatsKind keeps them; may use DirPlaceholder.
	Stats string `json:"stats"`
	// StatsKind says how to read Stats: StatsWorkers, StatsProxy,
	// StatsNginx or StatsHAProxy.
	StatsKind string `json:"stats_kind"`
}

// EngineCommand is nginx or HAProxy in place of the built-in proxy.
type EngineCommand struct {
	// Engine is scenario.Nginx or scenario.HAProxy.
	Engine string `json:"engine"`
	// Path is the engine's binary: on this machine, or in the image the
	// driver runs it from (an EngineFinder's Binary.Path).
	Path string `json:"path"`
	// Args are the engine's arguments; they may use DirPlaceholder.
	Args []string `json:"args"`
	// Check, when set, are the arguments of a run of the engine, in the
	// working directory after Files are written, that must exit 0 before
	// the process starts (nginx -t). A driver reports its output when it
	// fails. May use DirPlaceholder.
	Check []string `json:"check,omitempty"`
}

// Args returns the arguments the lbbench binary runs p with: the
// subcommand and its flags, or for an engine "guard", "--" and the engine's
// command line. Drivers run the lbbench binary (p.Exe, or their own) with
// them, after replacing DirPlaceholder.
func (p Process) Args() []string {
	switch {
	case p.Serve != nil:
		return p.Serve.Args()
	case p.Proxy != nil:
		return p.Proxy.Args()
	case p.Engine != nil:
		return p.Engine.guarded(p.Engine.Args)
	}
	return nil
}

// CheckArgs returns the arguments the lbbench binary runs p's
// configuration check with (guard and the engine's check command line), or
// nil when p has no check.
func (p Process) CheckArgs() []string {
	if p.Engine == nil || len(p.Engine.Check) == 0 {
		return nil
	}
	return p.Engine.guarded(p.Engine.Check)
}

// guarded is "guard -- PATH ARGS...": the engine run with args under guard.
func (e *EngineCommand) guarded(args []string) []string {
	return guard.Args(append([]string{e.Path}, args...)...)
}

// File is a file a process needs, such as an engine's configuration.
type File struct {
	// Name is relative to the process's working directory.
	Name string `json:"name"`
	// Content may use DirPlaceholder.
	Content string `json:"content"`
}

// Allocator hands out addresses for a plan. A local driver finds free ports
// on the loopback interface.
type Allocator interface {
	// Host is the address processes listen on, for example "127.0.0.1".
	Host() string
	// Ports returns the first of n consecutive ports that are free now.
	Ports(n int) (int, error)
}
