package balance

import "net/http"

func init() {
	Register("p2c", func(args map[string]string) (Policy, error) {
		a := newArgs("p2c", args)
		seed := a.uint("seed", DefaultSeed)
		if err := a.done(); err != nil {
			return nil, err
		}
		return NewP2C(seed), nil
	})
}

var _ Policy = (*P2C)(nil)

// P2C is the p2c policy (power of two choices, as Envoy's LEAST_REQUEST):
// draw two distinct backends at random from a seeded source (argument
// seed, default DefaultSeed) and take the one with fewer active requests;
// on a tie, the first drawn. If a drawn backend is unavailable the other
// one is taken; if both are, a backend is drawn among the available ones.
// It is safe for concurrent use; a single caller gets the same sequence
// for the same seed and loads.
type P2C struct {
	rnd rng
}

// NewP2C returns a P2C policy drawing from seed.
func NewP2C(seed uint64) *P2C {
	return &P2C{rnd: rng{seed: seed}}
}

// Pick returns the less active of two random backends, or nil if none is
// available.
func (p *P2C) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	switch n {
	case 0:
		return nil
	case 1:
		if pool[0].Available() {
			return pool[0]
		}
		return nil
	}
	r := p.rnd.next()
	i := below(r, n)
	j := i + 1 + below(r>>32, n-1) // uniform over the other n-1
	if j >= n {
		j -= n
	}
	a, b := pool[i], pool[j]
	switch okA, okB := a.Available(), b.Available(); {
	case okA && okB:
		if b.Active() < a.Active() {
			return b
		}
		return a
	case okA:
		return a
	case okB:
		return b
	}
	return pickRandom(&p.rnd, pool)
}
