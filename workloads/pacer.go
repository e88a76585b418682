package workloads

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lbbench/lbbench/internal/sleep"
)

// ScheduleWindow is how many recent intended send times a Pacer keeps. A
// result can be mapped to its intended time while fewer than ScheduleWindow
// requests were scheduled after it; MaxInFlight keeps the generator well
// inside that bound.
const ScheduleWindow = 1 << 16

// MaxInFlight is the most requests the generator may have outstanding at
// once (vegeta's MaxWorkers). It is half the schedule window, so every
// result still finds its intended send time.
const MaxInFlight = ScheduleWindow / 2

// Pacer is a vegeta.Pacer whose schedule is a pure function of the request
// index: request n is meant to leave at Offset(n) after the attack began.
//
// Why this matters: vegeta's attack loop hands out ticks in order and assigns
// Result.Seq in the same critical section as Result.Timestamp, so the n-th
// result by Seq answers the n-th tick of this schedule. When every generator
// worker is busy the loop blocks and later ticks leave late; measuring from
// Intended(Seq) charges that lateness to the latency instead of hiding it
// (coordinated omission).
//
// A rate that is not a positive finite number (NaN, ±Inf, 0; Validate
// refuses them) schedules nothing, so a Pacer never spins through an endless
// schedule at offset 0 nor waits for an offset it cannot represent.
//
// Pace is called by vegeta's single attack goroutine; Intended and Began may
// be called concurrently from any goroutine that has received a result.
type Pacer struct {
	rate float64                                // nominal mean rate over the measured window, per second
	next func() time.Duration                   // offset of the next request; >= end when done
	end  time.Duration                          // no request is scheduled at or after this offset
	wait func(context.Context, time.Time) error // sleeps until a request's intended time
	ctx  context.Context                        // ends the schedule early; see StopOn

	scheduled uint64        // index of the next offset to generate; Pace only
	generated atomic.Uint64 // offsets [0, generated) have been written
	ring      [ScheduleWindow]atomic.Int64
	began     atomic.Pointer[time.Time]
}

// NewPacer returns a Pacer for s's arrival process covering the warm-up and
// the measured duration. s must have been through WithDefaults and Validate.
func NewPacer(s Spec) *Pacer {
	a := s.Arrival
	p := &Pacer{
		rate: a.MeanRate(s.Duration),
		end:  s.WarmupTime() + s.Duration,
		wait: sleep.UntilContext,
		ctx:  context.Background(),
	}
	switch a.Kind {
	case Poisson:
		rng := rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
		gap := float64(time.Second) / float64(a.RatePerSec)
		var t float64
		p.next = func() time.Duration {
			if !validRate(float64(a.RatePerSec)) {
				return math.MaxInt64
			}
			t += rng.ExpFloat64() * gap
			if t >= float64(p.end) { // also where time.Duration(t) would overflow
				return math.MaxInt64
			}
			return time.Duration(t)
		}
	case Burst:
		var n int
		p.next = func() time.Duration {
			off := time.Duration(n/a.Size) * a.Every
			n++
			return off
		}
	case Ramp:
		w := s.WarmupTime()
		p.next = segments([]segment{
			{0, w, float64(a.From), float64(a.From)},
			{w, p.end, float64(a.From), float64(a.To)},
		})
	case Steps:
		first := float64(a.Steps[0].RatePerSec)
		segs := []segment{{0, s.WarmupTime(), first, first}}
		t := s.WarmupTime()
		for _, st := range a.Steps {
			segs = append(segs, segment{t, t + st.Duration, float64(st.RatePerSec), float64(st.RatePerSec)})
			t += st.Duration
		}
		p.next = segments(segs)
	default: // Constant
		p.next = segments([]segment{{0, p.end, float64(a.RatePerSec), float64(a.RatePerSec)}})
	}
	return p
}

// validRate reports whether r requests per second can be scheduled: a
// positive finite number.
func validRate(r float64) bool { return r > 0 && !math.IsInf(r, 0) }

// segment is a stretch of the schedule whose rate goes linearly from
// `from` to `to` requests per second over [start, end).
type segment struct {
	start, end time.Duration
	from, to   float64
}

