package model

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/lbbench/lbbench/balance"
)

// Defaults and limits of BallsSpec.
const (
	// DefaultTrials is how many times power of two choices is simulated
	// when BallsSpec.Trials is zero.
	DefaultTrials = 100000
	// DefaultSeed seeds the simulations when a spec's seed is zero.
	DefaultSeed = 1
	// MaxBallsTasks and MaxBallsWorkers bound the exact computation, whose
	// cost grows about as tasks³·log(workers) big-integer operations.
	MaxBallsTasks   = 400
	MaxBallsWorkers = 100000
)

// Dispatch names, in the order BallsResult lists them.
const (
	// DispatchRandom sends each task to a worker drawn uniformly and
	// independently (SO_REUSEPORT's hash, the random policy). Exact.
	DispatchRandom = "random"
	// DispatchLeastLoaded sends each task to a least loaded worker (a
	// load-aware dispatcher such as least_conn with tasks arriving one at
	// a time). Exact: every worker gets floor or ceil of tasks/workers.
	DispatchLeastLoaded = "least_loaded"
	// DispatchP2C draws two distinct workers and sends the task to the
	// less loaded (the balancer's p2c policy, ties to the first drawn).
	// Simulated.
	DispatchP2C = "p2c"
)

// BallsSpec is a balls-into-bins question: Tasks arrive together and each
// is dispatched to one of Workers single-task workers.
type BallsSpec struct {
	// Tasks is the number of tasks (balls); required, 1 to MaxBallsTasks.
	Tasks int `json:"tasks"`
	// Workers is the number of workers (bins); required, 1 to
	// MaxBallsWorkers.
	Workers int `json:"workers"`
	// AtLeast is the load K whose probabilities are asked for ("a worker
	// gets at least K tasks"); zero means twice the fair share,
	// 2·ceil(Tasks/Workers).
	AtLeast int `json:"at_least"`
	// Trials is how many times the simulated dispatchers are run; zero
	// means DefaultTrials.
	Trials int `json:"trials"`
	// Seed seeds the simulations; zero means DefaultSeed.
	Seed uint64 `json:"seed"`
}

// WithDefaults returns a copy of s with zero values filled in.
func (s BallsSpec) WithDefaults() BallsSpec {
	if s.AtLeast == 0 && s.Workers > 0 {
		s.AtLeast = 2 * ceilDiv(s.Tasks, s.Workers)
	}
	if s.Trials == 0 {
		s.Trials = DefaultTrials
	}
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	return s
}

// Validate reports the first problem in s, naming the field. Call it on the
// result of WithDefaults.
func (s BallsSpec) Validate() error {
	switch {
	case s.Tasks < 1 || s.Tasks > MaxBallsTasks:
		return fmt.Errorf("model: tasks: must be between 1 and %d, got %d", MaxBallsTasks, s.Tasks)
	case s.Workers < 1 || s.Workers > MaxBallsWorkers:
		return fmt.Errorf("model: workers: must be between 1 and %d, got %d", MaxBallsWorkers, s.Workers)
	case s.AtLeast < 1:
		return fmt.Errorf("model: at_least: must be >= 1, got %d", s.AtLeast)
	case s.Trials < 1:
		return fmt.Errorf("model: trials: must be >= 1, got %d", s.Trials)
	}
	return nil
}

// Prob is a probability or an expectation. Exact figures carry their exact
// value as a reduced fraction; simulated ones a 95% confidence interval.
type Prob struct {
	// Value is the figure as a float64.
	Value float64 `json:"value"`
	// Exact is the exact value, "num/den" (or an integer), when known.
	Exact string `json:"exact,omitempty"`
	// Low and High bound the 95% confidence interval of a simulated
	// figure; both zero for exact figures.
	Low  float64 `json:"ci_low,omitempty"`
	High float64 `json:"ci_high,omitempty"`
}

// exactProb returns num/den as an exact Prob.
func exactProb(num, den *big.Int) Prob {
	r := new(big.Rat).SetFrac(num, den)
	f, _ := r.Float64()
	return Prob{Value: f, Exact: r.RatString()}
}

// DispatchResult is one dispatcher's answer to a BallsSpec.
type DispatchResult struct {
	// Name is one of the Dispatch constants.
	Name string `json:"name"`
	// Simulated is true when the figures come from Trials seeded runs
	// rather than exact computation.
	Simulated bool   `json:"simulated"`
	Trials    int    `json:"trials,omitempty"`
	Seed      uint64 `json:"seed,omitempty"`
	// Given is the probability that one given worker gets at least AtLeast
	// tasks; Some that at least one worker does (from the joint
	// distribution of the loads, not a product of marginals).
	Given Prob `json:"p_given_at_least"`
	Some  Prob `json:"p_some_at_least"`
	// MaxLoad[k] is the probability that the largest load is exactly k,
	// for k = 0..Tasks.
	MaxLoad []Prob `json:"max_load"`
	// MeanMax is the expected largest load.
	MeanMax Prob `json:"mean_max_load"`
}

// BallsResult answers a BallsSpec for every dispatcher.
type BallsResult struct {
	// Spec is the question, with defaults filled in.
	Spec BallsSpec `json:"spec"`
	// Dispatch has DispatchRandom, DispatchLeastLoaded and DispatchP2C, in
	// that order.
	Dispatch []DispatchResult `json:"dispatch"`
}

