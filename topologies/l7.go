package topologies

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// L7 gives each worker its own port behind the built-in proxy deciding per
// request (the proxy topology with the built-in engine, plus the proxy's
// connection controls: policy_args, close_after, max_idle, retries).
const L7 = "l7"

func init() { renderers[L7] = renderL7 }

// renderL7: one "lbbench serve" with worker i on port base+i, and the
// built-in proxy in layer-7 mode listing those ports.
func renderL7(v Variant, w Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l7")
}

// balancerTopology reports whether topology runs the built-in balancer with
// its full set of options.
func balancerTopology(topology string) bool {
	return topology == L4 || topology == L7 || topology == L7Pools
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
func (v Variant) validateBalancer(policies []string) error {
	p := v.Proxy
	if !balancerTopology(v.Topology) {
		for _, f := range []struct {
			field string
			set   bool
		}{
			{"policy_args", len(p.PolicyArgs) > 0}, {"close_after", p.CloseAfter != 0},
			{"max_idle", p.MaxIdle != 0}, {"retries", p.Retries != 0}, {"pools", len(p.Pools) > 0},
		} {
			if f.set {
				return fieldErr("proxy."+f.field, "is only for topologies %s, %s and %s (the built-in balancer)", L4, L7, L7Pools)
			}
		}
		return nil
	}
	if p.Engine != Builtin {
		return fieldErr("proxy.engine", "topology %s runs the built-in proxy only, got %q (for nginx or haproxy use topology %s)", v.Topology, p.Engine, Proxy)
	}
	if err := checkPolicy("proxy", p.Policy, p.PolicyArgs, policies); err != nil {
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
	case p.MaxIdle < 0:
		return fieldErr("proxy.max_idle", "must be >= 0, got %d", p.MaxIdle)
	case p.MaxIdle > 0 && v.Topology == L4:
		return fieldErr("proxy.max_idle", "needs a layer-7 topology (%s or %s): layer 4 keeps no idle connections", L7, L7Pools)
	case p.Retries < 0:
		return fieldErr("proxy.retries", "must be >= 0, got %d", p.Retries)
	}
	if v.Topology != L7Pools {
		if len(p.Pools) > 0 {
			return fieldErr("proxy.pools", "routing by path needs topology %s", L7Pools)
		}
		return nil
	}
	return validatePools(p.Pools, policies)
}

// checkPolicy checks a policy name and its argument names (their values are
// checked by the proxy when it starts).
func checkPolicy(field, policy string, args map[string]string, policies []string) error {
	if !slices.Contains(policies, policy) {
		return fieldErr(field+".policy", "unknown policy %q (known: %v)", policy, policies)
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if !validName(k, false) {
			return fieldErr(field+".policy_args", "argument name %q must be made of a-z, 0-9 and _", k)
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

// renderBalancer: one "lbbench serve" with worker i on port base+i, and
// "lbbench proxy" in the given mode in front: the workers as its default
// pool, or split into v.Proxy.Pools.
func renderBalancer(v Variant, w Workers, a *alloc, mode string) (Plan, error) {
	base, err := a.ports(w.Count)
	if err != nil {
		return Plan{}, err
	}
	var addrs [3]string // workers' admin, proxy listen, proxy admin
	for i := range addrs {
		if addrs[i], err = a.addr(); err != nil {
			return Plan{}, err
		}
	}
	wadmin, listen, padmin := addrs[0], addrs[1], addrs[2]
	p := v.Proxy
	args := []string{"proxy",
		"--mode", mode,
		"--listen", listen,
		"--admin", padmin,
		"--policy", p.Policy,
		"--upstream-keepalive=" + strconv.FormatBool(p.KeepAliveOn()),
	}
	if len(p.Pools) == 0 {
		ups := make([]string, w.Count)
		for i := range ups {
			ups[i] = a.hostPort(base + i)
		}
		args = append(args, "--upstreams", strings.Join(ups, ","))
	}
	for i, pl := range p.Pools {
		ups := make([]string, len(pl.Workers))
		for j, wi := range pl.Workers {
			if wi >= w.Count {
				return Plan{}, fmt.Errorf("topologies: %s: proxy.pools[%d].workers[%d]: worker %d does not exist (workers.count is %d)", v.Name, i, j, wi, w.Count)
			}
			ups[j] = a.hostPort(base + wi)
		}
		args = append(args, "--pool", pl.Name+":"+pl.Prefix+":"+pl.Policy+":"+strings.Join(ups, ","))
	}
	args = appendPolicyArgs(args, "", p.PolicyArgs)
	for _, pl := range p.Pools {
		args = appendPolicyArgs(args, pl.Name+".", pl.PolicyArgs)
	}
	for _, f := range []struct {
		flag string
		n    int
	}{{"--close-after", p.CloseAfter}, {"--max-idle", p.MaxIdle}, {"--retries", p.Retries}} {
		if f.n > 0 {
			args = append(args, f.flag, strconv.Itoa(f.n))
		}
	}
	return Plan{
		Entry: "http://" + listen,
		Processes: []Process{
			serve(w, "ports", a.a.Host(), base, wadmin),
			{
				Role:      RoleProxy,
				Args:      args,
				Health:    "http://" + padmin + "/healthz",
				Stats:     "http://" + padmin + "/stats",
				StatsKind: StatsProxy,
			},
		},
	}, nil
}

// appendPolicyArgs adds --policy-arg flags in key order, so plans are
// reproducible.
func appendPolicyArgs(args []string, scope string, m map[string]string) []string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		args = append(args, "--policy-arg", scope+k+"="+m[k])
	}
	return args
}
