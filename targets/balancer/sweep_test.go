package balancer

import (
	"github.com/lbbench/lbbench/internal/testkit"

	"io"
	"net/http"
	"testing"
	"time"
)

func TestSweepTick(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{10 * time.Second, 60 * time.Second, 200 * time.Millisecond}, 50 * time.Millisecond},
		{[]time.Duration{100 * time.Millisecond, 0}, 25 * time.Millisecond},
		{[]time.Duration{time.Millisecond}, 2 * time.Millisecond},
		{nil, 50 * time.Millisecond},
	} {
		if got := sweepTick(tt.in...); got != tt.want {
			t.Errorf("sweepTick(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestClientGoneBeforeResponseReleases: a client that sends a request and
// leaves while the backend has not answered frees the backend within a
// few client checks (the sweeper cuts the response wait every
// clientCheckEvery to look), and the request counts no backend error.
func TestClientGoneBeforeResponseReleases(t *testing.T) {
	t.Parallel() // waits on its own proxy's timers
	release := make(chan struct{})
	addrs := startBackends(t, 1, func(http.ResponseWriter, *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // runs before the backend closes
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true, Timeout: time.Minute})
	c, _ := rawConn(t, tp)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	testkit.WaitFor(t, "the request to reach the backend", func() bool { return tp.Stats().Backends[0].Active == 1 })
	left := time.Now()
	c.Close()
	testkit.WaitFor(t, "the backend to be released", func() bool { return tp.Stats().Backends[0].Active == 0 })
	if d := time.Since(left); d > 2*time.Second {
		t.Errorf("backend released %v after the client left, want within a few times %v", d, clientCheckEvery)
	}
	if b := tp.Stats().Backends[0]; b.Errors != 0 {
		t.Errorf("backend after the client left: %+v", b)
	}
}

// TestWaitsNotCutEarly: many short requests on keep-alive connections with
// a header and idle timeout of a few sweeper ticks: none is cut (a wait is
// cut only once its own deadline passed, not a previous wait's).
func TestWaitsNotCutEarly(t *testing.T) {
	addrs := startBackends(t, 2, nil)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true,
		HeaderTimeout: 40 * time.Millisecond, IdleTimeout: 40 * time.Millisecond, Timeout: 40 * time.Millisecond})
	done := make(chan error, 4)
	for range 4 {
		c, br := rawConn(t, tp)
		go func() {
			for i := range 300 {
				if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
					done <- err
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					done <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					done <- &errHead{resp.StatusCode, "request " + http.StatusText(resp.StatusCode)}
					return
				}
				if i%50 == 0 {
					time.Sleep(10 * time.Millisecond) // idle, within the timeout
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatalf("a keep-alive client's request failed: %v", err)
		}
	}
}
