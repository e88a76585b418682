package balance

import (
	"math"
	"net/http"
	"time"
)

// DefaultPeakEWMADecay is peak_ewma's decay time constant when its decay
// argument is absent: observations older than a few decays hardly count.
const DefaultPeakEWMADecay = time.Second

func init() {
	Register("peak_ewma", func(args map[string]string) (Policy, error) {
		a := newArgs("peak_ewma", args)
		decay := a.duration("decay", DefaultPeakEWMADecay)
		if err := a.done(); err != nil {
			return nil, err
		}
		return NewPeakEWMA(decay), nil
	})
}

var (
	_ Policy   = (*PeakEWMA)(nil)
	_ Observer = (*PeakEWMA)(nil)
)

// PeakEWMA is the peak_ewma policy (after Finagle and linkerd): each backend
// has a latency cost, a moving average of observed response times that
// jumps at once to any higher observation (the peak) and otherwise decays
// toward newer observations, and toward zero while none arrive, with time
// constant decay (argument decay, default DefaultPeakEWMADecay): an
// observation after a gap dt weighs 1-e^(-dt/decay). The available backend
// with the lowest cost*(active+1) wins, ties broken round robin. A backend
// with no cost yet counts as free when idle and as worse than any measured
// one when busy (then the fewest pending wins). Costs live on the Backends.
// It is safe for concurrent use: concurrent observations of one backend may
// overwrite each other, which only drops one of them.
//
// In layer-4 mode there are no response times, so it acts as least_conn.
type PeakEWMA struct {
	decay float64 // nanoseconds
	rot   rotation
	now   func() int64 // nanotime; replaced in tests
}

// NewPeakEWMA returns a PeakEWMA policy with the given decay time constant,
// which must be > 0 (the registered factory checks it).
func NewPeakEWMA(decay time.Duration) *PeakEWMA {
	return &PeakEWMA{decay: float64(decay), now: nanotime}
}

// Pick returns the available backend with the lowest cost*(active+1), or nil
// if none is available.
//
// It ranks without evaluating the decay: cost*(active+1) at time now is
// c*e^(-(now-stamp)/decay)*(active+1), whose logarithm is
// [ln c + stamp/decay] + ln(active+1) - now/decay. The bracket is kept per
// backend by Observe and the last term is the same for all, so the pick
// needs one table lookup per backend instead of an exponential. Backends
// with no cost yet rank apart: idle ones first (their load is 0), busy ones
// last, by pending requests.
func (pe *PeakEWMA) Pick(pool []*Backend, _ *http.Request) *Backend {
	n := len(pool)
	if n == 0 {
		return nil
	}
	i := pe.rot.start(n)
	var best *Backend
	var bestClass int
	var least float64
	for range n {
		if b := pool[i]; b.Available() {
			a := b.Active()
			class, load := 1, 0.0 // measured
			switch c := loadFloat(&b.score); {
			case c == 0 && a == 0:
				class = 0
			case c == 0:
				class, load = 2, float64(a)
			default:
				load = loadFloat(&b.rank) + lnOnePlus(a)
			}
			if best == nil || class < bestClass || class == bestClass && load < least {
				best, bestClass, least = b, class, load
			}
		}
		if i++; i == n {
			i = 0
		}
	}
	return best
}

// lnTable holds ln(1+k) for the active counts a pick usually meets.
var lnTable = func() (t [1024]float64) {
	for k := range t {
		t[k] = math.Log1p(float64(k))
	}
	return t
}()

func lnOnePlus(k int64) float64 {
	if k >= 0 && k < int64(len(lnTable)) {
		return lnTable[k]
	}
	return math.Log1p(float64(k))
}

// Observe folds one response time into b's cost.
func (pe *PeakEWMA) Observe(b *Backend, rtt time.Duration) {
	now := pe.now()
	x := float64(rtt)
	c := loadFloat(&b.score)
	if x > c {
		c = x // a peak is taken at once
	} else {
		dt := max(now-b.stamp.Load(), 0)
		w := math.Exp(-float64(dt) / pe.decay)
		c = c*w + x*(1-w)
	}
	storeFloat(&b.score, c)
	b.stamp.Store(now)
	storeFloat(&b.rank, math.Log(c)+float64(now)/pe.decay)
}
