package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// TestClosedLoopSequential: clients run one after another, each on one
// keep-alive connection, classes follow the pattern by request number,
// think time separates a client's requests, and every count is exact.
func TestClosedLoopSequential(t *testing.T) {
	var mu sync.Mutex
	var conns []string // remote address of each request, in arrival order
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns = append(conns, r.RemoteAddr)
		paths = append(paths, r.URL.Path)
		w.Header().Set("X-Worker", "0")
		mu.Unlock()
	}))
	defer srv.Close()
	ka := true
	spec := workloads.Spec{
		Closed: &workloads.Closed{Order: workloads.Sequential, Think: 2 * time.Millisecond, Pattern: []string{"read", "read", "event"}},
		Classes: []workloads.Class{
			{Name: "read", Path: "/read", Weight: 1},
			{Name: "event", Path: "/event", Weight: 1},
		},
		Clients: workloads.Clients{KeepAlive: &ka, Named: []workloads.NamedClient{{Name: "a", Requests: 6}, {Name: "b", Requests: 9}}},
	}.WithDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m, err := Attack(context.Background(), srv.URL, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 13*2*time.Millisecond {
		t.Errorf("took %s: think time (2ms after all but each client's last request) not kept", took)
	}
	if m.Requests != 15 || m.Errors != 0 || !m.Closed || m.ByWorker[0] != 15 {
		t.Fatalf("requests %d errors %d closed %v by worker %v", m.Requests, m.Errors, m.Closed, m.ByWorker)
	}
	if m.Classes[0].Requests != 10 || m.Classes[1].Requests != 5 {
		t.Errorf("classes read %d event %d, want 10 and 5", m.Classes[0].Requests, m.Classes[1].Requests)
	}
	if m.Clients[0].Requests != 6 || m.Clients[1].Requests != 9 || m.Generator.Opened != 2 {
		t.Errorf("clients %d and %d requests, %d connections; want 6, 9 and 2", m.Clients[0].Requests, m.Clients[1].Requests, m.Generator.Opened)
	}
	// The generator's own cost, as in the open loop: its CPUs, so that
	// the host's steal on them (0 outside a VM) is counted.
	if m.Generator.CPUs < 1 || m.Generator.Processes != 1 || m.Generator.MaxRSS <= 0 {
		t.Errorf("generator cost not measured: %+v", m.Generator)
	}
	mu.Lock()
	defer mu.Unlock()
	// Sequential: the first 6 on one connection, the next 9 on another.
	for i, c := range conns {
		if want := conns[0]; i >= 6 {
			want = conns[6]
			if c != want || c == conns[0] {
				t.Errorf("request %d on %s, want client b's own connection %s", i, c, want)
			}
		} else if c != want {
			t.Errorf("request %d on %s, want client a's connection %s", i, c, want)
		}
	}
	if got := strings.Join(paths[:6], ","); got != "/read,/read,/event,/read,/read,/event" {
		t.Errorf("client a's paths %s", got)
	}
	if m.Latency.TotalCount() != 15 || m.SendLag.TotalCount() != 15 || m.SendLag.Quantile(1) != 0 {
		t.Errorf("latency %d values, send lag %d values max %s", m.Latency.TotalCount(), m.SendLag.TotalCount(), m.SendLag.Quantile(1))
	}
}

