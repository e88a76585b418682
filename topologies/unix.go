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
// upstreams; DIR as unixWorkers makes it.
func renderUnix(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	u, err := a.unixWorkers()
	if err != nil {
		return Plan{}, err
	}
	dir, wadmin, listen, padmin := u.dir, u.wadmin, u.listen, u.padmin
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

// unixWorkers is what a proxy in front of workers on Unix sockets needs:
// the sockets' directory, the workers' admin address and the proxy's
// listen and admin addresses.
type unixWorkers struct {
	dir, wadmin, listen, padmin string
}

// unixWorkers allocates a unixWorkers. The directory is a short path under
// the system's temporary directory (socket paths are limited to 107
// bytes), named after a port taken from the allocator so that concurrent
// plans never share it; serve makes it and removes it.
func (a *alloc) unixWorkers() (unixWorkers, error) {
	var addrs [4]string // unique token, workers' admin, proxy listen, proxy admin
	for i := range addrs {
		var err error
		if addrs[i], err = a.addr(); err != nil {
			return unixWorkers{}, err
		}
	}
	_, token, _ := strings.Cut(addrs[0], ":")
	return unixWorkers{dir: filepath.Join(os.TempDir(), "lbbench-unix-"+token), wadmin: addrs[1], listen: addrs[2], padmin: addrs[3]}, nil
}
