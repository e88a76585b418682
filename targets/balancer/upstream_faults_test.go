package balancer

import (
	"github.com/lbbench/lbbench/internal/testkit"

	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawUpstream is a hand-written HTTP/1.1 upstream on loopback: serve is
// called for every request with the connection to answer on, so a test
// can answer wrongly (twice, half, late). It runs until the test ends.
func rawUpstream(t *testing.T, serve func(c net.Conn, r *http.Request)) string {
	t.Helper()
	ln := listen(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					serve(c, r)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

const (
	genuine  = "HTTP/1.1 200 OK\r\nX-Worker: 0\r\nContent-Length: 7\r\n\r\ngenuine"
	injected = "HTTP/1.1 200 OK\r\nX-Worker: INJ\r\nContent-Length: 3\r\n\r\nINJ"
)

// TestUnsolicitedBytesNeverReachAnotherClient is the two-client injection:
// an upstream answers client A's request with its response and a second
// one nobody asked for, in the same write or later while the connection
// is idle. Client B, on another connection, must get its own response,
// never the injected one, and the poisoned connection is closed and
// counted. (An earlier proxy put the connection back in the pool with the
// bytes unread, and B received "X-Worker: INJ".)
func TestUnsolicitedBytesNeverReachAnotherClient(t *testing.T) {
	for _, netHTTP := range []bool{false, true} {
		for _, when := range []string{"same write", "while idle"} {
			t.Run(fmt.Sprintf("net_http=%v/%s", netHTTP, when), func(t *testing.T) {
				inject := make(chan net.Conn, 1)
				first := true
				var mu sync.Mutex
				addr := rawUpstream(t, func(c net.Conn, r *http.Request) {
					mu.Lock()
					poison := first && r.URL.Path == "/a"
					first = first && !poison
					mu.Unlock()
					switch {
					case poison && when == "same write":
						io.WriteString(c, genuine+injected)
					case poison:
						io.WriteString(c, genuine)
						inject <- c
					default:
						io.WriteString(c, genuine)
					}
				})
				tp := startProxy(t, Config{Upstreams: []string{addr}, UpstreamKeepAlive: true, NetHTTP: netHTTP})
				ca, bra := rawConn(t, tp)
				io.WriteString(ca, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body := readResp(t, bra, "GET")
				if resp.StatusCode != 200 || body != "genuine" {
					t.Fatalf("client A: %d %q", resp.StatusCode, body)
				}
				if when == "while idle" {
					c := <-inject
					io.WriteString(c, injected)
					// Wait until the bytes are in the pooled connection's
					// socket (looked at without taking them).
					testkit.WaitFor(t, "the injected bytes to reach the idle connection", func() bool {
						pool := tp.Proxy.ups[0].idle
						uc := pool.take()
						if uc == nil {
							return false
						}
						sent := uc.quiet() == idleSent
						pool.conns = append(pool.conns, uc)
						return sent
					})
				}
				cb, brb := rawConn(t, tp)
				io.WriteString(cb, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body = readResp(t, brb, "GET")
				if w := resp.Header.Get(testkit.WorkerHeader); w == "INJ" || body != "genuine" {
					t.Fatalf("client B got X-Worker %q body %q: another response than its own", w, body)
				}
				if n := tp.Stats().Unsolicited; n != 1 {
					t.Errorf("unsolicited = %d, want the poisoned connection counted once", n)
				}
				// And A's connection goes on, on a clean upstream connection.
				io.WriteString(ca, "GET /a2 HTTP/1.1\r\nHost: x\r\n\r\n")
				if resp, body = readResp(t, bra, "GET"); body != "genuine" {
					t.Fatalf("client A's second request: %d %q", resp.StatusCode, body)
				}
			})
		}
	}
}

// TestStalledUpstreamBodyIsCutOff: an upstream that sends the head and
// part of the body, then nothing, is cut off after ReadTimeout: the
// client's connection ends before the announced length (an earlier proxy
// held it as long as it was watched), and another client is served.
func TestStalledUpstreamBodyIsCutOff(t *testing.T) {
	t.Parallel() // waits on its own proxy's timers
	for _, netHTTP := range []bool{false, true} {
		t.Run(fmt.Sprintf("net_http=%v", netHTTP), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			addr := rawUpstream(t, func(c net.Conn, r *http.Request) {
				if r.URL.Path != "/stall" {
					io.WriteString(c, genuine)
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
				<-release
			})
			t.Cleanup(func() { close(release) }) // before rawUpstream's, which waits for this handler
			const readTimeout = 300 * time.Millisecond
			tp := startProxy(t, Config{Upstreams: []string{addr}, UpstreamKeepAlive: true, NetHTTP: netHTTP, ReadTimeout: readTimeout})
			c, br := rawConn(t, tp)
			c.SetDeadline(time.Now().Add(20 * time.Second)) // the test's safety net
			start := time.Now()
			io.WriteString(c, "GET /stall HTTP/1.1\r\nHost: x\r\n\r\n")
			// The forwarder has sent the head and "partial" by then; the
			// net/http path (ReverseProxy) aborts the response before its
			// buffered head leaves, so there the head read fails.
			var body []byte
			resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
			if err == nil {
				body, err = io.ReadAll(resp.Body)
			}
			took := time.Since(start)
			if err == nil || len(body) >= 100 {
				t.Fatalf("stalled body ended cleanly (%d bytes, %v)", len(body), err)
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the client's own 20 s deadline ended the read after %v: the proxy never cut the upstream off", took)
			}
			if took < readTimeout {
				t.Errorf("cut off after %v, before the read timeout of %v", took, readTimeout)
			}
			if status, _, body := tp.get(t, "/"); status != 200 || body != "genuine" {
				t.Fatalf("other client: %d %q", status, body)
			}
		})
	}
}

// TestLongHeadLinesUpToTheHeadLimit: one header line or URL longer than
// the forwarder's 16 KiB buffer, but within MaxHeaderBytes, is forwarded
// (it got 431 although the limit is on the head, 64 KiB); a head over the
// limit still gets 431.
func TestLongHeadLinesUpToTheHeadLimit(t *testing.T) {
	t.Parallel()
	var got sync.Map
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Path, len(r.Header.Get("X-Long"))+len(r.URL.RawQuery))
		io.WriteString(w, "ok")
	})
	for _, netHTTP := range []bool{false, true} {
		tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true, NetHTTP: netHTTP})
		long := strings.Repeat("a", 40<<10)
		for _, tc := range []struct {
			name, head string
			status     int
		}{
			{"header line of 40 KiB", "GET /h HTTP/1.1\r\nHost: x\r\nX-Long: " + long + "\r\n\r\n", 200},
			{"URL of 40 KiB", "GET /u?" + long + " HTTP/1.1\r\nHost: x\r\n\r\n", 200},
			{"head over 64 KiB", "GET /o HTTP/1.1\r\nHost: x\r\nX-Long: " + long + "\r\nX-More: " + long + "\r\n\r\n", 431},
		} {
			t.Run(fmt.Sprintf("net_http=%v/%s", netHTTP, tc.name), func(t *testing.T) {
				c, br := rawConn(t, tp)
				io.WriteString(c, tc.head)
				resp, _ := readResp(t, br, "GET")
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				if tc.status == 200 {
					path := strings.Fields(tc.head)[1]
					path, _, _ = strings.Cut(path, "?")
					if n, _ := got.Load(path); n != len(long) {
						t.Errorf("upstream saw %v bytes of it, want %d", n, len(long))
					}
				}
			})
		}
	}
}
