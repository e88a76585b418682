package main

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestServeReusePortRefusesHeldPort: "serve --listen reuseport" on a port
// another process already listens on with SO_REUSEPORT (this test
// process; then a first "lbbench serve") is refused, instead of sharing
// the port with the stranger; the first serve goes on alone.
func TestServeReusePortRefusesHeldPort(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	refused := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "serve", "--workers", "2", "--listen", "reuseport", "--port", port, "--admin", "127.0.0.1:"+strconv.Itoa(freePort(t))).CombinedOutput()
		if err == nil {
			t.Fatalf("serve started on a port %s holds with SO_REUSEPORT:\n%s", what, out)
		}
		if !strings.Contains(string(out), "address already in use") {
			t.Errorf("message does not say another process holds the port:\n%s", out)
		}
	}
	refused("this test")
	ln.Close()

	// Now a first serve holds it: a second one is refused.
	admin := freePort(t)
	first, log := start(t, "serve", "--workers", "2", "--listen", "reuseport", "--port", port, "--admin", "127.0.0.1:"+strconv.Itoa(admin))
	waitHealthy(t, "http://127.0.0.1:"+strconv.Itoa(admin)+"/healthz")
	refused("a first lbbench serve")
	// The first serve still serves the port, alone.
	for range 10 {
		if w := get(t, "http://127.0.0.1:"+port+"/"); w != "0" && w != "1" {
			t.Errorf("X-Worker %q from the port, want the first serve's 0 or 1\n%s", w, log.String())
		}
	}
	first.Process.Signal(syscall.SIGTERM)
	first.Wait()
	waitNoProcs(t)
}
