package balancer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzProxyRequest sends arbitrary bytes as a client's request stream to a
// real layer-7 proxy in front of a real upstream. Whatever the input, every
// reply must be well-formed HTTP/1.1 (or the connection closed without
// one), never a 5xx but 502 (a request the upstream refused), 501 or 505, and
// the proxy must go on serving a good request afterwards. Run bounded:
//
//	go test -run '^$' -fuzz FuzzProxyRequest -fuzztime 30s ./targets/balancer
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: close, X-A\r\nX-A: 1\r\nUpgrade: h2c\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", MaxHeaderBytes+10) + "\r\n\r\n",
		"GET " + strings.Repeat("/a", 40000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /" + strings.Repeat("b", 20000) + " HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("c", 30000) + "\r\n\r\n", // lines over the buffer, head within the limit
		"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("c", 17000) + "\r\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X: y\r\n", 20000) + "\r\n",
		"GET / HTTP/9.9\r\n\r\n",
		"GET\r\n\r\n",
		"\x00\xff\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nX: a\nb\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n X: folded\r\n\r\n",
		"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	addrs := make([]string, 2)
	for i := range addrs {
		addrs[i] = startFuzzBackend(f)
	}
	p, err := New(Config{Upstreams: addrs, UpstreamKeepAlive: true, HeaderTimeout: 2 * time.Second, Timeout: 2 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	ln := listen(f)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln, nil) }()
	f.Cleanup(func() {
		cancel()
		<-served
	})
	addr := ln.Addr().String()
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			c.Write(in)
			c.(*net.TCPConn).CloseWrite()
		}()
		methods := requestMethods(in)
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			if _, err := br.Peek(1); err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					// The client has shut down its side: within the
					// timeouts (2 s) the proxy answers or closes.
					t.Fatalf("neither a reply nor the end of the connection in 5 s for %q", in)
				}
				break // closed: fine once every reply so far was well-formed
			}
			// A reply to HEAD has no body whatever its Content-Length.
			var req *http.Request
			if i < len(methods) {
				req = &http.Request{Method: methods[i]}
			}
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				t.Fatalf("malformed reply to %q: %v", in, err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode < 500:
			case resp.StatusCode == http.StatusBadGateway, // the upstream refused what it was sent
				resp.StatusCode == http.StatusNotImplemented,          // an unknown transfer coding
				resp.StatusCode == http.StatusHTTPVersionNotSupported: // HTTP/2.0, HTTP/9.9
			default:
				t.Fatalf("status %d for %q", resp.StatusCode, in)
			}
			if err != nil {
				break
			}
		}
		// The proxy still serves a good request.
		g, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		g.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(g, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(g), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("after %q the proxy does not serve a good request: %v", in, err)
		}
	})
}

// startFuzzBackend serves an upstream that drains the request body and
// answers "ok", until the fuzz target ends.
func startFuzzBackend(f *testing.F) string {
	ln := listen(f)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		io.WriteString(w, "ok")
	})}
	go srv.Serve(ln)
	f.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// requestMethods returns the methods of the requests in, in order, as far
// as net/http reads them (their bodies skipped): what tells the fuzz target
// which reply answers a HEAD.
func requestMethods(in []byte) []string {
	var methods []string
	br := bufio.NewReader(bytes.NewReader(in))
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return methods
		}
		methods = append(methods, req.Method)
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return methods
		}
	}
}
