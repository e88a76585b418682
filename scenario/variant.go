package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/internal/field"
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
	// Nginx and HAProxy are the real engines, configured by package engines
	// (whose names must be these; a test checks it).
	Nginx   = "nginx"
	HAProxy = "haproxy"
)

// Topologies returns the topology names a scenario may use, sorted. Package
// topologies renders each of them (a test checks that it renders exactly
// these).
func Topologies() []string {
	return []string{L4, L7, L7Pools, Proxy, ReusePort, Shared, SharedUnix, Unix}
}

// Catalog is what the running lbbench supports beyond the scenario format
// itself: the names the built-in proxy, the engines and the built-in worker
// know. Validate checks names against it; topologies.Catalog returns the
// real one. The zero Catalog knows no policy, engine policy or accept
// strategy.
type Catalog struct {
	// Policies are the built-in proxy's policy names.
	Policies []string
	// EnginePolicies maps each external engine (Nginx, HAProxy) to the
	// lbbench policy names it has an equivalent for.
	EnginePolicies map[string][]string
	// Accept are the built-in worker's accept strategies.
	Accept []string
	// Metrics are the metrics claims may use (results.MetricDefs).
	Metrics []MetricDef
	// ComparisonMetrics are the metrics verdicts may judge
	// (results.ComparisonMetrics); nil leaves Scenario.Verdicts unchecked.
	ComparisonMetrics []string
	// PolicyArgs, when set, checks a built-in policy's argument values
	// (a number in range, a duration), so a bad value is refused when the
	// scenario is read rather than when the proxy starts.
	PolicyArgs func(policy string, args map[string]string) error
}

// Defaults used by WithDefaults.
const (
	DefaultEngine = Builtin
	DefaultPolicy = "least_conn"
)

// BuildSeparator joins a variant's name and its build in the name of the
// variant's twin that runs another build of lbbench ("least_conn@base",
// see Variant.Build).
const BuildSeparator = "@"

// Variant is one arrangement under test.
type Variant struct {
	// Name labels the variant in results; required and unique.
	Name string `yaml:"name" json:"name"`
	// Topology is one of Topologies(); required.
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
	// AcceptWhen overrides Workers.AcceptWhen ("always" or "idle") for
	// this variant, in any topology; empty keeps the workers' setting.
	AcceptWhen string `yaml:"accept_when,omitempty" json:"accept_when,omitempty"`
	// Target, when set, runs this foreign server in place of the workers'
	// (workers.target, or the built-in worker), so that one scenario can
	// compare several servers; nil keeps the workers' setting.
	Target *Target `yaml:"target,omitempty" json:"target,omitempty"`
	// ServiceScale multiplies every class's service time for this
	// variant: a synthetic change of the server, for checking that a
	// comparison catches it ("lbbench run --inject-slowdown 1.2"). Zero
	// means 1.
	ServiceScale float64 `yaml:"service_scale,omitempty" json:"service_scale,omitempty"`
	// ProxyCost and WorkerCost are CPU time spent in busy work, for this
	// variant, by the built-in proxy on every request it forwards (layer
	// 4: every client connection) and by every built-in worker on every
	// request, after its service time: a synthetic cost regression, for
	// checking that a comparison judging CPU per request catches it. They
	// are set by "lbbench run --baseline REF --inject-cost ROLE=D" on this
	// build's variants, never by a scenario file (the model does not
	// simulate them). Zero means none.
	ProxyCost  time.Duration `yaml:"-" json:"proxy_cost,omitempty"`
	WorkerCost time.Duration `yaml:"-" json:"worker_cost,omitempty"`
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
	// Preopen opens that many connections to each worker endpoint before
	// the run (l7, l7-pools, shared-unix; keep-alive on, no close_after)
	// and sends each request on the one idle the longest: a front that
	// keeps many connections to its workers, all in use. Zero means
	// connections opened on demand, the last used reused first.
	Preopen int `yaml:"preopen,omitempty" json:"preopen,omitempty"`
	// Retries is how many other workers a request (or, in l4, a
	// connection) may try after one refused the connection (l4, l7,
	// l7-pools); zero means none.
	Retries int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// Pools route path prefixes to their own workers and policy
	// (l7-pools only, where they are required).
	Pools []Pool `yaml:"pools,omitempty" json:"pools,omitempty"`
	// Threads is how many CPUs the proxy may use at once: nginx's
	// worker_processes, HAProxy's nbthread, the built-in proxy's
	// GOMAXPROCS. Zero means each one's default (nginx auto, HAProxy and
	// the built-in proxy one per CPU). Comparing proxies at one thread
	// each compares their code, not how they spread over cores.
	Threads int `yaml:"threads,omitempty" json:"threads,omitempty"`
}

