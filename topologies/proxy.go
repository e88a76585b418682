package topologies

import (
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
)

func init() { renderers[scenario.Proxy] = renderProxy }

// renderProxy: one "lbbench serve" with worker i on its own port base+i, and
// the proxy of v.Proxy.Engine (built-in, nginx or HAProxy) listing those
// ports as upstreams.
func renderProxy(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	pw, err := a.portWorkers(w.Count)
	if err != nil {
		return Plan{}, err
	}
	proxy, err := proxyProcess(v, a.upstreams(pw.base, w.Count), pw.listen, pw.padmin, a)
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Entry:     "http://" + pw.listen,
		Processes: []Process{serve(w, prefork.Ports, a.a.Host(), pw.base, pw.wadmin), proxy},
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
	// The balancer's own options (close_after, max_idle, retries, policy
	// arguments) are refused on this topology, so only policy, keep-alive
	// and threads reach the command; the mode is the proxy's default.
	cmd := balancerCommand(v.Proxy, "", listen, padmin)
	cmd.Upstreams = ups
	return builtinProxy(cmd, padmin), nil
}
