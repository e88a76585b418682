package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lbbench/lbbench/workloads"
)

// TestRequestTimeoutCoversEveryStage: the request timeout is the
// transport's (the connection's deadline and, while waiting for a free
// connection, a timer), not http.Client's. Against real servers that stall
// at each stage of a request (no answer, an answer whose body never ends,
// and the one connection held by an earlier request) every request fails as
// a timeout, its latency is at least the timeout and not much more, and the
// attack ends by its duration plus the timeout.
func TestRequestTimeoutCoversEveryStage(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	stalls := map[string]struct {
		handler func(w http.ResponseWriter, r *http.Request)
		conns   int
	}{
		"no answer": {func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, 4},
		"body never ends": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("part of it"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, 4},
		// One connection, each request held 2 s by the server: the
		// requests behind the first wait for the connection past their
		// timeout (the first one times out on its read).
		"waiting for the connection": {func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}, 1},
	}
	for name, st := range stalls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(st.handler))
			defer srv.Close()
			spec := workloads.Spec{
				Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 20},
				Duration: time.Second,
				Warmup:   -1,
				Timeout:  timeout,
				Classes:  []workloads.Class{{Name: "a", Weight: 1}},
				Clients:  workloads.Clients{Connections: st.conns, MaxInFlight: 64},
			}.WithDefaults()
			start := time.Now()
			m, err := Attack(context.Background(), srv.URL, spec, Options{})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("took %s: %d requests, errors %v, latency min %s max %s", took, m.Requests, m.ErrorKinds,
				m.Latency.Quantile(0), m.Latency.Quantile(1))
			if m.Requests == 0 || m.ErrorKinds["timeout"] != m.Requests {
				t.Errorf("errors %v of %d requests, want every one a timeout", m.ErrorKinds, m.Requests)
			}
			if lo := m.Latency.Quantile(0); lo < timeout*99/100 {
				t.Errorf("fastest failure took %s, under the %s timeout", lo, timeout)
			}
			if hi := m.Latency.Quantile(1); hi > timeout+300*time.Millisecond {
				t.Errorf("slowest failure took %s, far past the %s timeout", hi, timeout)
			}
			if took > spec.Duration+timeout+time.Second {
				t.Errorf("attack took %s, past its duration %s plus the timeout", took, spec.Duration)
			}
		})
	}
}

// BenchmarkTransportRoundTrip: one request through the generator's
// transport to a real server on loopback and its body read and closed, as
// vegeta's attacker does it, with the request timeout set (allocations per
// request reported, the in-process server's included).
func BenchmarkTransportRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	tr := newClientTransport(srv.Listener.Addr().String(), 1, true, 0)
	tr.timeout = 5 * time.Second
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/work", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