// Balls answers s (defaults applied, then validated): exact figures for
// random and least-loaded dispatch, simulated ones for power of two
// choices. It stops with ctx's error if ctx is done first.
func Balls(ctx context.Context, s BallsSpec) (*BallsResult, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	random, err := exactRandom(ctx, s)
	if err != nil {
		return nil, err
	}
	p2c, err := simulateP2C(ctx, s)
	if err != nil {
		return nil, err
	}
	return &BallsResult{Spec: s, Dispatch: []DispatchResult{random, leastLoaded(s), p2c}}, nil
}

// exactRandom computes the random dispatcher's figures exactly.
func exactRandom(ctx context.Context, s BallsSpec) (DispatchResult, error) {
	m, n, k := s.Tasks, s.Workers, s.AtLeast
	c := binomials(m)
	total := pow(n, m)
	counts, err := maxLoadCounts(ctx, c, m, n)
	if err != nil {
		return DispatchResult{}, err
	}
	d := DispatchResult{Name: DispatchRandom}
	d.Given = exactProb(givenAtLeast(c, m, n, k), total)
	some := new(big.Int)
	mean := new(big.Int)
	for j, cnt := range counts {
		d.MaxLoad = append(d.MaxLoad, exactProb(cnt, total))
		if j >= k {
			some.Add(some, cnt)
		}
		mean.Add(mean, new(big.Int).Mul(cnt, big.NewInt(int64(j))))
	}
	d.Some = exactProb(some, total)
	d.MeanMax = exactProb(mean, total)
	return d, nil
}

// leastLoaded computes the least-loaded dispatcher's figures: tasks mod
// workers workers get ceil(tasks/workers), the others floor, every time.
// Which workers get the extra task depends on tie-breaking; with ties
// broken at random a given worker gets it with probability
// (tasks mod workers)/workers.
func leastLoaded(s BallsSpec) DispatchResult {
	m, n, k := s.Tasks, s.Workers, s.AtLeast
	lo, extra := m/n, m%n
	hi := lo
	if extra > 0 {
		hi++
	}
	one, zero := big.NewInt(1), big.NewInt(0)
	d := DispatchResult{Name: DispatchLeastLoaded}
	switch {
	case k <= lo:
		d.Given = exactProb(one, one)
	case k == hi:
		d.Given = exactProb(big.NewInt(int64(extra)), big.NewInt(int64(n)))
	default:
		d.Given = exactProb(zero, one)
	}
	if k <= hi {
		d.Some = exactProb(one, one)
	} else {
		d.Some = exactProb(zero, one)
	}
	for j := 0; j <= m; j++ {
		if j == hi {
			d.MaxLoad = append(d.MaxLoad, exactProb(one, one))
		} else {
			d.MaxLoad = append(d.MaxLoad, exactProb(zero, one))
		}
	}
	d.MeanMax = exactProb(big.NewInt(int64(hi)), one)
	return d
}

// simulateP2C runs power of two choices s.Trials times with the balancer's
// own p2c policy picking among backends whose active counts are the
// loads.
func simulateP2C(ctx context.Context, s BallsSpec) (DispatchResult, error) {
	m, n, k, trials := s.Tasks, s.Workers, s.AtLeast, s.Trials
	pol, err := balance.NewPolicy("p2c", map[string]string{"seed": strconv.FormatUint(s.Seed, 10)})
	if err != nil {
		return DispatchResult{}, fmt.Errorf("model: %w", err)
	}
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = "worker-" + strconv.Itoa(i)
	}
	pool := balance.NewBackends("balls", addrs)
	picked := make([]*balance.Backend, m)
	maxCount := make([]int, m+1)
	var givenSum float64 // sum over trials of the fraction of workers >= k
	var some int
	var sumMax, sumMax2 float64
	for t := range trials {
		if t%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return DispatchResult{}, err
			}
		}
		for i := range picked {
			picked[i] = pol.Pick(pool, nil)
			picked[i].Acquire()
		}
		// Count each loaded worker once, at its last pick, then empty it.
		over, top := 0, 0
		for _, b := range picked {
			a := int(b.Active())
			if a == 0 {
				continue // already counted
			}
			if a >= k {
				over++
			}
			top = max(top, a)
			for range a {
				b.Release()
			}
		}
		givenSum += float64(over) / float64(n)
		if over > 0 {
			some++
		}
		maxCount[top]++
		sumMax += float64(top)
		sumMax2 += float64(top) * float64(top)
	}
	T := float64(trials)
	d := DispatchResult{Name: DispatchP2C, Simulated: true, Trials: trials, Seed: s.Seed}
	// The per-worker indicators of one trial are averaged; their average's
	// variance is at most p(1-p), so a Wilson interval over the trials is
	// conservative.
	d.Given = wilson(givenSum/T, T)
	d.Some = wilson(float64(some)/T, T)
	for _, c := range maxCount {
		d.MaxLoad = append(d.MaxLoad, wilson(float64(c)/T, T))
	}
	mean := sumMax / T
	sd := math.Sqrt(max(sumMax2/T-mean*mean, 0) * T / max(T-1, 1))
	half := z95 * sd / math.Sqrt(T)
	d.MeanMax = Prob{Value: mean, Low: mean - half, High: mean + half}
	return d, nil
}

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// wilson returns p with its 95% Wilson score interval over n trials.
func wilson(p, n float64) Prob {
	z2 := z95 * z95
	den := 1 + z2/n
	center := (p + z2/(2*n)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return Prob{Value: p, Low: max(center-half, 0), High: min(center+half, 1)}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
