package harness

import (
	"context"
	"time"
)

type hardStopKey struct{}

// WithHardStop returns a copy of ctx that carries hard: the signal that
// whoever waits for processes to stop must stop waiting and kill them. The
// command line cancels ctx on the first Ctrl-C (the run ends, its
// processes are asked to stop and given DefaultStopTimeout) and hard on the
// second (they are killed at once). Teardown waits take their context from
// TeardownContext, which ends with hard.
func WithHardStop(ctx, hard context.Context) context.Context {
	return context.WithValue(ctx, hardStopKey{}, hard)
}

// TeardownContext returns the context to stop and remove what ctx's run
// started: unlike ctx it is not cancelled when ctx is (teardown must run
// after an interruption too), it ends after timeout, and at once when ctx's
// hard stop (WithHardStop) ends, so that a second Ctrl-C turns waiting for
// processes to exit into killing them. The caller must call cancel.
func TeardownContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	hard, ok := ctx.Value(hardStopKey{}).(context.Context)
	if !ok || hard == nil {
		return tctx, cancel
	}
	stop := context.AfterFunc(hard, cancel)
	return tctx, func() {
		stop()
		cancel()
	}
}

// hardDone returns the channel closed by ctx's hard stop, or nil (never
// ready) when ctx carries none.
func hardDone(ctx context.Context) <-chan struct{} {
	if hard, ok := ctx.Value(hardStopKey{}).(context.Context); ok && hard != nil {
		return hard.Done()
	}
	return nil
}
