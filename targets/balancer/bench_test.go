package balancer

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkProxy compares a request over loopback straight to a backend
// with the same request through the proxy, in each mode. "serial" runs one
// keep-alive client, so ns/op is the round trip and the difference to
// direct is the latency the proxy adds; "parallel" runs 32 clients per CPU
// to saturate the machine (client, proxy and backends share its CPUs), so
// req/s is the highest throughput of the whole arrangement.
func BenchmarkProxy(b *testing.B) {
	var backends []string
	for range 4 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "ok")
		}))
		b.Cleanup(srv.Close)
		backends = append(backends, srv.Listener.Addr().String())
	}
	targets := []struct {
		name string
		cfg  *Config // nil: direct to the first backend
	}{
		{"direct", nil},
		{"l7", &Config{Upstreams: backends, Policy: "round_robin", UpstreamKeepAlive: true}},
		{"l7_no_keepalive", &Config{Upstreams: backends, Policy: "round_robin"}},
		{"l4", &Config{Mode: L4, Upstreams: backends, Policy: "round_robin"}},
	}
	for _, tg := range targets {
		url := "http://" + backends[0] + "/"
		if tg.cfg != nil {
			url = benchProxy(b, *tg.cfg) + "/"
		}
		for _, par := range []bool{false, true} {
			name := tg.name + "/serial"
			if par {
				name = tg.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				tr := &http.Transport{MaxIdleConnsPerHost: 256}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr}
				do := func() {
					resp, err := client.Get(url)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				do() // connect outside the timing
				b.ReportAllocs()
				b.ResetTimer()
				if par {
					b.SetParallelism(32)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							do()
						}
					})
				} else {
					for b.Loop() {
						do()
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}

// benchProxy serves a proxy for the rest of the benchmark and returns its
// base URL.
func benchProxy(b *testing.B, cfg Config) string {
	b.Helper()
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ln := listen(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln, nil) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String()
}
