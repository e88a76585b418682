package topologies

import (
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
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
	if err := checkSharedTarget(v, w); err != nil {
		return Plan{}, err
	}
	u, err := a.unixWorkers()
	if err != nil {
		return Plan{}, err
	}
	workers := sharedServe(v, w, a.a.Host(), 0, u.wadmin)
	workers.Serve.SocketDir = u.dir
	cmd := balancerCommand(v.Proxy, balancer.L7, u.listen, u.padmin)
	cmd.Upstreams = []string{prefork.UnixPrefix + prefork.SharedSocketPath(u.dir)}
	return Plan{Entry: "http://" + u.listen, Processes: []Process{workers, builtinProxy(cmd, u.padmin)}}, nil
}
