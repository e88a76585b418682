package balance

import "net/http"

func init() {
	Register("least_conn", func(args map[string]string) (Policy, error) {
		if err := noArgs("least_conn", args); err != nil {
			return nil, err
		}
		return new(LeastConn), nil
	})
}

var _ Policy = (*LeastConn)(nil)

// LeastConn is the least_conn policy: the available backend with the fewest
// active requests. Ties are broken round robin, as nginx does: each pick
// starts its scan one position further than the previous one and keeps the
// first minimum it meets, so an idle pool is used in turn instead of piling
// onto backend 0. The zero value is ready to use; it is safe for concurrent
// use.
type LeastConn struct {
	rot rotation
}

// Pick returns the least active available backend, or nil if none is
// available.
func (lc *LeastConn) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	i := lc.rot.start(n)
	var best *Backend
	var least int64
	for range n {
		if b := pool[i]; b.Available() {
			a := b.Active()
			if best == nil || a < least {
				best, least = b, a
				if least == 0 {
					break // nothing beats an idle backend
				}
			}
		}
		if i++; i == n {
			i = 0
		}
	}
	return best
}
