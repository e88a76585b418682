package topologies

import (
	"fmt"
	"slices"

	"github.com/lbbench/lbbench/internal/field"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/workloads"
)

// Topology names.
const (
	// ReusePort runs N workers that each listen on the same port with
	// SO_REUSEPORT; the kernel hashes each new connection to one of them.
	ReusePort = "reuseport"
	// Proxy gives each worker its own port and puts a reverse proxy with a
	// load-aware policy in front of them.
	Proxy = "proxy"
)

// Proxy engines.
const (
	// Builtin is lbbench's own proxy (targets/balancer).
	Builtin = "builtin"
	// Nginx and HAProxy are the real engines, configured by package engines.
	Nginx   = engines.Nginx
	HAProxy = engines.HAProxy
)

// Defaults used by WithDefaults.
const (
	DefaultEngine = Builtin
	DefaultPolicy = "least_conn"
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

// Workers describes the worker replicas every variant of a scenario runs.
type Workers struct {
	// Count is the number of worker processes; required.
	Count int `yaml:"count" json:"count"`
	// Concurrency is how many requests one worker serves at a time; zero
	// means 1 (a single-task worker).
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Mode is "sleep" or "spin"; empty means sleep.
	Mode string `yaml:"mode" json:"mode"`
	// Slow makes some workers slower than the rest.
	Slow []Slow `yaml:"slow,omitempty" json:"slow,omitempty"`
	// Target, when set, runs a foreign server in place of the built-in
	// worker (target.go); nil means the built-in worker.
	Target *Target `yaml:"target,omitempty" json:"target,omitempty"`
}

// Slow multiplies one worker's service times by Factor.
type Slow struct {
	Index  int     `yaml:"index" json:"index"`
	Factor float64 `yaml:"factor" json:"factor"`
}

// Variant is one arrangement under test.
type Variant struct {
	// Name labels the variant in results; required and unique.
	Name string `yaml:"name" json:"name"`
	// Topology is one of Names(); required.
	Topology string `yaml:"topology" json:"topology"`
	// Proxy configures the proxy of the proxy topology.
	Proxy ProxySpec `yaml:"proxy" json:"proxy"`
	// Clients, when set, replaces the workload's client model for this
	// variant (for example to compare connection churn).
	Clients *workloads.Clients `yaml:"clients,omitempty" json:"clients,omitempty"`
	// Accept is the built-in workers' accept strategy in the shared
	// topology (shared.go); empty means Go's netpoller.
	Accept string `yaml:"accept,omitempty" json:"accept,omitempty"`
	// MaxConns makes each built-in worker of the shared topology stop
	// accepting while that many of its connections are open; zero means
	// no limit.
	MaxConns int `yaml:"max_conns,omitempty" json:"max_conns,omitempty"`
	// Build names another build of lbbench whose binary runs this
	// variant's lbbench processes (set by "lbbench run --baseline", never
	// by a scenario file); empty means the running binary. The harness
	// maps build names to executables (harness.WithBuilds).
	Build string `yaml:"-" json:"build,omitempty"`
}

// ProxySpec configures a proxy.
type ProxySpec struct {
	// Engine is Builtin, Nginx or HAProxy; empty means DefaultEngine.
	Engine string `yaml:"engine" json:"engine"`
	// Policy is a balancer policy name; empty means DefaultPolicy.
	Policy string `yaml:"policy" json:"policy"`
	// UpstreamKeepAlive reuses proxy-to-worker connections; nil means true.
	UpstreamKeepAlive *bool `yaml:"upstream_keepalive" json:"upstream_keepalive"`
	// PolicyArgs are the built-in policy's arguments (topologies l4, l7
	// and l7-pools), for example {alpha: "0.5"}; nil means none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// CloseAfter closes a proxy-to-worker connection after that many
	// requests (l7, l7-pools; keep-alive on); zero means no limit.
	CloseAfter int `yaml:"close_after,omitempty" json:"close_after,omitempty"`
	// MaxIdle caps the idle connections the proxy keeps per worker (l7,
	// l7-pools); zero means the built-in proxy's default.
	MaxIdle int `yaml:"max_idle,omitempty" json:"max_idle,omitempty"`
	// Retries is how many other workers a request (or, in l4, a
	// connection) may try after one refused the connection (l4, l7,
	// l7-pools); zero means none.
	Retries int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// Pools route path prefixes to their own workers and policy
	// (l7-pools only, where they are required).
	Pools []Pool `yaml:"pools,omitempty" json:"pools,omitempty"`
}

// KeepAliveOn reports whether upstream keep-alive is on (nil means on).
func (p ProxySpec) KeepAliveOn() bool { return p.UpstreamKeepAlive == nil || *p.UpstreamKeepAlive }

// fieldErr returns a *field.Error for the field at path.
func fieldErr(path, format string, args ...any) error {
	return field.Errorf(path, format, args...)
}

// WithDefaults returns a copy of w with zero values filled in.
func (w Workers) WithDefaults() Workers {
	if w.Concurrency == 0 {
		w.Concurrency = 1
	}
	if w.Mode == "" {
		w.Mode = "sleep"
	}
	return w
}

// Validate reports the first problem in w.
func (w Workers) Validate() error {
	if w.Count < 1 {
		return fieldErr("count", "at least 1 worker is required, got %d", w.Count)
	}
	if err := w.validateTarget(); err != nil { // target.go
		return err
	}
	if w.Concurrency < 1 {
		return fieldErr("concurrency", "must be >= 1, got %d", w.Concurrency)
	}
	if w.Mode != "sleep" && w.Mode != "spin" {
		return fieldErr("mode", "unknown mode %q (known: sleep, spin)", w.Mode)
	}
	for i, s := range w.Slow {
		if s.Index < 0 || s.Index >= w.Count {
			return fieldErr(fmt.Sprintf("slow[%d].index", i), "must name one of the %d workers (0 to %d), got %d", w.Count, w.Count-1, s.Index)
		}
		if s.Factor <= 0 || s.Factor > 100 {
			return fieldErr(fmt.Sprintf("slow[%d].factor", i), "must be in (0, 100], got %g", s.Factor)
		}
	}
	return nil
}

// WithDefaults returns a copy of v with zero values filled in.
func (v Variant) WithDefaults() Variant {
	v = v.balancerDefaults()
	if v.Topology == Proxy || v.Topology == Unix {
		if v.Proxy.Engine == "" {
			v.Proxy.Engine = DefaultEngine
		}
		if v.Proxy.Policy == "" {
			v.Proxy.Policy = DefaultPolicy
		}
	}
	return v
}

// Validate reports the first problem in v. Policy names are checked by the
// engine that runs them: for Builtin through the policies argument (the
// names the built-in proxy knows), for Nginx and HAProxy by package engines.
func (v Variant) Validate(policies []string) error {
	if v.Name == "" {
		return fieldErr("name", "is required")
	}
	if err := v.validateBalancer(policies); err != nil {
		return err
	}
	if err := v.validateWorkerOptions(); err != nil { // shared.go
		return err
	}
	switch v.Topology {
	case "":
		return fieldErr("topology", "is required (known: %v)", Names())
	case Proxy, Unix:
		switch v.Proxy.Engine {
		case Builtin:
			if !slices.Contains(policies, v.Proxy.Policy) {
				return fieldErr("proxy.policy", "unknown policy %q (known: %v)", v.Proxy.Policy, policies)
			}
		case Nginx, HAProxy:
			if engines.CheckPolicy(v.Proxy.Engine, v.Proxy.Policy) != nil {
				return fieldErr("proxy.policy", "engine %s does not support policy %q (%s supports: %v)",
					v.Proxy.Engine, v.Proxy.Policy, v.Proxy.Engine, engines.Policies(v.Proxy.Engine))
			}
		default:
			return fieldErr("proxy.engine", "unknown engine %q (known: %s, %s, %s)", v.Proxy.Engine, Builtin, HAProxy, Nginx)
		}
	default:
		if _, ok := renderers[v.Topology]; !ok {
			return fieldErr("topology", "unknown topology %q (known: %v)", v.Topology, Names())
		}
	}
	return nil
}

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

// DirPlaceholder in a Process's Args or Files stands for the process's own
// working directory, which the driver creates (config files, pid and temp
// paths of engines such as nginx go there).
const DirPlaceholder = "{dir}"

// Process is one process of a plan.
type Process struct {
	// Role is RoleWorkers or RoleProxy.
	Role string `json:"role"`
	// Exe is the executable to run; empty means the lbbench binary itself.
	Exe string `json:"exe,omitempty"`
	// Args are the arguments; for lbbench they start with the subcommand.
	Args []string `json:"args"`
	// Files are written into the working directory before the start.
	Files []File `json:"files,omitempty"`
	// Check, when set, are the arguments of a run of Exe, in the working
	// directory after Files are written, that must exit 0 before the
	// process starts: a configuration test such as "nginx -t". A driver
	// reports its output when it fails. May use DirPlaceholder.
	Check []string `json:"check,omitempty"`
	// Health is a URL that answers 200 once the process is ready.
	Health string `json:"health"`
	// Stats is a URL whose JSON answer has the process's counters, or
	// where the engine named by StatsKind keeps them; may use DirPlaceholder.
	Stats string `json:"stats"`
	// StatsKind says how to read Stats: StatsWorkers, StatsProxy,
	// StatsNginx or StatsHAProxy.
	StatsKind string `json:"stats_kind"`
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
