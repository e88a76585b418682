package balance

import (
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestLeastConnBurstExact: 16 requests arriving together at 8 idle
// backends, picked and acquired concurrently with no request ending, must
// land exactly 2 on each, as a least-loaded proxy that decides one request
// at a time does. A pick and its acquisition are one step: two concurrent
// picks that both saw a backend at its least count must not both take it.
func TestLeastConnBurstExact(t *testing.T) {
	const workers, size = 8, 16
	bursts := 200000
	if testing.Short() {
		bursts = 5000
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two threads to race")
	}
	lc := new(LeastConn)
	for k := range bursts {
		p := pool(make([]int64, workers)...)
		var gate, done sync.WaitGroup
		gate.Add(1)
		for range size {
			done.Add(1)
			go func() {
				defer done.Done()
				gate.Wait()
				if b := PickAcquire(lc, p, nil); b == nil {
					t.Error("no backend picked")
				}
			}()
		}
		gate.Done()
		done.Wait()
		loads := make([]int64, workers)
		for i, b := range p {
			loads[i] = b.Active()
		}
		if slices.Max(loads) != size/workers || slices.Min(loads) != size/workers {
			t.Fatalf("burst %d: loads %v, want %d on each", k, loads, size/workers)
		}
	}
}

// TestPickAcquireCounts: PickAcquire counts the request on the backend it
// returns whether the policy is an Acquirer or not, and returns nil from
// an empty or wholly unavailable pool.
func TestPickAcquireCounts(t *testing.T) {
	for name, pol := range allPolicies(t) {
		p := pool(0, 0, 0)
		b := PickAcquire(pol, p, httptest.NewRequest("GET", "/", nil))
		if b == nil || b.Active() != 1 || b.Requests() != 1 {
			t.Fatalf("%s: picked %v, want one backend with 1 active and 1 request", name, b)
		}
		if b := PickAcquire(pol, down(pool(0, 0), 0, 1), nil); b != nil {
			t.Errorf("%s: picked %d from a pool with none available", name, b.Index())
		}
		if b := PickAcquire(pol, nil, nil); b != nil {
			t.Errorf("%s: picked from an empty pool", name)
		}
	}
}
