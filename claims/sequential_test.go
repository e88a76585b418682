package claims

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// firstRounds is r with the runs of its first rounds only: what a run
// made until decided had at the look after that round.
func firstRounds(r *results.Results, rounds int) *results.Results {
	out := *r
	out.Runs = nil
	for _, run := range r.Runs {
		if run.Rep <= rounds {
			out.Runs = append(out.Runs, run)
		}
	}
	return &out
}

// untilDecided plays run --until-decided on the claims of r, whose runs
// are maxRounds rounds: it looks after every round from compare.MinRounds
// on (UndecidedAt, as the job's stop rule does) and stops at the first
// look that leaves no statistical claim undecided, or at maxRounds. It
// returns the rounds made and the claims as the stopped run's report
// judges them (Judge, at the stopping look's share), nil when the last
// look decided none of them (nothing to judge wrong).
func untilDecided(r *results.Results, maxRounds int) (rounds int, judged []Result) {
	at := stopped(r, maxRounds)
	if at.Stop.Rounds == maxRounds && len(UndecidedAt(at, maxRounds, maxRounds, 0, Options{})) == len(Statistical(r.Scenario)) {
		return maxRounds, nil
	}
	return at.Stop.Rounds, Judge(at)
}

// stopped is r as a run until decided made it: its runs up to the first
// look that leaves no statistical claim undecided (UndecidedAt, as the
// job's stop rule asks), or to maxRounds, with the Stop it records.
func stopped(r *results.Results, maxRounds int) *results.Results {
	for round := compare.MinRounds; ; round++ {
		at := firstRounds(r, round)
		u := UndecidedAt(at, round, maxRounds, 0, Options{})
		if len(u) > 0 && round < maxRounds {
			continue
		}
		at.Stop = &results.Stop{Rounds: round, MaxRounds: maxRounds, Decided: len(u) == 0}
		return at
	}
}

// wrongOutcomes reports whether any claim of judged whose truth is
// exactly its factor (truth[k] == 1: holding and failing are both wrong)
// failed, and whether any held.
func wrongOutcomes(judged []Result, truth []float64) (failed, held bool) {
	for k, cr := range judged {
		if truth[k] != 1 {
			continue
		}
		failed = failed || cr.Outcome == Fails
		held = held || cr.Outcome == Holds
	}
	return failed, held
}

// TestSequentialClaimsCalibration: claims judged at every look of a run
// made until decided, the run stopping at the first look that decides
// them all, keep their family's false-alarm rate. Seeded simulations of
// such runs (1000 per case, 250 with -short), each of up to 8 paired
// rounds (looks after rounds 3 to 8) whose round-to-round drift (log sd
// 0.2) the pairing cancels, with claims "a < F × b" whose truth is exactly
// F (holding and failing are both wrong): one such claim with normal
// noise of sd 0.08, or skewed noise (10% of the rounds 4 sd higher, 30% 4
// sd lower), or beside a claim that holds by 20% (which the early looks
// decide, so that the run stops as soon as the other is decided). The
// share of runs with any false "fails", and with any false "holds", must
// not pass DefaultAlpha plus two standard errors of the simulation.
func TestSequentialClaimsCalibration(t *testing.T) {
	t.Parallel()
	trials := 1000
	if testing.Short() {
		trials = 250
	}
	const maxRounds, sd = 8, 0.08
	limit := DefaultAlpha + 2*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/float64(trials))
	for i, c := range []struct {
		name  string
		truth []float64 // per claim, true ratio over its factor; 1 is on it
		noise func(*rand.Rand) float64
	}{
		{"one claim, normal", []float64{1}, mixtureNoise(sd, 0, 0)},
		{"one claim, 10% of rounds 4 sd higher", []float64{1}, mixtureNoise(sd, 0.1, 4)},
		{"one claim, 30% of rounds 4 sd lower", []float64{1}, mixtureNoise(sd, 0.3, -4)},
		{"one beside one holding by 20%, normal", []float64{1, 0.8}, mixtureNoise(sd, 0, 0)},
	} {
		rng := rand.New(rand.NewPCG(42, uint64(i)))
		fails, holds, early := 0, 0, 0
		for range trials {
			r := familyResultsWith(rng, maxRounds, 1, c.truth, c.noise)
			rounds, judged := untilDecided(r, maxRounds)
			if rounds < maxRounds {
				early++
			}
			failed, held := wrongOutcomes(judged, c.truth)
			if failed {
				fails++
			}
			if held {
				holds++
			}
		}
		f, h := float64(fails)/float64(trials), float64(holds)/float64(trials)
		t.Logf("%-42s any false fail %.4f, any false hold %.4f (limit %.4f); stopped before round %d: %.4f", c.name, f, h, limit, maxRounds, float64(early)/float64(trials))
		if f > limit || h > limit {
			t.Errorf("%s: any false fail %.4f, any false hold %.4f over %d runs until decided: above %.4f", c.name, f, h, trials, limit)
		}
	}
}
