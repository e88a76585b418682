package topologies

import (
	"cmp"
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
	if err := checkSharedTarget(v, w); err != nil {
		return Plan{}, err
	}
	port, err := a.ports(1)
	if err != nil {
		return Plan{}, err
	}
	admin, err := a.addr()
	if err != nil {
		return Plan{}, err
	}
	return Plan{Entry: "http://" + a.hostPort(port), Processes: []Process{sharedServe(v, w, a.a.Host(), port, admin)}}, nil
}

// checkSharedTarget refuses accept options for a foreign target, which
// accepts its own way.
func checkSharedTarget(v scenario.Variant, w scenario.Workers) error {
	if w.Target != nil && (v.Accept != "" || v.MaxConns != 0) {
		return fmt.Errorf("topologies: %s: accept and max_conns need the built-in worker, not workers.target", v.Name)
	}
	return nil
}

// sharedServe is "lbbench serve --listen shared" on host:port with the
// variant's accept strategy and connection limit for the built-in worker.
func sharedServe(v scenario.Variant, w scenario.Workers, host string, port int, admin string) Process {
	p := serve(w, prefork.Shared, host, port, admin)
	if w.Target == nil {
		p.Serve.Worker.Accept, p.Serve.Worker.MaxConns = cmp.Or(v.Accept, worker.DefaultAccept), v.MaxConns
	}
	return p
}