// MaxProxyThreads bounds ProxySpec.Threads.
const MaxProxyThreads = 256

// KeepAliveOn reports whether upstream keep-alive is on (nil means on).
func (p ProxySpec) KeepAliveOn() bool { return p.UpstreamKeepAlive == nil || *p.UpstreamKeepAlive }

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
// engine that runs them, as cat lists them: cat.Policies for Builtin,
// cat.EnginePolicies for Nginx and HAProxy.
func (v Variant) Validate(cat Catalog) error {
	policies := cat.Policies
	if err := field.Name("name", v.Name); err != nil {
		return err
	}
	if err := v.validateBalancer(policies, cat.PolicyArgs); err != nil {
		return err
	}
	if err := v.validateWorkerOptions(cat.Accept); err != nil {
		return err
	}
	if err := validateAcceptWhen("accept_when", v.AcceptWhen); err != nil {
		return err
	}
	if err := v.validateCost(); err != nil {
		return err
	}
	if v.Target != nil {
		if err := (Workers{Count: 1, Target: v.Target}).validateTarget(); err != nil {
			return err
		}
		if v.AcceptWhen == AcceptIdle {
			return fieldErr("accept_when", "idle needs the built-in worker; a target accepts its own way")
		}
	}
	if t := v.Proxy.Threads; t != 0 {
		if t < 0 || t > MaxProxyThreads {
			return fieldErr("proxy.threads", "must be between 0 and %d (0: the proxy's default), got %d", MaxProxyThreads, t)
		}
		if v.Topology != Proxy && v.Topology != Unix && !balancerTopology(v.Topology) {
			return fieldErr("proxy.threads", "is only for topologies with a proxy (%s, %s, %s, %s, %s, %s)", Proxy, Unix, L4, L7, L7Pools, SharedUnix)
		}
	}
	switch v.Topology {
	case "":
		return fieldErr("topology", "is required (known: %v)", Topologies())
	case Proxy, Unix:
		switch v.Proxy.Engine {
		case Builtin:
			if !slices.Contains(policies, v.Proxy.Policy) {
				return fieldErr("proxy.policy", "unknown policy %q (known: %v)", v.Proxy.Policy, policies)
			}
		case Nginx, HAProxy:
			if !slices.Contains(cat.EnginePolicies[v.Proxy.Engine], v.Proxy.Policy) {
				return fieldErr("proxy.policy", "engine %s does not support policy %q (%s supports: %v)",
					v.Proxy.Engine, v.Proxy.Policy, v.Proxy.Engine, cat.EnginePolicies[v.Proxy.Engine])
			}
		default:
			return fieldErr("proxy.engine", "unknown engine %q (known: %s, %s, %s)", v.Proxy.Engine, Builtin, HAProxy, Nginx)
		}
	default:
		if !slices.Contains(Topologies(), v.Topology) {
			return fieldErr("topology", "unknown topology %q (known: %v)", v.Topology, Topologies())
		}
	}
	return nil
}

// L4 gives each worker its own port behind the built-in proxy in layer-4
// mode: it picks a worker once per client TCP connection, then copies
// bytes both ways, so every request of a keep-alive connection goes to the
// same worker.
const L4 = "l4"

// L7 gives each worker its own port behind the built-in proxy deciding per
// request (the proxy topology with the built-in engine, plus the proxy's
// connection controls: policy_args, close_after, max_idle, retries).
const L7 = "l7"

// balancerTopology reports whether topology runs the built-in balancer with
// its full set of options.
func balancerTopology(topology string) bool {
	return topology == L4 || topology == L7 || topology == L7Pools || topology == SharedUnix
}

