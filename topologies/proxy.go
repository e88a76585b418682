package topologies

import (
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
)

func init() { renderers[scenario.Proxy] = renderProxy }

// renderProxy: one "lbbench serve" with worker i on its own port base+i, and
// the proxy of v.Proxy.Engine (built-in, nginx or HAProxy) listing those
// ports as upstreams.
func renderProxy(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
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
	ups := make([]string, w.Count)
	for i := range ups {
		ups[i] = a.hostPort(base + i)
	}
	proxy, err := proxyProcess(v, ups, listen, padmin, a)
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Entry:     "http://" + listen,
		Processes: []Process{serve(w, prefork.Ports, a.a.Host(), base, wadmin), proxy},
	}, nil
}

// proxyProcess is the proxy of v.Proxy.Engine (built-in, nginx or HAProxy)
// listening on listen with its admin API on padmin, in front of ups.
func proxyProcess(v scenario.Variant, ups []string, listen, padmin string, a *alloc) (Process, error) {
	if v.Proxy.Engine != scenario.Builtin {
		// nginx or HAProxy in place of the built-in proxy (engines.go),
		// from the driver when it supplies the engines.
		finder, _ := a.a.(EngineFinder)
		p, err := EngineProcess(v.Proxy, ups, listen, padmin, finder)
		if err != nil {
			return Process{}, fmt.Errorf("topologies: %s: %w", v.Name, err)
		}
		return p, nil
	}
	return Process{
		Role: RoleProxy,
		Proxy: &balancer.Command{Listen: listen, Admin: padmin, Config: balancer.Config{
			Upstreams:         ups,
			Policy:            v.Proxy.Policy,
			UpstreamKeepAlive: v.Proxy.KeepAliveOn(),
		}},
		Health:    "http://" + padmin + "/healthz",
		Stats:     "http://" + padmin + "/stats",
		StatsKind: StatsProxy,
	}, nil
}
