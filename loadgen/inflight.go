package loadgen

import (
	"context"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// cappedPacer is the vegeta.Pacer of one generator stream: the workload's
// Pacer, whose waits end with ctx, and an in-flight cap. Each tick takes a
// slot once its intended time has come; the stream's result loop frees it
// when the request's result arrives. A request due while every slot is
// taken waits for one: it leaves late, which its send lag records, and is
// counted as held. vegeta's attack loop is blocked meanwhile, so nothing
// piles up in memory however far the target or the generator falls behind.
//
// A request that waits for a slot past its request timeout, counted from
// its intended time, ends the attack: the backlog is then older than any
// answer could be in time, and sending it late would stretch the run far
// past its duration (a rate above capacity once took a minute for a
// one-second run). The requests still scheduled are counted as never sent
// (Abandon), so a run ends at its duration plus the request timeout at
// the latest.
//
// Pace is called by vegeta's single attack goroutine; done from the
// stream's result loop.
type cappedPacer struct {
	*workloads.Pacer
	ctx     context.Context
	timeout time.Duration // the request timeout; 0: none
	slots   chan struct{} // one token per outstanding request
	held    uint64        // Pace only; read after the attack ends
	peak    int           // Pace only; read after the attack ends
	handed  uint64        // ticks handed to vegeta; Pace only
	backlog bool          // the attack ended on a request held past its timeout
}

var _ vegeta.Pacer = (*cappedPacer)(nil)

func newCappedPacer(ctx context.Context, p *workloads.Pacer, limit int, timeout time.Duration) *cappedPacer {
	p.StopOn(ctx)
	return &cappedPacer{Pacer: p, ctx: ctx, timeout: timeout, slots: make(chan struct{}, max(limit, 1))}
}

// Pace implements vegeta.Pacer.
func (c *cappedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if _, stop := c.Pacer.Pace(elapsed, hits); stop {
		return 0, true
	}
	// The intended time has come (or passed): take a slot, waiting for
	// one if the cap is reached, but not past the request's timeout.
	select {
	case c.slots <- struct{}{}:
	default:
		c.held++
		var expired <-chan time.Time
		if intended, ok := c.Intended(hits); ok && c.timeout > 0 {
			left := time.Until(intended.Add(c.timeout))
			if left <= 0 {
				c.backlog = true
				return 0, true
			}
			t := time.NewTimer(left)
			defer t.Stop()
			expired = t.C
		}
		select {
		case c.slots <- struct{}{}:
		case <-expired:
			c.backlog = true
			return 0, true
		case <-c.ctx.Done():
			return 0, true
		}
	}
	c.peak = max(c.peak, len(c.slots))
	c.handed = hits + 1
	return 0, false
}

// done frees the slot of a request whose result arrived.
func (c *cappedPacer) done() {
	select {
	case <-c.slots:
	default: // a result without a slot cannot happen; never block on it
	}
}

// limit is the cap.
func (c *cappedPacer) limit() int { return cap(c.slots) }
