package balancer

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
)

// rawResponse is what the raw backend answers to every request.
const rawResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Worker: 0\r\n\r\nok"

// startRawBackend serves rawResponse to each request head it reads, with no
// allocation per request, so that a benchmark's allocations are the
// proxy's.
func startRawBackend(b *testing.B) string {
	ln := listen(b)
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				resp := []byte(rawResponse)
				for {
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 {
							break
						}
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkProxyForward forwards a small GET through Serve's layer-7
// forwarder, keep-alive on both sides, with a raw client and a raw
// backend that allocate nothing per request: allocs/op is the proxy's own
// per-request allocation (target 0).
func BenchmarkProxyForward(b *testing.B) {
	for _, policy := range []string{"least_conn", "round_robin"} {
		b.Run(policy, func(b *testing.B) {
			addrs := []string{startRawBackend(b), startRawBackend(b)}
			url := benchProxy(b, Config{Upstreams: addrs, Policy: policy, UpstreamKeepAlive: true})
			c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := []byte("GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
			br := bufio.NewReader(c)
			body := make([]byte, 2)
			do := func() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				// The response head ends with a blank line, then 2 body bytes.
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						b.Fatal(err)
					}
					if len(line) <= 2 {
						break
					}
				}
				if _, err := io.ReadFull(br, body); err != nil || string(body) != "ok" {
					b.Fatalf("body %q: %v", body, err)
				}
			}
			do()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
