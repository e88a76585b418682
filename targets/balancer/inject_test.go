package balancer

import (
	"io"
	"net/http"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is this process's CPU time so far (every thread).
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// TestInjectCost: with Config.InjectCost the proxy spends at least that
// much CPU per request in layer 7 (both forwarders) and per client
// connection in layer 4. The process's CPU clock counts the proxy, the
// backends and the client alike, so only the lower bound is checked.
func TestInjectCost(t *testing.T) {
	const cost, n = 2 * time.Millisecond, 20
	for _, tc := range []struct {
		name string
		cfg  Config
		// fresh sends each request on a new connection.
		fresh bool
	}{
		{"l7", Config{}, false},
		{"l7 net/http", Config{NetHTTP: true}, false},
		{"l4", Config{Mode: L4}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Upstreams, cfg.UpstreamKeepAlive, cfg.InjectCost = startBackends(t, 2, nil), true, cost
			tp := startProxy(t, cfg)
			tr := &http.Transport{DisableKeepAlives: tc.fresh}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			before := processCPU(t)
			for range n {
				resp, err := client.Get(tp.url + "/")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %s", resp.Status)
				}
			}
			if spent := processCPU(t) - before; spent < n*cost {
				t.Errorf("%d requests with an injected cost of %s used %s of CPU, want at least %s", n, cost, spent, n*cost)
			}
		})
	}
}
