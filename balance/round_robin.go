package balance

import (
	"net/http"
	"sync/atomic"
)

func init() {
	Register("round_robin", func(args map[string]string) (Policy, error) {
		if err := noArgs("round_robin", args); err != nil {
			return nil, err
		}
		return new(RoundRobin), nil
	})
}

var _ Policy = (*RoundRobin)(nil)

// RoundRobin is the round_robin policy: one shared atomic counter modulo the
// pool size, so over whole cycles every backend gets exactly the same number
// of requests, however many goroutines pick at once. It ignores load. An
// unavailable backend's turn goes to the next available one after it. The
// zero value is ready to use; it is safe for concurrent use.
type RoundRobin struct {
	next atomic.Uint64
}

// Pick returns the next backend in turn, or nil if none is available.
func (rr *RoundRobin) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	i := int((rr.next.Add(1) - 1) % uint64(n))
	for range n {
		if b := pool[i]; b.Available() {
			return b
		}
		if i++; i == n {
			i = 0
		}
	}
	return nil
}
