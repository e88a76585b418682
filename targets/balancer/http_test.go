package balancer

import (
	"github.com/lbbench/lbbench/internal/testkit"

	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file check the HTTP/1.1 correctness a layer-7 proxy
// must keep (issue 15), over real loopback sockets, with raw client bytes
// where the point is framing.

// rawConn dials the proxy at tp.url and returns the connection and a
// reader of its responses.
func rawConn(t *testing.T, tp *testProxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(tp.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, bufio.NewReader(c)
}

// readResp reads one response to method from br, body included.
func readResp(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

// echoBackend answers with the request body's length and SHA-256, and
// the framing it received, in headers; the body echoes the request body.
func echoBackend(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	var buf bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &buf), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Len", strconv.FormatInt(n, 10))
	w.Header().Set("X-Sum", fmt.Sprintf("%x", h.Sum(nil)))
	w.Header().Set("X-Got-TE", strings.Join(r.TransferEncoding, ","))
	w.Header().Set("X-Got-CL", r.Header.Get("Content-Length"))
	w.Write(buf.Bytes())
}

func TestL7ChunkedRequestAndResponse(t *testing.T) {
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			// A chunked response: three flushed pieces, no Content-Length.
			for i := range 3 {
				fmt.Fprintf(w, "piece%d;", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		echoBackend(w, r)
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
	resp, body := readResp(t, br, "POST")
	if resp.StatusCode != 200 || body != "hello world" || resp.Header.Get("X-Len") != "11" {
		t.Fatalf("chunked request: status %d body %q len %s", resp.StatusCode, body, resp.Header.Get("X-Len"))
	}
	io.WriteString(c, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body = readResp(t, br, "GET")
	if body != "piece0;piece1;piece2;" || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("chunked response: body %q, transfer-encoding %v", body, resp.TransferEncoding)
	}
}

func TestL7ContentLengthAndLargeBodies(t *testing.T) {
	addrs := startBackends(t, 1, echoBackend)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	// 8 MiB: far larger than any copy buffer (32 KiB) or socket buffer.
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)
	want := fmt.Sprintf("%x", sha256.Sum256(big))
	for _, size := range []int{0, 1, len(big)} {
		resp, err := tp.client.Post(tp.url+"/", "application/octet-stream", bytes.NewReader(big[:size]))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("X-Len") != strconv.Itoa(size) || resp.Header.Get("X-Got-CL") != strconv.Itoa(size) && size > 0 || len(body) != size {
			t.Fatalf("size %d: upstream saw %s bytes (Content-Length %q), client got %d", size, resp.Header.Get("X-Len"), resp.Header.Get("X-Got-CL"), len(body))
		}
		if size == len(big) && (resp.Header.Get("X-Sum") != want || !bytes.Equal(body, big)) {
			t.Fatal("8 MiB body corrupted on the way")
		}
	}
}

// TestL7StreamsRequestBody shows the proxy streams a body rather than
// buffering it: the upstream reads the first part while the client has
// not yet sent the rest.
func TestL7StreamsRequestBody(t *testing.T) {
	firstPart := make(chan struct{})
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, buf); err != nil || string(buf) != "first" {
			http.Error(w, "bad first part", 400)
			return
		}
		close(firstPart)
		rest, _ := io.ReadAll(r.Body)
		io.WriteString(w, "got "+string(buf)+string(rest))
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nfirst")
	select {
	case <-firstPart:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream did not see the first part of the body before the client sent the rest: the proxy buffers")
	}
	io.WriteString(c, "after")
	if _, body := readResp(t, br, "POST"); body != "got firstafter" {
		t.Fatalf("body %q", body)
	}
}

func TestL7ExpectContinue(t *testing.T) {
	addrs := startBackends(t, 1, echoBackend)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
	// The client sends no body until it is told to continue.
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("first line %q (%v), want 100 Continue", line, err)
	}
	if blank, _ := br.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("100 Continue not followed by a blank line: %q", blank)
	}
	io.WriteString(c, "ping")
	if resp, body := readResp(t, br, "POST"); resp.StatusCode != 200 || body != "ping" {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
}

// TestL7NoBodyResponses checks that HEAD, 204 and 304 responses carry no
// body, by sending a second request on the same connection: a stray body
// byte would corrupt its response.
func TestL7NoBodyResponses(t *testing.T) {
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"HEAD", "/", 200}, {"GET", "/204", 204}, {"GET", "/304", 304}} {
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n", tc.method, tc.path)
		resp, body := readResp(t, br, tc.method)
		if resp.StatusCode != tc.status || body != "" {
			t.Fatalf("%s %s: status %d body %q", tc.method, tc.path, resp.StatusCode, body)
		}
		if tc.method == "HEAD" && resp.ContentLength != 5 {
			t.Errorf("HEAD lost the Content-Length: %d", resp.ContentLength)
		}
		if resp, body := readResp(t, br, "GET"); resp.StatusCode != 200 || body != "hello" {
			t.Fatalf("request after %s %s: status %d body %q", tc.method, tc.path, resp.StatusCode, body)
		}
	}
}

