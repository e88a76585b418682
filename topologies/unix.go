package topologies

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
)

func init() { renderers[scenario.Unix] = renderUnix }

// renderUnix: one "lbbench serve --listen unix" with worker i on
// DIR/worker-i.sock, and the proxy of v.Proxy listing those sockets as
// upstreams. DIR is a short path under the system's temporary directory
// (socket paths are limited to 107 bytes), named after a port taken from
// the allocator so that concurrent plans never share it; serve makes it
// and removes it.
func renderUnix(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
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
	ups := make([]string, w.Count)
	for i := range ups {
		ups[i] = prefork.UnixPrefix + prefork.SocketPath(dir, i)
	}
	workers := serve(w, prefork.Unix, a.a.Host(), 0, wadmin)
	workers.Serve.SocketDir = dir
	proxy, err := proxyProcess(v, ups, listen, padmin, a)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Entry: "http://" + listen, Processes: []Process{workers, proxy}}, nil
}