// segments returns a generator walking through segs in order. Offsets are
// computed from the index within a segment, not summed, so rounding does
// not drift.
func segments(segs []segment) func() time.Duration {
	i, k := 0, 0.0
	return func() time.Duration {
		for i < len(segs) {
			sg := segs[i]
			d := (sg.end - sg.start).Seconds()
			var t float64                                                                        // seconds into the segment of request k
			if !(sg.from >= 0 && sg.to >= 0) || math.IsInf(sg.from, 0) || math.IsInf(sg.to, 0) { // NaN fails >= too
				i, k = i+1, 0 // a rate that cannot be scheduled: no request
				continue
			}
			if sg.to == sg.from || d == 0 {
				t = k / sg.from
			} else {
				// Requests due by t: from·t + slope·t²/2 = k.
				slope := (sg.to - sg.from) / d
				disc := sg.from*sg.from + 2*slope*k
				if disc < 0 { // a falling ramp has no request k in it
					i, k = i+1, 0
					continue
				}
				t = (math.Sqrt(disc) - sg.from) / slope
			}
			// Compared as floats first: a NaN, negative or huge t (a
			// zero rate gives +Inf) must not reach time.Duration, whose
			// conversion of such values is undefined.
			ns := math.Round(t * float64(time.Second))
			if ns >= 0 && ns < float64(sg.end-sg.start) {
				k++
				return sg.start + time.Duration(ns)
			}
			i, k = i+1, 0
		}
		return math.MaxInt64
	}
}

// Pace implements vegeta.Pacer. hits is the number of ticks already handed
// out; the next tick is request number hits.
func (p *Pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.began.Load() == nil {
		// vegeta passes time.Since(began); recover began itself so that
		// intended times share the clock of Result.Timestamp.
		b := time.Now().Add(-elapsed)
		p.began.Store(&b)
	}
	for p.scheduled <= hits {
		off := p.next()
		if off < 0 || off >= p.end {
			return 0, true
		}
		p.ring[p.scheduled%ScheduleWindow].Store(int64(off))
		p.scheduled++
		p.generated.Store(p.scheduled)
	}
	// Wait here rather than returning the wait to vegeta: its time.Sleep
	// wakes up to a millisecond late, which would show as send lag.
	off := time.Duration(p.ring[hits%ScheduleWindow].Load())
	if p.wait(p.ctx, p.Began().Add(off)) != nil {
		return 0, true // StopOn's context ended: no more requests
	}
	return 0, false
}

// StopOn makes the schedule end when ctx does: a Pace waiting for a
// request's intended time returns at once, telling vegeta to stop, however
// far away that time is (at 0.05 requests per second, 20 s). Without it a
// Pacer's waits are ended only by its schedule. Call it before the first
// Pace.
func (p *Pacer) StopOn(ctx context.Context) { p.ctx = ctx }

// Rate implements vegeta.Pacer: the intended mean rate in requests per second.
func (p *Pacer) Rate(time.Duration) float64 { return p.rate }

// Began is the attack's start as seen by vegeta, or the zero time before the
// first Pace call.
func (p *Pacer) Began() time.Time {
	if b := p.began.Load(); b != nil {
		return *b
	}
	return time.Time{}
}

// Offset returns request seq's intended send time relative to Began. ok is
// false when seq was never scheduled or fell out of the schedule window.
func (p *Pacer) Offset(seq uint64) (off time.Duration, ok bool) {
	g := p.generated.Load()
	if seq >= g || g-seq > ScheduleWindow {
		return 0, false
	}
	return time.Duration(p.ring[seq%ScheduleWindow].Load()), true
}

// Intended returns request seq's intended send time.
func (p *Pacer) Intended(seq uint64) (time.Time, bool) {
	off, ok := p.Offset(seq)
	if !ok {
		return time.Time{}, false
	}
	return p.Began().Add(off), true
}

// Abandon walks the rest of the schedule after the first handed-out
// requests (those vegeta was given before the attack ended), calling f
// with each remaining request's offset, and returns how many there were:
// the requests that were never sent. The schedule is used up; call it
// once, after the attack.
func (p *Pacer) Abandon(handed uint64, f func(off time.Duration)) uint64 {
	var n uint64
	for i := handed; i < p.scheduled; i++ {
		f(time.Duration(p.ring[i%ScheduleWindow].Load()))
		n++
	}
	for {
		off := p.next()
		if off < 0 || off >= p.end {
			return n
		}
		f(off)
		n++
	}
}

// Scheduled is the number of requests scheduled so far.
func (p *Pacer) Scheduled() uint64 { return p.generated.Load() }

// SetWait replaces how Pace waits for a request's intended time (by default
// a precise sleep). Tests that only need the schedule pass a no-op.
func (p *Pacer) SetWait(f func(time.Time)) {
	p.wait = func(_ context.Context, t time.Time) error { f(t); return nil }
}