func TestL7HopByHopHeaders(t *testing.T) {
	hop := []string{"Connection", "Keep-Alive", "Te", "Upgrade", "Proxy-Connection", "Proxy-Authorization", "Trailer", "X-Named"}
	var mu sync.Mutex
	var seen http.Header
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Connection", "X-Resp-Named")
		w.Header().Set("X-Resp-Named", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-End", "kept")
		io.WriteString(w, "ok")
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-Named\r\nX-Named: secret\r\n"+
		"Keep-Alive: timeout=9\r\nTE: gzip\r\nUpgrade: foo/1\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\n"+
		"Trailer: X-T\r\nX-End: kept\r\n\r\n")
	resp, _ := readResp(t, br, "GET")
	mu.Lock()
	defer mu.Unlock()
	for _, h := range hop {
		if v, ok := seen[h]; ok {
			t.Errorf("upstream received hop-by-hop %s: %q", h, v)
		}
	}
	if seen.Get("X-End") != "kept" {
		t.Errorf("end-to-end header lost: %v", seen)
	}
	for _, h := range []string{"X-Resp-Named", "Keep-Alive"} {
		if v, ok := resp.Header[h]; ok {
			t.Errorf("client received hop-by-hop %s: %q", h, v)
		}
	}
	if resp.Header.Get("X-End") != "kept" {
		t.Errorf("end-to-end response header lost: %v", resp.Header)
	}
}

// TestL7NoSmuggling sends a request with both Transfer-Encoding and
// Content-Length whose chunked body hides a second request: the proxy
// refuses it with 400 (RFC 9112 section 6.3 allows it; net/http would
// forward it re-framed), and the hidden request never reaches an upstream.
func TestL7NoSmuggling(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		echoBackend(w, r)
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	hidden := "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	fmt.Fprintf(c, "POST /front HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden)
	resp, _ := readResp(t, br, "POST")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("TE+CL request: status %d, want 400", resp.StatusCode)
	}
	// A follow-up request on a fresh connection shows the upstream
	// connection was not left holding a smuggled request.
	if status, _, _ := tp.get(t, "/next"); status != 200 {
		t.Fatalf("next request: %d", status)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if p == "/smuggled" {
			t.Fatalf("the hidden request reached the upstream: %v", paths)
		}
	}
}

