package topologies

import (
	"cmp"
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

func init() { renderers[scenario.SharedUnix] = renderSharedUnix }

// renderSharedUnix: one "lbbench serve --listen shared --socket-dir DIR",
// whose workers all accept on DIR/shared.sock with the variant's accept
// strategy, and the built-in layer-7 proxy in front with that one socket
// as its only upstream: a local front reaching pre-forked event-loop
// workers over a Unix socket. Which worker serves a request is decided
// when a worker accepts the front's connection, so the proxy's upstream
// keep-alive (on, off, or close_after N) decides how often that happens.
// DIR is made as renderUnix's (unixWorkers).
func renderSharedUnix(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	if w.Target != nil && (v.Accept != "" || v.MaxConns != 0) {
		return Plan{}, fmt.Errorf("topologies: %s: accept and max_conns need the built-in worker, not workers.target", v.Name)
	}
	u, err := a.unixWorkers()
	if err != nil {
		return Plan{}, err
	}
	workers := serve(w, prefork.Shared, a.a.Host(), 0, u.wadmin)
	workers.Serve.SocketDir = u.dir
	if w.Target == nil {
		workers.Serve.Worker.Accept = cmp.Or(v.Accept, worker.DefaultAccept)
		workers.Serve.Worker.MaxConns = v.MaxConns
	}
	p := v.Proxy
	cmd := &balancer.Command{Listen: u.listen, Admin: u.padmin, Threads: p.Threads, Config: balancer.Config{
		Mode:              balancer.L7,
		Policy:            p.Policy,
		PolicyArgs:        p.PolicyArgs,
		UpstreamKeepAlive: p.KeepAliveOn(),
		CloseAfter:        p.CloseAfter,
		MaxIdle:           p.MaxIdle,
		Upstreams:         []string{prefork.UnixPrefix + prefork.SharedSocketPath(u.dir)},
	}}
	return Plan{Entry: "http://" + u.listen, Processes: []Process{workers, builtinProxy(cmd, u.padmin)}}, nil
}
