package workloads

import (
	"fmt"
	"time"

	"github.com/lbbench/lbbench/internal/field"
)

// NoWarmup is Spec.Warmup's "no warm-up": zero there means DefaultWarmup.
const NoWarmup time.Duration = -1

// Overrides adjust a workload from the command line: the one place where
// a flag's rate, duration, warm-up, timeout or client model replaces a
// spec's. "lbbench attack" applies them to its workload, run and model sim
// to their scenario's (scenario.Overrides). A nil field leaves the spec's
// value. Each value is checked on its own, and each error names its flag;
// the spec's Validate then checks them together with the rest.
type Overrides struct {
	// Rate is --rate, the rate of a constant or poisson arrival.
	Rate *Rate
	// Duration is --duration, the measured duration.
	Duration *time.Duration
	// UntilInterrupted, attack's --duration 0, replaces Duration with the
	// longest the limits allow for the workload as overridden
	// (Spec.UntilInterrupted): the run ends when it is interrupted.
	// Duration is then not used.
	UntilInterrupted bool
	// Warmup is --warmup; zero means no warm-up.
	Warmup *time.Duration
	// Timeout is --timeout, each request's.
	Timeout *time.Duration
	// Connections, KeepAlive and MaxInFlight are --connections,
	// --keepalive and --max-in-flight: the client model's (Clients).
	Connections *int
	KeepAlive   *bool
	MaxInFlight *int
}

// check checks each value given on its own.
func (o Overrides) check() error {
	if o.Duration != nil && !o.UntilInterrupted {
		if d := *o.Duration; d < MinDuration || d > MaxRunTime {
			return field.Errorf("--duration", "must be between %s and %s, got %s", MinDuration, MaxRunTime, d)
		}
	}
	if o.Warmup != nil {
		if d := *o.Warmup; d < 0 || d > MaxRunTime {
			return field.Errorf("--warmup", "must be between 0 and %s, got %s", MaxRunTime, d)
		}
	}
	if o.Rate != nil {
		if r := float64(*o.Rate); !(r > 0) || r > MaxRate {
			return field.Errorf("--rate", "must be > 0 and at most %.0e requests per second, got %g", MaxRate, r)
		}
	}
	if o.Timeout != nil && *o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", *o.Timeout)
	}
	if o.Connections != nil && *o.Connections < 1 {
		return fmt.Errorf("--connections must be at least 1, got %d", *o.Connections)
	}
	if o.MaxInFlight != nil && *o.MaxInFlight < 1 {
		return fmt.Errorf("--max-in-flight must be at least 1, got %d", *o.MaxInFlight)
	}
	return nil
}

// Apply checks each override and sets it on s; on an error s is left as
// it was. Call s's WithDefaults and Validate after it.
func (o Overrides) Apply(s *Spec) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.Duration != nil && !o.UntilInterrupted {
		s.Duration = *o.Duration
	}
	if o.Warmup != nil {
		s.Warmup = *o.Warmup
		if s.Warmup == 0 {
			s.Warmup = NoWarmup
		}
	}
	if o.Rate != nil {
		s.Arrival.RatePerSec = *o.Rate
	}
	if o.Timeout != nil {
		s.Timeout = *o.Timeout
	}
	o.setClients(&s.Clients)
	if o.UntilInterrupted {
		s.Duration = s.UntilInterrupted()
	}
	return nil
}

// ApplyClients checks the overrides and sets those of the client model on
// c: for a client model of its own beside a workload's (a scenario
// variant's). On an error c is left as it was.
func (o Overrides) ApplyClients(c *Clients) error {
	if err := o.check(); err != nil {
		return err
	}
	o.setClients(c)
	return nil
}

func (o Overrides) setClients(c *Clients) {
	if o.Connections != nil {
		c.Connections = *o.Connections
	}
	if o.KeepAlive != nil {
		on := *o.KeepAlive
		c.KeepAlive = &on
	}
	if o.MaxInFlight != nil {
		c.MaxInFlight = *o.MaxInFlight
	}
}

// UntilInterrupted is the measured duration of a run that ends when it is
// interrupted (attack's --duration 0): the longest s's limits allow, a day
// less the warm-up, or fewer than MaxArrivals at a high rate, so that the
// run ends on Ctrl-C long before it ends on its own.
func (s Spec) UntilInterrupted() time.Duration {
	warmup := s.WithDefaults().WarmupTime()
	d := MaxRunTime - warmup
	if r := s.Arrival.MeanRate(d); r > 0 {
		// Arrivals count over warm-up + duration; keep one percent of
		// margin under the bound.
		if byArrivals := time.Duration(0.99*MaxArrivals/r*float64(time.Second)) - warmup; byArrivals < d {
			d = byArrivals
		}
	}
	return d
}
