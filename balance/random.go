package balance

import "net/http"

func init() {
	Register("random", func(args map[string]string) (Policy, error) {
		a := newArgs("random", args)
		seed := a.uint("seed", DefaultSeed)
		if err := a.done(); err != nil {
			return nil, err
		}
		return NewRandom(seed), nil
	})
}

var _ Policy = (*Random)(nil)

// Random is the random policy: a backend drawn uniformly among the
// available ones from a seeded source (argument seed, default DefaultSeed),
// blind to load. It is safe for concurrent use; a single caller gets the
// same sequence for the same seed.
type Random struct {
	rnd rng
}

// NewRandom returns a Random policy drawing from seed.
func NewRandom(seed uint64) *Random {
	return &Random{rnd: rng{seed: seed}}
}

// Pick returns a random available backend, or nil if none is available.
func (rp *Random) Pick(pool []*Backend, _ *http.Request) *Backend {
	return pickRandom(&rp.rnd, pool)
}

// pickRandom draws uniformly among the available backends of pool. The
// first draw is over the whole pool; only if it lands on an unavailable
// backend does it count the available ones and draw again among them. Each
// available backend is then chosen with probability 1/n + (d/n)(1/m) =
// 1/m, with d unavailable and m available of n.
func pickRandom(g *rng, pool []*Backend) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	r := g.next()
	if b := pool[below(r, n)]; b.Available() {
		return b
	}
	m := 0
	for _, b := range pool {
		if b.Available() {
			m++
		}
	}
	if m == 0 {
		return nil
	}
	k := below(r>>32, m)
	for _, b := range pool {
		if b.Available() {
			if k == 0 {
				return b
			}
			k--
		}
	}
	return nil // availability changed during the scan and none is left
}
