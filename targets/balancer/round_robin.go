package balancer

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
// of requests. It ignores load. The zero value is ready to use; it is safe
// for concurrent use.
type RoundRobin struct {
	next atomic.Uint64
}

// Pick returns the next backend in turn, or nil if pool is empty.
func (rr *RoundRobin) Pick(pool []*Backend, _ *http.Request) *Backend {
	if len(pool) == 0 {
		return nil
	}
	return pool[(rr.next.Add(1)-1)%uint64(len(pool))]
}
