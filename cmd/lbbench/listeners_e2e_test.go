package main

import (
	"github.com/lbbench/lbbench/internal/testkit"

	"context"
	"errors"
	"net"
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
		r := invocation{args: []string{"serve", "--workers", "2", "--listen", "reuseport", "--port", port, "--admin", "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))}, limit: 20 * time.Second}.run(t)
		out := r.out
		if r.code == 0 {
			t.Fatalf("serve started on a port %s holds with SO_REUSEPORT:\n%s", what, out)
		}
		if !strings.Contains(string(out), "address already in use") {
			t.Errorf("message does not say another process holds the port:\n%s", out)
		}
	}
	refused("this test")
	ln.Close()

	// Now a first serve holds it: a second one is refused.
	admin := testkit.FreePort(t)
	first := start(t, "serve", "--workers", "2", "--listen", "reuseport", "--port", port, "--admin", "127.0.0.1:"+strconv.Itoa(admin))
	waitHealthy(t, "http://127.0.0.1:"+strconv.Itoa(admin)+"/healthz")
	refused("a first lbbench serve")
	// The first serve still serves the port, alone.
	for range 10 {
		if w := testkit.ServedBy(t, "http://127.0.0.1:"+port+"/"); w != "0" && w != "1" {
			t.Errorf("X-Worker %q from the port, want the first serve's 0 or 1\n%s", w, first.out)
		}
	}
	first.signal(syscall.SIGTERM)
	first.wait()
	waitNoProcs(t)
}

// slowClient connects to addr and sends a request's headers one byte per
// second; it returns when the server closes the connection (how long that
// took) or after limit (ok false).
func slowClient(t *testing.T, addr string, limit time.Duration) (time.Duration, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				close(closed)
				return
			}
		}
	}()
	req := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100) + "\r\n\r\n"
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-closed:
			return time.Since(start), true
		case <-time.After(limit - time.Since(start)):
			return time.Since(start), false
		case <-tick.C:
			c.Write([]byte{req[i%len(req)]})
		}
	}
}

// TestServeHeaderTimeoutClosesSlowClient: a client that sends its headers
// at 1 byte/s is closed by the workers after --header-timeout (1 s here),
// while a normal client served meanwhile is not affected.
func TestServeHeaderTimeoutClosesSlowClient(t *testing.T) {
	ps := testkit.FreePorts(t, 2)
	port, admin := ps[0], ps[1]
	log := start(t, "serve", "--workers", "2", "--listen", "reuseport", "--port", strconv.Itoa(port),
		"--admin", "127.0.0.1:"+strconv.Itoa(admin), "--header-timeout", "1s")
	waitHealthy(t, "http://127.0.0.1:"+strconv.Itoa(admin)+"/healthz")
	addr := "127.0.0.1:" + strconv.Itoa(port)
	type result struct {
		took time.Duration
		ok   bool
	}
	slow := make(chan result, 2)
	for range 2 {
		go func() {
			took, ok := slowClient(t, addr, 10*time.Second)
			slow <- result{took, ok}
		}()
	}
	// Meanwhile, normal requests are served at once.
	for range 20 {
		start := time.Now()
		testkit.ServedBy(t, "http://"+addr+"/")
		if d := time.Since(start); d > time.Second {
			t.Errorf("a normal request took %v while slow clients were connected", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 2 {
		r := <-slow
		t.Logf("slow client closed=%v after %v", r.ok, r.took)
		if !r.ok || r.took < 900*time.Millisecond || r.took > 4*time.Second {
			t.Errorf("slow client closed=%v after %v, want closed after about 1 s\n%s", r.ok, r.took, log.out)
		}
	}
}

// silentClient connects to addr, sends nothing and returns how long until
// the other side closed the connection (ok false: not within limit).
func silentClient(t *testing.T, addr string, limit time.Duration) (time.Duration, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return time.Since(start), false
			}
			return time.Since(start), true
		}
	}
}

// TestL4ProxyClosesSilentAndSlowClients: through "lbbench proxy --mode
// l4", a client that connects and sends nothing is closed after
// --l4-idle-timeout (1 s here), a client sending its headers at 1 byte/s
// is closed by the workers' --header-timeout (1 s), and normal requests
// served meanwhile are not affected.
func TestL4ProxyClosesSilentAndSlowClients(t *testing.T) {
	base := testkit.ConsecutivePorts(t, 2)
	wadmin := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	start(t, "serve", "--workers", "2", "--listen", "ports", "--port", strconv.Itoa(base), "--admin", wadmin, "--header-timeout", "1s")
	waitHealthy(t, "http://"+wadmin+"/healthz")
	ups := "127.0.0.1:" + strconv.Itoa(base) + ",127.0.0.1:" + strconv.Itoa(base+1)
	entry, _ := balProxy(t, "--mode", "l4", "--upstreams", ups, "--l4-idle-timeout", "1s")
	addr := strings.TrimPrefix(entry, "http://")

	silent := make(chan time.Duration, 1)
	go func() {
		took, ok := silentClient(t, addr, 10*time.Second)
		if !ok {
			took = -1
		}
		silent <- took
	}()
	slow := make(chan time.Duration, 1)
	go func() {
		took, ok := slowClient(t, addr, 10*time.Second)
		if !ok {
			took = -1
		}
		slow <- took
	}()
	for range 20 {
		start := time.Now()
		testkit.ServedBy(t, entry+"/")
		if d := time.Since(start); d > time.Second {
			t.Errorf("a normal request took %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tookSilent, tookSlow := <-silent, <-slow
	t.Logf("through the L4 proxy: silent client closed after %v, slow client after %v", tookSilent, tookSlow)
	if took := tookSilent; took < 900*time.Millisecond || took > 3*time.Second {
		t.Errorf("silent client closed after %v (-1: not in 10 s), want about 1 to 1.25 s", took)
	}
	if took := tookSlow; took < 900*time.Millisecond || took > 4*time.Second {
		t.Errorf("slow client closed after %v (-1: not in 10 s), want about 1 s", took)
	}
}
