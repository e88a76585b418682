package hardstop

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTeardown: the teardown context outlives its run's context,
// ends at its own deadline, and ends at once on the run's hard stop.
func TestTeardown(t *testing.T) {
	run, cancelRun := context.WithCancel(context.Background())
	hard, kill := context.WithCancel(context.Background())
	ctx := With(run, hard)

	td, cancel := Teardown(ctx, time.Hour)
	defer cancel()
	cancelRun() // the first Ctrl-C
	select {
	case <-td.Done():
		t.Fatal("the teardown context ended with the run's context")
	case <-time.After(50 * time.Millisecond):
	}
	if Done(ctx) == nil || Done(context.Background()) != nil {
		t.Fatal("Done: want the hard stop's channel, and nil without one")
	}
	kill() // the second Ctrl-C
	select {
	case <-td.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the teardown context outlived the hard stop")
	}

	short, cancelShort := Teardown(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	select {
	case <-short.Done():
		if !errors.Is(short.Err(), context.DeadlineExceeded) {
			t.Errorf("teardown without a hard stop ended with %v, want its deadline", short.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the teardown context outlived its deadline")
	}
}
