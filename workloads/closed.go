package workloads

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Closed-loop client orders.
const (
	// Parallel runs every named client at the same time, each on its own
	// connection.
	Parallel = "parallel"
	// Sequential runs the named clients one after another, in order: the
	// next starts when the previous client's last request is answered.
	Sequential = "sequential"
)

// ClosedOrders lists the closed-loop orders.
var ClosedOrders = []string{Parallel, Sequential}

// What a closed-loop pattern counts over (Closed.PatternOver).
const (
	// PerClient counts each client's requests from its first: every client
	// sends the pattern from its start, so a client's mix of classes is the
	// same whatever its place in the order, and parallel clients are as
	// deterministic as sequential ones.
	PerClient = "client"
	// WholeSequence counts the run's requests in the order they are sent,
	// one counter for all clients one after another: "every fifth request"
	// of the whole sequence, as in the documented layer-7 experiment. Only
	// with Order Sequential (parallel clients have no one order).
	WholeSequence = "sequence"
)

// PatternOvers lists what a pattern can count over.
var PatternOvers = []string{PerClient, WholeSequence}

// Closed makes a workload closed loop and deterministic: each named client
// sends its fixed number of requests (NamedClient.Requests) one after
// another on its connection, the next one only when the previous one is
// answered (plus Think), and the run ends when every request is answered.
// There is no arrival process, duration or warm-up. Latency is response
// time, so it hides the queueing a stalled server causes (coordinated
// omission): closed-loop runs answer "how many, where" questions (per-worker
// counts, decisions, connections), not tail-latency ones.
type Closed struct {
	// Order is Parallel or Sequential; empty means Sequential.
	Order string `yaml:"order" json:"order"`
	// Think is the pause a client makes after each answer; zero for none.
	Think time.Duration `yaml:"think,omitempty" json:"think,omitempty"`
	// Pattern names the class of each request by its number on its client,
	// repeating: [read, read, read, read, event] makes every fifth request
	// an event. Empty means classes drawn by weight from the seed.
	Pattern []string `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	// PatternOver is what the pattern counts over: PerClient (empty means
	// PerClient, the default: a client's mix does not depend on who ran
	// before it, and parallel clients are deterministic too) or
	// WholeSequence.
	PatternOver string `yaml:"pattern_over,omitempty" json:"pattern_over,omitempty"`
}

// OverSequence reports whether c's pattern counts over the whole sequence.
func (c *Closed) OverSequence() bool { return c != nil && c.PatternOver == WholeSequence }

// Bursts replaces the arrival process with Count bursts of Size
// simultaneous new connections, one request each; a burst starts Gap after
// the previous one is fully answered. Each burst's per-worker load is
// recorded: the measured form of `lbbench model balls`.
type Bursts struct {
	// Size is the number of simultaneous connections (tasks) per burst.
	Size int `yaml:"size" json:"size"`
	// Count is the number of bursts.
	Count int `yaml:"count" json:"count"`
	// Gap is the pause between bursts; zero for none.
	Gap time.Duration `yaml:"gap,omitempty" json:"gap,omitempty"`
}

// Limits of the deterministic modes.
const (
	// MaxClosedRequests bounds one named client's requests.
	MaxClosedRequests = 10_000_000
	// MaxBurstSize bounds a burst (the generator opens that many
	// connections at once).
	MaxBurstSize = 1000
	// MaxBursts bounds the number of bursts.
	MaxBursts = 1_000_000
)

// Deterministic reports whether s runs without an arrival process: closed
// loop (Closed) or bursts (Bursts).
func (s Spec) Deterministic() bool { return s.Closed != nil || s.Bursts != nil }

// TotalRequests is the number of requests a closed-loop or burst workload
// sends; 0 for an open-loop one.
func (s Spec) TotalRequests() int {
	switch {
	case s.Closed != nil:
		n := 0
		for _, c := range s.Clients.Named {
			n += c.Requests
		}
		return n
	case s.Bursts != nil:
		return s.Bursts.Size * s.Bursts.Count
	}
	return 0
}

// PatternIndexes returns the class index of each pattern entry, in order;
// nil when the workload has no pattern. Call it on a validated Spec.
func (s Spec) PatternIndexes() []int {
	if s.Closed == nil || len(s.Closed.Pattern) == 0 {
		return nil
	}
	out := make([]int, len(s.Closed.Pattern))
	for i, name := range s.Closed.Pattern {
		out[i] = slices.IndexFunc(s.Classes, func(c Class) bool { return c.Name == name })
	}
	return out
}

// validateDeterministic checks Closed and Bursts and the named clients'
// request counts.
func (s Spec) validateDeterministic() error {
	if s.Closed != nil && s.Bursts != nil {
		return fieldErr("bursts", "a workload is either closed (fixed requests per client) or bursts, not both")
	}
	if s.Closed == nil {
		for i, n := range s.Clients.Named {
			if n.Requests != 0 {
				return fieldErr(fmt.Sprintf("clients.named[%d].requests", i), "needs a closed-loop workload (closed: {order: sequential}); open-loop clients send their share of the arrival rate")
			}
		}
	}
	if s.Deterministic() {
		a := s.Arrival
		if a.RatePerSec != 0 || a.Size != 0 || a.Every != 0 || a.From != 0 || a.To != 0 || len(a.Steps) > 0 {
			return fieldErr("arrival", "does not apply to a closed-loop or burst workload (closed or bursts replace the arrival process); remove it")
		}
	}
	if c := s.Closed; c != nil {
		if c.Order != Parallel && c.Order != Sequential {
			return fieldErr("closed.order", "unknown order %q (known: %s)", c.Order, strings.Join(ClosedOrders, ", "))
		}
		if c.Think < 0 {
			return fieldErr("closed.think", "must be >= 0, got %s", c.Think)
		}
		switch c.PatternOver {
		case "", PerClient:
		case WholeSequence:
			if len(c.Pattern) == 0 {
				return fieldErr("closed.pattern_over", "counts a pattern's requests; there is no closed.pattern")
			}
			if c.Order != Sequential {
				return fieldErr("closed.pattern_over", "%s needs order %s: parallel clients send in no one order, so a count over the whole sequence would not repeat", WholeSequence, Sequential)
			}
		default:
			return fieldErr("closed.pattern_over", "unknown value %q (known: %s)", c.PatternOver, strings.Join(PatternOvers, ", "))
		}
		for i, name := range c.Pattern {
			if !slices.ContainsFunc(s.Classes, func(cl Class) bool { return cl.Name == name }) {
				return fieldErr(fmt.Sprintf("closed.pattern[%d]", i), "unknown class %q", name)
			}
		}
		if len(s.Clients.Named) == 0 {
			return fieldErr("clients.named", "a closed-loop workload needs named clients, each with its number of requests")
		}
		if s.Clients.RequestsPerConn < 0 {
			return fieldErr("clients.requests_per_conn", "must be >= 0, got %d", s.Clients.RequestsPerConn)
		}
		if s.Clients.Preopen {
			return fieldErr("clients.preopen", "applies to an open-loop arrival: a closed-loop client has one connection and sends on it in order")
		}
		for i, n := range s.Clients.Named {
			f := fmt.Sprintf("clients.named[%d]", i)
			if n.Requests < 1 || n.Requests > MaxClosedRequests {
				return fieldErr(f+".requests", "must be between 1 and %d in a closed-loop workload, got %d", MaxClosedRequests, n.Requests)
			}
			if n.Connections != 1 {
				return fieldErr(f+".connections", "a closed-loop client sends one request at a time on one connection; got %d", n.Connections)
			}
		}
	}
	if b := s.Bursts; b != nil {
		if b.Size < 1 || b.Size > MaxBurstSize {
			return fieldErr("bursts.size", "must be between 1 and %d connections, got %d", MaxBurstSize, b.Size)
		}
		if b.Count < 1 || b.Count > MaxBursts {
			return fieldErr("bursts.count", "must be between 1 and %d, got %d", MaxBursts, b.Count)
		}
		if b.Gap < 0 {
			return fieldErr("bursts.gap", "must be >= 0, got %s", b.Gap)
		}
		if len(s.Clients.Named) > 0 {
			return fieldErr("clients.named", "bursts open their own connections; named clients do not apply")
		}
		if s.Clients.Preopen {
			return fieldErr("clients.preopen", "bursts open their own connections at each burst; preopen does not apply")
		}
	}
	return nil
}