// TestL7BadHeadsHarmNoOne sends oversized and malformed heads and checks
// each gets its 4xx while a keep-alive connection opened before keeps
// working.
func TestL7BadHeadsHarmNoOne(t *testing.T) {
	addrs := startBackends(t, 1, nil)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	good, goodBr := rawConn(t, tp)
	askGood := func() {
		t.Helper()
		io.WriteString(good, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, body := readResp(t, goodBr, "GET"); resp.StatusCode != 200 || body != "ok" {
			t.Fatalf("good connection: %d %q", resp.StatusCode, body)
		}
	}
	askGood()
	for _, tc := range []struct {
		name, head string
		status     int
	}{
		{"oversized header", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", MaxHeaderBytes+4096) + "\r\n\r\n", 431},
		{"bad request line", "GET\r\n\r\n", 400},
		{"bad header line", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400},
		{"bad content-length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400},
		{"two content-lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"bad version", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505},
	} {
		c, br := rawConn(t, tp)
		io.WriteString(c, tc.head)
		resp, _ := readResp(t, br, "GET")
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		askGood()
	}
}

// TestL7SlowClientCostsOneConnection trickles a head one byte at a time:
// other clients are served meanwhile, and the header timeout closes the
// slow one.
func TestL7SlowClientCostsOneConnection(t *testing.T) {
	t.Parallel() // waits on its own proxy's timers
	addrs := startBackends(t, 1, nil)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true, HeaderTimeout: 500 * time.Millisecond})
	// The proxy's header timer starts when it accepts, which is after the
	// dial began and before it returned: time from before the dial.
	start := time.Now()
	slow, slowBr := rawConn(t, tp)
	head := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	trickled := make(chan error, 1)
	go func() {
		for i := range len(head) - 2 {
			if _, err := slow.Write([]byte{head[i]}); err != nil {
				trickled <- err
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		trickled <- nil
	}()
	for range 20 {
		if status, _, _ := tp.get(t, "/"); status != 200 {
			t.Fatalf("other client got %d while one was slow", status)
		}
	}
	// The proxy must close the slow connection after about the header
	// timeout, long before its head is complete.
	if _, err := slowBr.ReadByte(); err == nil {
		// Go's server may answer 408 before closing; then EOF follows.
		if _, err := io.ReadAll(slowBr); err != nil {
			t.Logf("after 408: %v", err)
		}
	}
	if d := time.Since(start); d > 5*time.Second || d < 500*time.Millisecond {
		t.Fatalf("slow client closed after %v, want about the 500ms header timeout", d)
	}
	<-trickled
}

func TestL7IdleTimeoutClosesConnection(t *testing.T) {
	t.Parallel() // waits on its own proxy's timers
	addrs := startBackends(t, 1, nil)
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true, IdleTimeout: 300 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond})
	c, br := rawConn(t, tp)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := readResp(t, br, "GET"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF", err)
	}
	// The sweeper cuts the wait at most a tick (a quarter of it) late, and
	// never early.
	if d := time.Since(start); d > 5*time.Second || d < 250*time.Millisecond {
		t.Fatalf("idle connection closed after %v, want about 300ms", d)
	}
}

// TestL7UpstreamDiesMidResponse has an upstream promise 1 MB and die after
// a few bytes: that client sees a truncated response (its connection is
// closed, never a clean end), while a concurrent client is served.
func TestL7UpstreamDiesMidResponse(t *testing.T) {
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/die" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Length", "1000000")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	tp := startProxy(t, Config{Upstreams: addrs, UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "GET /die HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		if rerr == nil {
			t.Fatalf("truncated response ended cleanly with %d bytes", len(body))
		}
		if len(body) >= 1000000 {
			t.Fatalf("got the whole body")
		}
	}
	if status, _, body := tp.get(t, "/"); status != 200 || body != "ok" {
		t.Fatalf("other client: %d %q", status, body)
	}
	testkit.WaitFor(t, "the backend released", func() bool { return tp.Stats().Backends[0].Active == 0 })
}

// TestL7ErrorAfterHeadHasBody: a malformed head after a HEAD request is
// answered 400 with its body: the error answer does not inherit the
// previous request's method (found by FuzzProxyRequest:
// "HEAD / HTTP/1.1\nHost:\n\n\r").
func TestL7ErrorAfterHeadHasBody(t *testing.T) {
	tp := startProxy(t, Config{Upstreams: startBackends(t, 1, nil), UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n\r")
	c.(*net.TCPConn).CloseWrite()
	if resp, body := readResp(t, br, "HEAD"); resp.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD: %d %q, want 200 without a body", resp.StatusCode, body)
	}
	resp, body := readResp(t, br, "GET")
	if resp.StatusCode != http.StatusBadRequest || int64(len(body)) != resp.ContentLength || body == "" {
		t.Fatalf("after the HEAD: %d, body %q (Content-Length %d), want 400 with its body", resp.StatusCode, body, resp.ContentLength)
	}
}

// TestL7UpstreamWaitWithoutEmptyReads: the forwarder sends a request
// upstream from inside its wait for the answer (sysConn.holdWrite), so no
// upstream read finds nothing, however late the answer; bodies, HEAD and
// 204 keep their framing on the same connections.
func TestL7UpstreamWaitWithoutEmptyReads(t *testing.T) {
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // the answer is never there at once
		if r.URL.Path == "/none" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		echoBackend(w, r)
	})
	tp := startProxy(t, Config{Upstreams: addrs, Policy: "round_robin", UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	const n = 30
	for i := range n {
		body := strings.Repeat("b", i*100)
		method, path := "POST", "/echo"
		switch i % 3 {
		case 1:
			method = "HEAD"
		case 2:
			method, path, body = "GET", "/none", ""
		}
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", method, path, len(body), body)
		resp, got := readResp(t, br, method)
		want := http.StatusOK
		if path == "/none" {
			want = http.StatusNoContent
		}
		if resp.StatusCode != want || method == "POST" && got != body {
			t.Fatalf("request %d (%s %s): status %d, body %d bytes, want %d and the %d sent", i, method, path, resp.StatusCode, len(got), want, len(body))
		}
	}
	u := tp.ups[0]
	var conns, empty int
	for uc := u.idle.take(); uc != nil; uc = u.idle.take() {
		conns++
		if uc.sc == nil {
			t.Fatalf("upstream connection %T has no sysConn", uc.Conn)
		}
		empty += int(uc.sc.empty)
		uc.Close()
	}
	if conns != 1 {
		t.Fatalf("%d idle upstream connections after %d sequential requests, want 1", conns, n)
	}
	if empty != 0 {
		t.Errorf("%d upstream reads found nothing over %d requests, want 0", empty, n)
	}
}

// TestL7Pipelined: requests sent before the previous response came, in
// one write or while the previous one is at the upstream, are answered at
// once and in order, as are heads that come in pieces and requests with a
// body between them. A client session (sysConn.session) that missed the
// bytes that came while it forwarded would leave them until the idle
// timeout, a minute, and the connection's deadline fails the test first.
func TestL7Pipelined(t *testing.T) {
	slowArrived := make(chan struct{}, 1)
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			slowArrived <- struct{}{}
			time.Sleep(100 * time.Millisecond) // less than clientCheckEvery: no look at the client meanwhile
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.URL.Path, body)
	})
	tp := startProxy(t, Config{Upstreams: addrs, Policy: "round_robin", UpstreamKeepAlive: true})
	c, br := rawConn(t, tp)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n" }
	answered := func(want string) {
		t.Helper()
		resp, body := readResp(t, br, "GET")
		if resp.StatusCode != http.StatusOK || body != want {
			t.Fatalf("status %d, body %q, want 200 and %q", resp.StatusCode, body, want)
		}
	}
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(c, s); err != nil {
			t.Fatal(err)
		}
	}

	write(get("/a") + get("/b"))
	answered("/a ")
	answered("/b ")

	write(get("/slow"))
	<-slowArrived // /c comes while /slow is at the upstream
	write(get("/c"))
	answered("/slow ")
	answered("/c ")

	head := get("/d")
	write(head[:10])
	time.Sleep(20 * time.Millisecond)
	write(head[10:])
	answered("/d ")

	write("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get("/f"))
	answered("/e abc")
	answered("/f ")
	write(get("/g"))
	answered("/g ")
}