// balancerDefaults fills the proxy defaults of the balancer topologies:
// engine, policy, and each pool's policy (the variant's).
func (v Variant) balancerDefaults() Variant {
	if !balancerTopology(v.Topology) {
		return v
	}
	if v.Proxy.Engine == "" {
		v.Proxy.Engine = DefaultEngine
	}
	if v.Proxy.Policy == "" {
		v.Proxy.Policy = DefaultPolicy
	}
	v.Proxy.Pools = slices.Clone(v.Proxy.Pools)
	for i := range v.Proxy.Pools {
		if v.Proxy.Pools[i].Policy == "" {
			v.Proxy.Pools[i].Policy = v.Proxy.Policy
		}
	}
	return v
}

// validateBalancer checks the proxy options that only the balancer
// topologies use: elsewhere they must be unset; there, they must make
// sense. policies are the built-in proxy's policy names.
func (v Variant) validateBalancer(policies []string, check func(string, map[string]string) error) error {
	p := v.Proxy
	if !balancerTopology(v.Topology) {
		for _, f := range []struct {
			field string
			set   bool
		}{
			{"policy_args", len(p.PolicyArgs) > 0}, {"close_after", p.CloseAfter != 0},
			{"max_idle", p.MaxIdle != 0}, {"preopen", p.Preopen != 0}, {"retries", p.Retries != 0}, {"pools", len(p.Pools) > 0},
		} {
			if f.set {
				return fieldErr("proxy."+f.field, "is only for topologies %s, %s, %s and %s (the built-in balancer)", L4, L7, L7Pools, SharedUnix)
			}
		}
		return nil
	}
	if p.Engine != Builtin {
		return fieldErr("proxy.engine", "topology %s runs the built-in proxy only, got %q (for nginx or haproxy use topology %s)", v.Topology, p.Engine, Proxy)
	}
	if err := checkPolicy("proxy", p.Policy, p.PolicyArgs, policies, check); err != nil {
		return err
	}
	if p.Policy == "hash" && v.Topology == L4 {
		return fieldErr("proxy.policy", "hash needs the request, so a layer-7 topology (%s or %s)", L7, L7Pools)
	}
	switch {
	case p.CloseAfter < 0:
		return fieldErr("proxy.close_after", "must be >= 0, got %d", p.CloseAfter)
	case p.CloseAfter > 0 && v.Topology == L4:
		return fieldErr("proxy.close_after", "needs a layer-7 topology (%s or %s): layer 4 does not see requests", L7, L7Pools)
	case p.CloseAfter > 0 && !p.KeepAliveOn():
		return fieldErr("proxy.close_after", "needs upstream_keepalive on (with it off every connection carries one request)")
	case p.MaxIdle < 0 || p.MaxIdle > workloads.MaxConnections:
		return fieldErr("proxy.max_idle", "must be between 0 and %d (idle connections per worker; the client opens at most that many), got %d", workloads.MaxConnections, p.MaxIdle)
	case p.MaxIdle > 0 && v.Topology == L4:
		return fieldErr("proxy.max_idle", "needs a layer-7 topology (%s or %s): layer 4 keeps no idle connections", L7, L7Pools)
	case p.Preopen < 0 || p.Preopen > workloads.MaxConnections:
		return fieldErr("proxy.preopen", "must be between 0 and %d (connections per worker endpoint), got %d", workloads.MaxConnections, p.Preopen)
	case p.Preopen > 0 && v.Topology == L4:
		return fieldErr("proxy.preopen", "needs a layer-7 topology (%s, %s or %s): layer 4 opens one upstream connection per client connection", L7, L7Pools, SharedUnix)
	case p.Preopen > 0 && (!p.KeepAliveOn() || p.CloseAfter > 0):
		return fieldErr("proxy.preopen", "keeps its connections for the run: it needs upstream_keepalive on and no close_after")
	case p.Preopen > 0 && p.MaxIdle > 0 && p.Preopen > p.MaxIdle:
		return fieldErr("proxy.preopen", "%d connections per worker is more than max_idle %d keeps idle", p.Preopen, p.MaxIdle)
	case p.Retries != 0 && v.Topology == SharedUnix:
		return fieldErr("proxy.retries", "topology %s has one upstream, the shared socket: there is no other worker to retry on", SharedUnix)
	case p.Retries < 0 || p.Retries >= MaxWorkers:
		return fieldErr("proxy.retries", "must be between 0 and %d (other workers to try; there are at most %d workers), got %d", MaxWorkers-1, MaxWorkers, p.Retries)
	}
	if v.Topology != L7Pools {
		if len(p.Pools) > 0 {
			return fieldErr("proxy.pools", "routing by path needs topology %s", L7Pools)
		}
		return nil
	}
	return validatePools(p.Pools, policies, check)
}

