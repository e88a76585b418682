package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/monoclock"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

type acceptedKey struct{}

// stampingServer answers like a worker that holds each request for hold
// before beginning it (a queue in front of it), and stamps its answers
// with stamp(t) (t.Accepted is when it accepted the connection), or not
// at all if stamp is nil.
func stampingServer(t *testing.T, hold time.Duration, stamp func(workloads.Times) string) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := monoclock.Now()
		time.Sleep(hold)
		began := monoclock.Now()
		time.Sleep(time.Millisecond)
		if stamp != nil {
			accepted, _ := r.Context().Value(acceptedKey{}).(int64)
			w.Header().Set(workloads.TimesHeader, stamp(workloads.Times{Accepted: accepted, Received: received, Began: began, Done: monoclock.Now(), Clock: monoclock.Host()}))
		}
	}))
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, acceptedKey{}, monoclock.Now())
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func waitSpec() workloads.Spec {
	return workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 200},
		Duration: 500 * time.Millisecond,
		Warmup:   -1, // none
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
}

// TestWaitFromWorkerStamps: the wait recorded is when the server began a
// request minus its intended send time; it is never guessed: without a
// stamp, or with one that cannot be of this host's clock, it is not
// measured. Each case has its own server, and the attacks run at once.
func TestWaitFromWorkerStamps(t *testing.T) {
	t.Parallel()
	// A server that does not say when it accepted (an app behind a WSGI
	// or ASGI server): the wait is measured, the connection wait is not,
	// rather than taken as zero.
	noAccept := func(st workloads.Times) string {
		st.Accepted = 0
		return workloads.FormatTimes(st)
	}
	// Servers whose stamps must not be used: the wait is not measured.
	unmeasured := map[string]func(workloads.Times) string{
		"no stamp": nil,
		// A clock an hour away, named as ours: garbage.
		"a clock an hour away": func(st workloads.Times) string {
			h := int64(time.Hour)
			return workloads.FormatTimes(workloads.Times{Accepted: st.Accepted + h, Received: st.Received + h, Began: st.Began + h, Done: st.Done + h, Clock: st.Clock})
		},
		// Stamps that would fit, from a host named otherwise (another
		// node whose clock happens to be close): not compared.
		"another host's clock": func(st workloads.Times) string {
			st.Clock = "0badc0de"
			return workloads.FormatTimes(st)
		},
		// Stamps that name no clock (an older worker).
		"no clock": func(st workloads.Times) string {
			st.Clock = ""
			return workloads.FormatTimes(st)
		},
		"malformed": func(workloads.Times) string { return "1 2" },
	}
	urls := map[string]string{
		"honest":    stampingServer(t, 20*time.Millisecond, workloads.FormatTimes),
		"no accept": stampingServer(t, 0, noAccept),
	}
	for name, stamp := range unmeasured {
		urls[name] = stampingServer(t, 0, stamp)
	}
	var mu sync.Mutex
	got := map[string]*results.Measurement{}
	errs := map[string]error{}
	var wg sync.WaitGroup
	for name, url := range urls {
		wg.Go(func() {
			m, err := Attack(context.Background(), url, waitSpec(), Options{})
			mu.Lock()
			got[name], errs[name] = m, err
			mu.Unlock()
		})
	}
	wg.Wait()
	for name, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	m := got["honest"]
	if m.Wait == nil || uint64(m.Wait.TotalCount()) != m.Requests || m.Classes[0].Wait == nil || m.Classes[0].Wait.TotalCount() != m.Wait.TotalCount() {
		t.Fatalf("wait of %v requests recorded (class %v), want all %d", m.Wait, m.Classes[0].Wait, m.Requests)
	}
	// Held 20 ms before beginning: the wait is at least that, and less
	// than the whole latency by at least the 1 ms of service.
	if p50, lat := m.Wait.Quantile(0.5), m.Latency.Quantile(0.5); p50 < 20*time.Millisecond || p50 > lat-time.Millisecond {
		t.Errorf("median wait %s, latency %s: want at least the 20 ms hold and under the latency", p50, lat)
	}
	// Fresh connections were accepted when their requests were due, or
	// just after: a connection wait, never more than the wait.
	if m.ConnWait == nil || m.ConnWait.Quantile(1) > m.Wait.Quantile(1) {
		t.Errorf("connection wait %v beyond the wait %s", m.ConnWait, m.Wait.Quantile(1))
	}

	m = got["no accept"]
	if m.Wait == nil || uint64(m.Wait.TotalCount()) != m.Requests || m.ConnWait != nil {
		t.Errorf("without an accept stamp: wait %v over %d requests, connection wait %v; want the wait, and no connection wait", m.Wait, m.Requests, m.ConnWait)
	}

	for name := range unmeasured {
		m := got[name]
		if m.Requests == 0 || m.Wait != nil || m.ConnWait != nil || m.Classes[0].Wait != nil {
			t.Errorf("%s: wait %v, connection wait %v over %d requests: want not measured (nil)", name, m.Wait, m.ConnWait, m.Requests)
		}
	}
}
