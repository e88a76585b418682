package balancer

import (
	"net/http"
	"sync/atomic"
)

func init() {
	Register("least_conn", func(args map[string]string) (Policy, error) {
		if err := noArgs("least_conn", args); err != nil {
			return nil, err
		}
		return new(LeastConn), nil
	})
}

var _ Policy = (*LeastConn)(nil)

// LeastConn is the least_conn policy: the backend with the fewest active
// requests. Ties are broken round robin, as nginx does: each pick starts its
// scan one position further than the previous one and keeps the first
// minimum it meets, so an idle pool is used in turn instead of piling onto
// backend 0. The zero value is ready to use; it is safe for concurrent use.
type LeastConn struct {
	next atomic.Uint64
}

// Pick returns the least active backend, or nil if pool is empty.
func (lc *LeastConn) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	i := int((lc.next.Add(1) - 1) % uint64(n))
	best := pool[i]
	least := best.Active()
	for range n - 1 {
		if least == 0 {
			break // nothing beats an idle backend
		}
		if i++; i == n {
			i = 0
		}
		if a := pool[i].Active(); a < least {
			best, least = pool[i], a
		}
	}
	return best
}
