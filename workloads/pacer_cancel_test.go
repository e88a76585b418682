package workloads

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestPacerUnschedulableRates hands the pacer rates that Validate refuses
// (NaN, ±Inf, 0, negative) directly, with its real wait and no context:
// every arrival kind must end its schedule at once, never wait for an offset
// time.Duration cannot hold (NaN used to become math.MinInt64 and a wait of
// 292 years) nor spin through an endless schedule at offset 0 (+Inf).
func TestPacerUnschedulableRates(t *testing.T) {
	rates := map[string]Rate{"NaN": Rate(math.NaN()), "+Inf": Rate(math.Inf(1)), "-Inf": Rate(math.Inf(-1)), "zero": 0, "negative": -5}
	for name, r := range rates {
		specs := map[string]Spec{
			"constant": spec(Constant, r, time.Second),
			"poisson":  spec(Poisson, r, time.Second),
			"ramp":     {Arrival: Arrival{Kind: Ramp, From: r, To: r}, Duration: time.Second, Warmup: -1},
			"steps":    {Arrival: Arrival{Kind: Steps, Steps: []Step{{RatePerSec: r, Duration: time.Second}}}, Duration: time.Second, Warmup: -1},
		}
		for kind, s := range specs {
			t.Run(kind+"/"+name, func(t *testing.T) {
				p := NewPacer(s)
				done := make(chan int, 1)
				go func() {
					n := 0
					for ; n < 1_000_000; n++ {
						if _, stop := p.Pace(0, uint64(n)); stop {
							break
						}
					}
					done <- n
				}()
				select {
				case n := <-done:
					if n != 0 {
						t.Errorf("rate %v scheduled %d requests, want none", r, n)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("rate %v: Pace did not return within 10 s", r)
				}
			})
		}
	}
}

// TestPacerStopOn: at 0.05 requests per second the second request is due
// 20 s after the first; a Pace waiting for it returns stop as soon as the
// StopOn context ends. Checked as an ordering with a wide margin: it must
// return before a 10 s timer, half the wait it was in.
func TestPacerStopOn(t *testing.T) {
	p := NewPacer(spec(Constant, 0.05, time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	p.StopOn(ctx)
	if _, stop := p.Pace(0, 0); stop {
		t.Fatal("the first request, due at once, was not scheduled")
	}
	type paced struct {
		stop bool
		took time.Duration
	}
	done := make(chan paced, 1)
	start := time.Now()
	go func() {
		_, stop := p.Pace(time.Since(start), 1)
		done <- paced{stop, time.Since(start)}
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case r := <-done:
		if !r.stop {
			t.Errorf("Pace returned after %s without stop once its context ended", r.took)
		}
		t.Logf("Pace returned %s after it began, ~%s after the cancel", r.took, r.took-50*time.Millisecond)
	case <-time.After(10 * time.Second):
		t.Fatal("Pace still waiting for a request due in 20 s, 10 s after its context ended")
	}
}