// TestClosedLoopNoKeepAlive: with keep-alive off, a closed-loop client
// opens one connection per request.
func TestClosedLoopNoKeepAlive(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	off := false
	spec := workloads.Spec{
		Closed:  &workloads.Closed{Order: workloads.Parallel},
		Classes: []workloads.Class{{Name: "x", Weight: 1}},
		Clients: workloads.Clients{KeepAlive: &off, Named: []workloads.NamedClient{{Name: "a", Requests: 5}, {Name: "b", Requests: 7}}},
	}.WithDefaults()
	m, err := Attack(context.Background(), srv.URL, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 12 || m.Generator.Opened != 12 {
		t.Errorf("%d requests over %d connections, want 12 and 12", m.Requests, m.Generator.Opened)
	}
}

// TestBurstsLate: a burst whose requests all reach the server before any
// answer leaves counts no late request; a burst whose second request is
// still being written (its body held up by the server) when the first
// answer came back counts one, so its loads can be left out of claims on
// simultaneous dispatch.
func TestBurstsLate(t *testing.T) {
	run := func(t *testing.T, body int, handler func(n int, w http.ResponseWriter, r *http.Request)) []int {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			i := n
			n++
			mu.Unlock()
			w.Header().Set("X-Worker", strconv.Itoa(i%2))
			handler(i, w, r)
		}))
		defer srv.Close()
		spec := workloads.Spec{
			Bursts:  &workloads.Bursts{Size: 2, Count: 3},
			Classes: []workloads.Class{{Name: "task", Path: "/work", Weight: 1, BodyBytes: body}},
		}.WithDefaults()
		m := attackValid(t, srv.URL, spec)
		if m.Errors != 0 || len(m.Bursts.Loads) != 3 {
			t.Fatalf("errors %d (%v), %d bursts", m.Errors, m.ErrorKinds, len(m.Bursts.Loads))
		}
		return m.Bursts.Late
	}
	t.Run("together", func(t *testing.T) {
		// Each pair answers only once both of its requests arrived, and
		// 100 ms later: a writer's stamp is taken just after its write
		// returns, and a writer held up past the answer (2 busy CPUs in CI)
		// would count as late, which it was not.
		var mu sync.Mutex
		arrived := map[int]chan struct{}{}
		late := run(t, 0, func(i int, w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			pair := i / 2
			ch, ok := arrived[pair]
			if !ok {
				ch = make(chan struct{})
				arrived[pair] = ch
			} else {
				close(ch)
			}
			mu.Unlock()
			<-ch
			time.Sleep(100 * time.Millisecond)
		})
		if !slices.Equal(late, []int{0, 0, 0}) {
			t.Errorf("late %v, want none", late)
		}
	})
	t.Run("apart", func(t *testing.T) {
		// The first request of each pair is read and answered; the second's
		// 16 MiB body (more than the sockets buffer) is read only 200 ms
		// after that answer, so its write ends after the answer came back.
		var mu sync.Mutex
		answered := map[int]chan struct{}{}
		ch := func(pair int) chan struct{} {
			mu.Lock()
			defer mu.Unlock()
			if answered[pair] == nil {
				answered[pair] = make(chan struct{})
			}
			return answered[pair]
		}
		late := run(t, 16<<20, func(i int, w http.ResponseWriter, r *http.Request) {
			if i%2 == 1 {
				<-ch(i / 2)
				time.Sleep(200 * time.Millisecond)
			}
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				t.Error(err)
			}
			if i%2 == 0 {
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				close(ch(i / 2))
			}
		})
		if !slices.Equal(late, []int{1, 1, 1}) {
			t.Errorf("late %v, want one in each burst", late)
		}
	})
}

