package topologies

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// DIR is named as renderUnix names its own.
func renderSharedUnix(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	if w.Target != nil && (v.Accept != "" || v.MaxConns != 0) {
		return Plan{}, fmt.Errorf("topologies: %s: accept and max_conns need the built-in worker, not workers.target", v.Name)
	}
	var addrs [4]string // unique token, workers' admin, proxy listen, proxy admin
	for i := range addrs {
		var err error
		if addrs[i], err = a.addr(); err != nil {
			return Plan{}, err
		}
	}
	_, token, _ := strings.Cut(addrs[0], ":")
	wadmin, listen, padmin := addrs[1], addrs[2], addrs[3]
	dir := filepath.Join(os.TempDir(), "lbbench-unix-"+token)
	workers := serve(w, prefork.Shared, a.a.Host(), 0, wadmin)
	workers.Serve.SocketDir = dir
	if w.Target == nil {
		workers.Serve.Worker.Accept = cmp.Or(v.Accept, worker.DefaultAccept)
		workers.Serve.Worker.MaxConns = v.MaxConns
	}
	p := v.Proxy
	cmd := &balancer.Command{Listen: listen, Admin: padmin, Threads: p.Threads, Config: balancer.Config{
		Mode:              balancer.L7,
		Policy:            p.Policy,
		PolicyArgs:        p.PolicyArgs,
		UpstreamKeepAlive: p.KeepAliveOn(),
		CloseAfter:        p.CloseAfter,
		MaxIdle:           p.MaxIdle,
		Upstreams:         []string{prefork.UnixPrefix + prefork.SharedSocketPath(dir)},
	}}
	return Plan{Entry: "http://" + listen, Processes: []Process{workers, builtinProxy(cmd, padmin)}}, nil
}
