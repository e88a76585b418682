package topologies

import (
	"strconv"
	"strings"
)

func init() { renderers[Proxy] = renderProxy }

// renderProxy: one "lbbench serve" with worker i on its own port base+i, and
// the built-in proxy listing those ports as upstreams.
func renderProxy(v Variant, w Workers, a *alloc) (Plan, error) {
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
	return Plan{
		Entry: "http://" + listen,
		Processes: []Process{
			serve(w, "ports", a.a.Host(), base, wadmin),
			{
				Role: RoleProxy,
				Args: []string{"proxy",
					"--listen", listen,
					"--admin", padmin,
					"--upstreams", strings.Join(ups, ","),
					"--policy", v.Proxy.Policy,
					"--upstream-keepalive=" + strconv.FormatBool(v.Proxy.KeepAliveOn()),
				},
				Health:    "http://" + padmin + "/healthz",
				Stats:     "http://" + padmin + "/stats",
				StatsKind: StatsProxy,
			},
		},
	}, nil
}
