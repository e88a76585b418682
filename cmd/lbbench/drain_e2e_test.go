package main

import (
	"github.com/lbbench/lbbench/internal/testkit"

	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStopNotHeldBySilentConnections: a connection that was opened and
// never sent a byte (an HTTP client's spare connection, a TCP probe) does
// not hold the drain of "lbbench serve" or "lbbench proxy". net/http's
// Shutdown alone waits up to 5 s for such a connection; that held a run's
// teardown, and so Ctrl-C, for as long. With one silent connection on
// every listener, SIGTERM ends each process within 2 s, with status 0.
func TestStopNotHeldBySilentConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	base := testkit.ConsecutivePorts(t, 2)
	ps := testkit.FreePorts(t, 3)
	wadmin, listen, padmin := ps[0], ps[1], ps[2]
	serve := start(t, "serve", "--workers", "2", "--listen", "ports", "--port", strconv.Itoa(base),
		"--admin", "127.0.0.1:"+strconv.Itoa(wadmin))
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", wadmin))
	proxy := start(t, "proxy", "--listen", "127.0.0.1:"+strconv.Itoa(listen),
		"--admin", "127.0.0.1:"+strconv.Itoa(padmin),
		"--upstreams", fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", base, base+1))
	waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", padmin))

	for _, p := range []int{base, base + 1, wadmin, listen, padmin} {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	time.Sleep(100 * time.Millisecond) // accepted by every server

	for _, p := range []struct {
		name string
		cmd  *running
		out  func() string
	}{
		{"proxy", proxy, proxy.out.String},
		{"serve", serve, serve.out.String},
	} {
		p.cmd.signal(syscall.SIGTERM)
		select {
		case <-p.cmd.done:
			err := p.cmd.err
			if err != nil {
				t.Errorf("lbbench %s after SIGTERM: %v:\n%s", p.name, err, p.out())
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("lbbench %s still running 2 s after SIGTERM, held by silent connections:\n%s", p.name, p.out())
		}
	}
}