// TestLateRequests: a request is late when written after the burst's first
// answer, or at least the shortest service time after the burst's first
// write (an earlier request may have finished by then); with no known
// shortest service only the first criterion applies.
func TestLateRequests(t *testing.T) {
	t0 := time.Now()
	at := func(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }
	ts := []burstTimes{
		{wrote: at(0), answered: at(12)},
		{wrote: at(1), answered: at(13)},
		{wrote: at(9.9), answered: at(20)},  // within the 10 ms service
		{wrote: at(10.5), answered: at(22)}, // a service time after the first write
		{wrote: at(12.5), answered: at(24)}, // after the first answer too
		{},                                  // never written (failed to connect)
	}
	if got := lateRequests(ts, 10*time.Millisecond); got != 2 {
		t.Errorf("with a 10ms service: %d late, want 2", got)
	}
	if got := lateRequests(ts, 0); got != 1 {
		t.Errorf("with no known service: %d late, want 1 (written after the first answer)", got)
	}
	if got := lateRequests(ts[:3], 10*time.Millisecond); got != 0 {
		t.Errorf("together: %d late, want 0", got)
	}
	// Written together, but the balancer passed the third on late: its
	// worker received it after the first request's worker was done.
	ms := int64(time.Millisecond)
	stamped := []burstTimes{
		{wrote: at(0), answered: at(12), stamps: workloads.Times{Received: 100 * ms, Began: 100 * ms, Done: 110 * ms}},
		{wrote: at(1), answered: at(13), stamps: workloads.Times{Received: 101 * ms, Began: 101 * ms, Done: 111 * ms}},
		{wrote: at(2), answered: at(25), stamps: workloads.Times{Received: 112 * ms, Began: 112 * ms, Done: 122 * ms}},
	}
	if got := lateRequests(stamped, 10*time.Millisecond); got != 1 {
		t.Errorf("passed on late: %d late, want 1", got)
	}
	stamped[2].stamps = workloads.Times{Received: 102 * ms, Began: 110 * ms, Done: 120 * ms} // queued behind the first: together
	if got := lateRequests(stamped, 10*time.Millisecond); got != 0 {
		t.Errorf("queued at a busy worker: %d late, want 0", got)
	}
}

// TestClosedPatternOverSequence: the documented six-client sequence
// (shares 1, 2, 4, 8, 16, 32, one after another) with every fifth request
// an event. Counted over the whole sequence, requests 5, 10, ..., 60 are
// the 12 events; counted per client (the default), only clients with five
// or more requests have any: 1 + 3 + 6 = 10.
func TestClosedPatternOverSequence(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("X-Worker", "0")
	}))
	defer srv.Close()
	ka := true
	var named []workloads.NamedClient
	for _, n := range []int{1, 2, 4, 8, 16, 32} {
		named = append(named, workloads.NamedClient{Name: fmt.Sprintf("c%d", n), Requests: n})
	}
	for _, tc := range []struct {
		over          string
		events        uint64
		eventsByIndex []int // 1-based request numbers that are events
	}{
		{workloads.WholeSequence, 12, []int{5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60}},
		// Client c8 is requests 8-15, c16 16-31, c32 32-63: their own
		// fifth, tenth, ... requests.
		{"", 10, []int{12, 20, 25, 30, 36, 41, 46, 51, 56, 61}},
	} {
		t.Run("over "+cmp.Or(tc.over, "client (default)"), func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			spec := workloads.Spec{
				Closed: &workloads.Closed{Order: workloads.Sequential, Pattern: []string{"read", "read", "read", "read", "event"}, PatternOver: tc.over},
				Classes: []workloads.Class{
					{Name: "read", Path: "/read", Weight: 4},
					{Name: "event", Path: "/event", Weight: 1},
				},
				Clients: workloads.Clients{KeepAlive: &ka, Named: named},
			}.WithDefaults()
			m := attackValid(t, srv.URL, spec)
			if m.Requests != 63 || m.Classes[1].Requests != tc.events || m.Classes[0].Requests != 63-tc.events {
				t.Errorf("requests %d, reads %d, events %d; want 63, %d, %d", m.Requests, m.Classes[0].Requests, m.Classes[1].Requests, 63-tc.events, tc.events)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []int
			for i, p := range paths {
				if p == "/event" {
					got = append(got, i+1)
				}
			}
			if !slices.Equal(got, tc.eventsByIndex) {
				t.Errorf("events at requests %v, want %v", got, tc.eventsByIndex)
			}
		})
	}
}

// attackValid validates spec and attacks url with it.
func attackValid(t *testing.T, url string, spec workloads.Spec) *results.Measurement {
	t.Helper()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := Attack(context.Background(), url, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
