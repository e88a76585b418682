package topologies

import (
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
)

func init() { renderers[scenario.L7] = renderL7 }

// renderL7: one "lbbench serve" with worker i on port base+i, and the
// built-in proxy in layer-7 mode listing those ports.
func renderL7(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l7")
}

// renderBalancer: one "lbbench serve" with worker i on port base+i, and
// "lbbench proxy" in the given mode in front: the workers as its default
// pool, or split into v.Proxy.Pools.
func renderBalancer(v scenario.Variant, w scenario.Workers, a *alloc, mode string) (Plan, error) {
	pw, err := a.portWorkers(w.Count)
	if err != nil {
		return Plan{}, err
	}
	p := v.Proxy
	cmd := balancerCommand(p, balancer.Mode(mode), pw.listen, pw.padmin)
	if len(p.Pools) == 0 {
		cmd.Upstreams = a.upstreams(pw.base, w.Count)
	}
	for i, pl := range p.Pools {
		ups := make([]string, len(pl.Workers))
		for j, wi := range pl.Workers {
			if wi >= w.Count { // scenario.Validate refuses this; Render may be called without it
				return Plan{}, fmt.Errorf("topologies: %s: proxy.pools[%d].workers[%d]: worker %d does not exist (workers.count is %d)", v.Name, i, j, wi, w.Count)
			}
			ups[j] = a.hostPort(pw.base + wi)
		}
		cmd.Pools = append(cmd.Pools, balancer.Pool{Name: pl.Name, Prefix: pl.Prefix, Policy: pl.Policy, PolicyArgs: pl.PolicyArgs, Upstreams: ups})
	}
	return Plan{
		Entry: "http://" + pw.listen,
		Processes: []Process{
			serve(w, prefork.Ports, a.a.Host(), pw.base, pw.wadmin),
			builtinProxy(cmd, pw.padmin),
		},
	}, nil
}

// balancerCommand is the built-in proxy in mode with p's options (no
// upstreams yet), listening on listen with its admin API on admin.
func balancerCommand(p scenario.ProxySpec, mode balancer.Mode, listen, admin string) *balancer.Command {
	return &balancer.Command{Listen: listen, Admin: admin, Threads: p.Threads, Config: balancer.Config{
		Mode:              mode,
		Policy:            p.Policy,
		PolicyArgs:        p.PolicyArgs,
		UpstreamKeepAlive: p.KeepAliveOn(),
		CloseAfter:        p.CloseAfter,
		MaxIdle:           p.MaxIdle,
		Preopen:           p.Preopen,
		Retries:           p.Retries,
	}}
}

// builtinProxy is the process of the built-in proxy cmd, its admin API on
// admin.
func builtinProxy(cmd *balancer.Command, admin string) Process {
	return Process{
		Role:      RoleProxy,
		Proxy:     cmd,
		Health:    "http://" + admin + "/healthz",
		Stats:     "http://" + admin + "/stats",
		StatsKind: StatsProxy,
	}
}
