package topologies

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/lbbench/lbbench/targets/worker"
)

// Shared runs N workers that inherit one listening socket, made by the
// supervisor, as a pre-forking server does; which worker takes a connection
// depends on how the workers wait for it (Variant.Accept).
const Shared = "shared"

func init() { renderers[Shared] = renderShared }

// renderShared: one "lbbench serve --listen shared" on one port, with the
// variant's accept strategy and connection limit; load goes straight to
// that port. A foreign target gets {workers} and forks its own workers on
// the port.
func renderShared(v Variant, w Workers, a *alloc) (Plan, error) {
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
	p := serve(w, "shared", a.a.Host(), port, admin)
	if w.Target == nil {
		accept := v.Accept
		if accept == "" {
			accept = worker.DefaultAccept
		}
		p.Args = append(p.Args, "--accept", accept, "--max-conns", strconv.Itoa(v.MaxConns))
	}
	return Plan{Entry: "http://" + a.hostPort(port), Processes: []Process{p}}, nil
}

// validateWorkerOptions checks the worker options of v: Accept and
// MaxConns, which belong to the shared topology.
func (v Variant) validateWorkerOptions() error {
	if v.Accept != "" {
		if v.Topology != Shared {
			return fieldErr("accept", "is an option of the shared topology only (topology is %q)", v.Topology)
		}
		if !slices.Contains(worker.AcceptStrategies(), v.Accept) {
			return fieldErr("accept", "unknown accept strategy %q (known: %v)", v.Accept, worker.AcceptStrategies())
		}
	}
	if v.MaxConns != 0 {
		if v.Topology != Shared {
			return fieldErr("max_conns", "is an option of the shared topology only (topology is %q)", v.Topology)
		}
		if v.MaxConns < 0 {
			return fieldErr("max_conns", "must be >= 0 (0: no limit), got %d", v.MaxConns)
		}
	}
	return nil
}