// checkPolicy checks a policy name and its argument names, and their values
// with check when it is set (otherwise the proxy checks them when it
// starts).
func checkPolicy(field, policy string, args map[string]string, policies []string, check func(string, map[string]string) error) error {
	if !slices.Contains(policies, policy) {
		return fieldErr(field+".policy", "unknown policy %q (known: %v)", policy, policies)
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if !validName(k, false) {
			return fieldErr(field+".policy_args", "argument name %q must be made of a-z, 0-9 and _", k)
		}
	}
	if check != nil {
		if err := check(policy, args); err != nil {
			return fieldErr(field+".policy_args", "%v", err)
		}
	}
	return nil
}

// validName reports whether s is made of a-z, 0-9, _ and, if dash, -.
func validName(s string, dash bool) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && (!dash || c != '-') {
			return false
		}
	}
	return true
}

// L7Pools gives each worker its own port behind the built-in layer-7 proxy,
// which routes each request by path prefix to one of ProxySpec.Pools, each
// with its own workers and policy: for example /event to a write pool and
// everything else to a read pool.
const L7Pools = "l7-pools"

// Pool is a set of workers serving the requests whose path starts with
// Prefix (topology l7-pools).
type Pool struct {
	// Name labels the pool in the proxy's counters; required, unique, made
	// of a-z, 0-9, _ and -, and not "default".
	Name string `yaml:"name" json:"name"`
	// Prefix is a plain path prefix starting with "/" (/event also matches
	// /events); required and unique. The longest matching prefix wins; one
	// pool must have prefix "/" to take every other path.
	Prefix string `yaml:"prefix" json:"prefix"`
	// Policy is the pool's policy; empty means the variant's proxy.policy.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// PolicyArgs are the pool's policy arguments; nil means none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// Workers are the indexes (from 0) of the pool's workers; at least one.
	// A worker may be in several pools.
	Workers []int `yaml:"workers" json:"workers"`
}

// validatePools checks the pools of an l7-pools variant. Worker indexes are
// checked against workers.count when the variant is rendered.
func validatePools(pools []Pool, policies []string, check func(string, map[string]string) error) error {
	if len(pools) == 0 {
		return fieldErr("proxy.pools", "topology %s needs at least one pool (for example {name: read, prefix: /, workers: [0, 1, 2]})", L7Pools)
	}
	names, prefixes := map[string]bool{}, map[string]bool{}
	for i, pl := range pools {
		f := fmt.Sprintf("proxy.pools[%d]", i)
		if !validName(pl.Name, true) || pl.Name == "default" {
			return fieldErr(f+".name", "%q must be made of a-z, 0-9, _ and - and not be \"default\"", pl.Name)
		}
		if names[pl.Name] {
			return fieldErr(f+".name", "duplicate pool name %q", pl.Name)
		}
		names[pl.Name] = true
		if !strings.HasPrefix(pl.Prefix, "/") || strings.Contains(pl.Prefix, ":") {
			return fieldErr(f+".prefix", "must start with / and hold no ':', got %q", pl.Prefix)
		}
		if prefixes[pl.Prefix] {
			return fieldErr(f+".prefix", "duplicate prefix %q", pl.Prefix)
		}
		prefixes[pl.Prefix] = true
		if err := checkPolicy(f, pl.Policy, pl.PolicyArgs, policies, check); err != nil {
			return err
		}
		if len(pl.Workers) == 0 {
			return fieldErr(f+".workers", "at least one worker index is required")
		}
		for j, wi := range pl.Workers {
			if wi < 0 {
				return fieldErr(fmt.Sprintf("%s.workers[%d]", f, j), "must be a worker index >= 0, got %d", wi)
			}
			if slices.Index(pl.Workers, wi) != j {
				return fieldErr(fmt.Sprintf("%s.workers[%d]", f, j), "worker %d listed twice", wi)
			}
		}
	}
	if !prefixes["/"] {
		return fieldErr("proxy.pools", "one pool needs prefix / to take the paths no other pool matches")
	}
	return nil
}

