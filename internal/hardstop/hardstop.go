// Package hardstop carries the second Ctrl-C through a context: the
// signal that whoever waits for processes to stop must stop waiting and
// kill them. The command line cancels a run's context on the first
// Ctrl-C (the run ends, its processes are asked to stop and given time)
// and the hard stop on the second (they are killed at once).
//
// It is internal, not part of a driver package, because both the drivers
// (tearing a deployment down) and the load generator (its generator
// processes) wait for processes, and the generator may not import the
// drivers.
package hardstop

import (
	"context"
	"time"
)

type key struct{}

// With returns a copy of ctx that carries hard, the hard stop.
func With(ctx, hard context.Context) context.Context {
	return context.WithValue(ctx, key{}, hard)
}

// Done returns the channel closed by ctx's hard stop, or nil (never ready)
// when ctx carries none.
func Done(ctx context.Context) <-chan struct{} {
	if hard, ok := ctx.Value(key{}).(context.Context); ok && hard != nil {
		return hard.Done()
	}
	return nil
}

// Teardown returns the context to stop and remove what ctx's run
// started: unlike ctx it is not cancelled when ctx is (teardown must run
// after an interruption too), it ends after timeout, and at once when
// ctx's hard stop ends, so that a second Ctrl-C turns waiting for
// processes to exit into killing them. The caller must call cancel.
func Teardown(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	hard, ok := ctx.Value(key{}).(context.Context)
	if !ok || hard == nil {
		return tctx, cancel
	}
	stop := context.AfterFunc(hard, cancel)
	return tctx, func() {
		stop()
		cancel()
	}
}
