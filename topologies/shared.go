package topologies

import (
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

func init() { renderers[scenario.Shared] = renderShared }

// renderShared: one "lbbench serve --listen shared" on one port, with the
// variant's accept strategy and connection limit; load goes straight to
// that port. A foreign target gets {workers} and forks its own workers on
// the port.
func renderShared(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	if w.Target != nil && (v.Accept != "" || v.MaxConns != 0) {
		return Plan{}, fmt.Errorf("topologies: %s: accept and max_conns need the built-in worker, not workers.target", v.Name)
	}
	port, err := a.ports(1)
	if err != nil {
		return Plan{}, err
	}
	admin, err := a.addr()
	if err != nil {
		return Plan{}, err
	}
	p := serve(w, prefork.Shared, a.a.Host(), port, admin)
	if w.Target == nil {
		accept := v.Accept
		if accept == "" {
			accept = worker.DefaultAccept
		}
		p.Serve.Worker.Accept, p.Serve.Worker.MaxConns = accept, v.MaxConns
	}
	return Plan{Entry: "http://" + a.hostPort(port), Processes: []Process{p}}, nil
}