// Shared runs N workers that inherit one listening socket, made by the
// supervisor, as a pre-forking server does; which worker takes a connection
// depends on how the workers wait for it (Variant.Accept).
const Shared = "shared"

// SharedUnix runs N workers that inherit one listening Unix socket, as
// Shared does on TCP, behind the built-in layer-7 proxy (a local front)
// whose one upstream is that socket: which worker serves a request is
// decided when a worker accepts the front's connection, so the front's
// upstream keep-alive (on, off, close_after N) decides how often a busy
// worker can be passed over. Worker options as Shared, proxy options as
// L7 (no retries, no pools: there is one upstream).
const SharedUnix = "shared-unix"

// acceptTopology reports whether topology's workers share one inherited
// socket, so that how they accept (Variant.Accept, MaxConns) matters.
func acceptTopology(topology string) bool { return topology == Shared || topology == SharedUnix }

// validateWorkerOptions checks the worker options of v: Accept and
// MaxConns, which belong to the shared topology, and ServiceScale.
func (v Variant) validateWorkerOptions(accept []string) error {
	if v.Accept != "" {
		if !acceptTopology(v.Topology) {
			return fieldErr("accept", "is an option of the %s and %s topologies only (topology is %q)", Shared, SharedUnix, v.Topology)
		}
		if !slices.Contains(accept, v.Accept) {
			return fieldErr("accept", "unknown accept strategy %q (known: %v)", v.Accept, accept)
		}
	}
	if v.ServiceScale != 0 && !(v.ServiceScale >= 0.1 && v.ServiceScale <= 10) {
		return fieldErr("service_scale", "must be between 0.1 and 10 (0: 1), got %g", v.ServiceScale)
	}
	if v.MaxConns != 0 {
		if !acceptTopology(v.Topology) {
			return fieldErr("max_conns", "is an option of the %s and %s topologies only (topology is %q)", Shared, SharedUnix, v.Topology)
		}
		if v.MaxConns < 0 {
			return fieldErr("max_conns", "must be >= 0 (0: no limit), got %d", v.MaxConns)
		}
	}
	return nil
}

// BuiltinProxy reports whether v runs the built-in proxy: a balancer
// topology, or the proxy or unix topology with the built-in engine.
func (v Variant) BuiltinProxy() bool {
	return balancerTopology(v.Topology) || ((v.Topology == Proxy || v.Topology == Unix) && v.Proxy.Engine == Builtin)
}

// validateCost checks v's injected costs: within busywork.Max, a proxy
// cost only where the built-in proxy runs and a worker cost only for the
// built-in worker (a variant's target; workers.target is checked by
// Scenario.Validate).
func (v Variant) validateCost() error {
	for _, c := range []struct {
		field string
		d     time.Duration
	}{{"proxy_cost", v.ProxyCost}, {"worker_cost", v.WorkerCost}} {
		if c.d < 0 || c.d > busywork.Max {
			return fieldErr(c.field, "must be between 0 (none) and %v of CPU per request, got %v", busywork.Max, c.d)
		}
	}
	if v.ProxyCost > 0 && !v.BuiltinProxy() {
		runs := fmt.Sprintf("engine %s runs this variant's proxy", v.Proxy.Engine)
		if v.Topology != Proxy && v.Topology != Unix {
			runs = fmt.Sprintf("topology %s has no proxy", v.Topology)
		}
		return fieldErr("proxy_cost", "an injected proxy cost (--inject-cost proxy=D) needs the built-in proxy; %s", runs)
	}
	if v.WorkerCost > 0 && v.Target != nil {
		return fieldErr("worker_cost", "an injected worker cost (--inject-cost workers=D) needs the built-in worker; the variant's target runs a foreign server")
	}
	return nil
}

// Unix gives each worker its own Unix socket and puts a reverse proxy (any
// engine of the proxy topology) in front of them: the proxy topology
// without TCP between the proxy and the workers.
const Unix = "unix"
