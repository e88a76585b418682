package topologies

import (
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
)

func init() { renderers[scenario.ReusePort] = renderReusePort }

// renderReusePort: one "lbbench serve" whose N workers each hold a socket
// on the same port with SO_REUSEPORT; load goes straight to that port.
func renderReusePort(_ scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	port, err := a.ports(1)
	if err != nil {
		return Plan{}, err
	}
	admin, err := a.addr()
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Entry:     "http://" + a.hostPort(port),
		Processes: []Process{serve(w, prefork.ReusePort, a.a.Host(), port, admin)},
	}, nil
}