// fastServerConn starts the forwarder's server alone (not Proxy.Serve),
// round robin over addrs with upstream keep-alive, for a test that looks
// into it or closes it, and a client connection to it, closed at cleanup.
func fastServerConn(t *testing.T, addrs []string) (*Proxy, *fastServer, net.Conn) {
	t.Helper()
	p, err := New(Config{Upstreams: addrs, Policy: "round_robin", UpstreamKeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	s := newFastServer(p)
	ln := listen(t)
	go s.Serve(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, s, c
}

// TestL7ClientWaitWithoutEmptyReads: between a client's requests the
// forwarder waits inside one read of the client's socket (a session), so
// no read finds nothing, however many requests the connection carries;
// without the session every request costs one.
func TestL7ClientWaitWithoutEmptyReads(t *testing.T) {
	p, s, c := fastServerConn(t, startBackends(t, 1, nil))
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	const n = 30
	for i := range n {
		fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		if resp, _ := readResp(t, br, "GET"); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		time.Sleep(time.Millisecond) // the forwarder waits before each request
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	p.closeIdle()
	// The first read may come before the first request: one at most.
	if e := s.emptyReads.Load(); e > 1 {
		t.Errorf("%d client reads found nothing over %d requests, want at most 1", e, n)
	}
}

// isToken accepts exactly RFC 9110's tchar: "!#$%&'*+-.^_`|~", digits and
// letters, and no empty name.
func TestIsToken(t *testing.T) {
	for c := range 256 {
		want := '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' ||
			c < 0x80 && strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c))
		if got := isToken([]byte{'a', byte(c), 'z'}); got != want {
			t.Errorf("isToken(%q) = %v, want %v", []byte{'a', byte(c), 'z'}, got, want)
		}
	}
	if isToken(nil) || isToken([]byte{}) {
		t.Error("an empty name is a token")
	}
}

// TestL7CloseCutsBusyConnections: Close ends a connection at once even
// while its request waits for an upstream that does not answer: the
// client sees its connection closed, and Close does not wait for the
// upstream (a connection in a session, sysConn.session, keeps its socket
// until the session's step returns).
func TestL7CloseCutsBusyConnections(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	addrs := startBackends(t, 1, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	_, s, c := fastServerConn(t, addrs)
	io.WriteString(c, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case <-arrived: // the request is at the upstream
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the upstream")
	}
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close still waits 2 s later, for a request at an upstream that does not answer")
	}
	// The client gets a 502 (its exchange failed before its socket
	// closed) or nothing, and then the end of the connection.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d after Close, want 502 or none", resp.StatusCode)
		}
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("client read after Close: %v; want the connection closed", err)
	}
	if n, err := br.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("client read after Close: %d bytes, %v; want the connection closed", n, err)
	}
}

// TestL7HalfCloseEndsConnection: a client that sends a keep-alive request
// and shuts down its side at once gets its response and then the end of
// the connection, within the sweeper's tick, not at the idle timeout (a
// minute): the end of stream may come with the request's bytes, where a
// session's wait would not see it (sysConn.session, fastConn.idleWait).
func TestL7HalfCloseEndsConnection(t *testing.T) {
	tp := startProxy(t, Config{Upstreams: startBackends(t, 1, nil), Policy: "round_robin", UpstreamKeepAlive: true})
	// The end of stream comes with the bytes in some connections only:
	// 30 make a miss unlikely.
	for i := range 30 {
		c, br := rawConn(t, tp)
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		c.(*net.TCPConn).CloseWrite()
		if resp, _ := readResp(t, br, "GET"); resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: status %d", i, resp.StatusCode)
		}
		start := time.Now()
		if n, err := br.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("connection %d: read after the response: %d bytes, %v after %v; want the end of the connection", i, n, err, time.Since(start))
		}
	}
}
