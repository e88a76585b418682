package scenario

import (
	"fmt"
	"math/rand/v2"
)

// Slot is one run of a scenario's schedule: a variant in a round.
type Slot struct {
	// Index counts runs from 1 in schedule order.
	Index int
	// ID names the run: Index, variant and round, as "003-reuseport-r2";
	// results, logs and per-run files are named by it.
	ID string
	// Variant is the index of the run's variant in Scenario.Variants.
	Variant int
	// Round is the round the run belongs to, from 1. Every round runs
	// every variant once: a round is the block within which variants are
	// compared (see docs and package compare).
	Round int
}

// Schedule returns the runs of rounds 1 to rounds (Repeat when rounds is
// zero or negative), in the order they are to be made: in each round
// every variant once, shuffled with a seed derived from the workload's,
// so runs are interleaved, balanced and reproducible. The first rounds of
// a longer schedule are the shorter one's, so a run that goes on round
// after round (until decided) follows the same order as one planned that
// long. The harness and the simulator both follow it.
func (s Scenario) Schedule(rounds int) []Slot {
	if rounds <= 0 {
		rounds = s.Repeat
	}
	rng := rand.New(rand.NewPCG(s.Workload.Seed, 0x5bd1e995))
	out := make([]Slot, 0, rounds*len(s.Variants))
	for r := 1; r <= rounds; r++ {
		for _, vi := range rng.Perm(len(s.Variants)) {
			i := len(out) + 1
			out = append(out, Slot{Index: i, ID: RunID(i, s.Variants[vi].Name, r), Variant: vi, Round: r})
		}
	}
	return out
}

// RunID is the ID of the index-th run (from 1), of variant in round.
func RunID(index int, variant string, round int) string {
	return fmt.Sprintf("%03d-%s-r%d", index, variant, round)
}
