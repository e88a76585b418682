package balance

import "net/http"

// DefaultEWMAAlpha is ewma_least_conn's smoothing weight when its alpha
// argument is absent.
const DefaultEWMAAlpha = 0.3

func init() {
	Register("ewma_least_conn", func(args map[string]string) (Policy, error) {
		a := newArgs("ewma_least_conn", args)
		alpha := a.float("alpha", DefaultEWMAAlpha, 0, 1)
		if err := a.done(); err != nil {
			return nil, err
		}
		return NewEWMALeastConn(alpha), nil
	})
}

var _ Policy = (*EWMALeastConn)(nil)

// EWMALeastConn is the ewma_least_conn policy: each backend has a smoothed
// busyness score s, refreshed at every pick as s = alpha*active +
// (1-alpha)*s, and the available backend with the lowest score wins, ties
// broken round robin as in LeastConn. A small alpha (argument alpha, in
// (0, 1], default DefaultEWMAAlpha) resists one-off spikes; alpha = 1 is
// least_conn. Scores live on the Backends, so they describe the backend, not
// one pick. It is safe for concurrent use: concurrent refreshes of one
// score may overwrite each other, which only drops one smoothing step.
type EWMALeastConn struct {
	alpha float64
	rot   rotation
}

// NewEWMALeastConn returns an EWMALeastConn policy; alpha must be in
// (0, 1] (the registered factory checks it).
func NewEWMALeastConn(alpha float64) *EWMALeastConn {
	return &EWMALeastConn{alpha: alpha}
}

// Pick refreshes the score of every available backend and returns the
// lowest, or nil if none is available.
func (e *EWMALeastConn) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	i := e.rot.start(n)
	var best *Backend
	var least float64
	for range n {
		if b := pool[i]; b.Available() {
			old := loadFloat(&b.score)
			s := e.alpha*float64(b.Active()) + (1-e.alpha)*old
			if s != old {
				// Once a steady load has converged, skipping the store
				// keeps concurrent picks from bouncing cache lines.
				storeFloat(&b.score, s)
			}
			if best == nil || s < least {
				best, least = b, s
			}
		}
		if i++; i == n {
			i = 0
		}
	}
	return best
}
