package topologies

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/scenario"
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
