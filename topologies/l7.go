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
	cmd := &balancer.Command{Listen: listen, Admin: padmin, Config: balancer.Config{
		Mode:              balancer.Mode(mode),
		Policy:            p.Policy,
		PolicyArgs:        p.PolicyArgs,
		UpstreamKeepAlive: p.KeepAliveOn(),
		CloseAfter:        p.CloseAfter,
		MaxIdle:           p.MaxIdle,
		Retries:           p.Retries,
	}}
	if len(p.Pools) == 0 {
		cmd.Upstreams = make([]string, w.Count)
		for i := range cmd.Upstreams {
			cmd.Upstreams[i] = a.hostPort(base + i)
		}
	}
	for i, pl := range p.Pools {
		ups := make([]string, len(pl.Workers))
		for j, wi := range pl.Workers {
			if wi >= w.Count { // scenario.Validate refuses this; Render may be called without it
				return Plan{}, fmt.Errorf("topologies: %s: proxy.pools[%d].workers[%d]: worker %d does not exist (workers.count is %d)", v.Name, i, j, wi, w.Count)
			}
			ups[j] = a.hostPort(base + wi)
		}
		cmd.Pools = append(cmd.Pools, balancer.Pool{Name: pl.Name, Prefix: pl.Prefix, Policy: pl.Policy, PolicyArgs: pl.PolicyArgs, Upstreams: ups})
	}
	return Plan{
		Entry: "http://" + listen,
		Processes: []Process{
			serve(w, prefork.Ports, a.a.Host(), base, wadmin),
			{
				Role:      RoleProxy,
				Proxy:     cmd,
				Health:    "http://" + padmin + "/healthz",
				Stats:     "http://" + padmin + "/stats",
				StatsKind: StatsProxy,
			},
		},
	}, nil
}
