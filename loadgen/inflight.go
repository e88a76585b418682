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
// Pace is called by vegeta's single attack goroutine; done from the
// stream's result loop.
type cappedPacer struct {
	*workloads.Pacer
	ctx   context.Context
	slots chan struct{} // one token per outstanding request
	held  uint64        // Pace only; read after the attack ends
	peak  int           // Pace only; read after the attack ends
}

var _ vegeta.Pacer = (*cappedPacer)(nil)

func newCappedPacer(ctx context.Context, p *workloads.Pacer, limit int) *cappedPacer {
	p.StopOn(ctx)
	return &cappedPacer{Pacer: p, ctx: ctx, slots: make(chan struct{}, max(limit, 1))}
}

// Pace implements vegeta.Pacer.
func (c *cappedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if _, stop := c.Pacer.Pace(elapsed, hits); stop {
		return 0, true
	}
	// The intended time has come (or passed): take a slot, waiting for
	// one if the cap is reached.
	select {
	case c.slots <- struct{}{}:
	default:
		c.held++
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return 0, true
		}
	}
	c.peak = max(c.peak, len(c.slots))
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
