package loadgen

import (
	"math"
	"os"
	"runtime"
	"sync"
)

// RatePerProc is how many requests a second of offered load the generator
// gives each CPU its Go code may run on (GOMAXPROCS) during an open-loop
// attack: one CPU up to 5,000/s, two up to 10,000/s, and so on up to the
// machine's CPUs.
//
// Why: with a P per CPU, each request's hand-offs (the pacer's tick to a
// sender, the answer's arrival to the recorder) find another P idle and
// wake a second thread to run it; on a virtual machine each of those
// wake-ups costs more than the work handed over. On one P the whole
// attack runs in one thread, as wrk's does, woken once by its timer and
// once by each answer: on the project's 2-vCPU machine against nginx at
// 1,000/s the generator's CPU per request fell from about 200µs to 85µs
// and its context switches per request from 9 to 2 (perf stat). A P that
// is busy holds back the pacer's next tick, though: at 10,000/s on one P
// send-lag p99 reached 1-2ms, on two 0.7-0.8ms. 5,000/s keeps a P under
// half busy.
//
// A GOMAXPROCS environment variable overrides this: the generator leaves
// the setting alone.
const RatePerProc = 5000

// procs holds the process's GOMAXPROCS while open-loop attacks run: the
// CPUs for the sum of their peak rates. The first attack to start records
// that the setting was the runtime's default; the last to end gives it
// back.
var procs struct {
	mu     sync.Mutex
	rate   float64 // the running attacks' peak rates, summed
	active int     // attacks running
}

// procsFor is how many Ps an open-loop attack offering rate requests a
// second gets: one per RatePerProc, at least one and at most cpus.
func procsFor(rate float64, cpus int) int {
	n := 1
	if r := math.Ceil(rate / RatePerProc); r > 1 { // NaN fails
		n = int(min(r, float64(cpus)))
	}
	return max(min(n, cpus), 1)
}

// holdProcs sets GOMAXPROCS for an attack offering rate requests a second
// beside the others running, unless the environment sets GOMAXPROCS, and
// returns the function that ends the hold.
func holdProcs(rate float64) (release func()) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return func() {}
	}
	if !(rate >= 0) || math.IsInf(rate, 0) {
		rate = 0
	}
	procs.mu.Lock()
	procs.active++
	procs.rate += rate
	runtime.GOMAXPROCS(procsFor(procs.rate, runtime.NumCPU()))
	procs.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.mu.Lock()
			defer procs.mu.Unlock()
			procs.active--
			procs.rate -= rate
			if procs.active == 0 {
				procs.rate = 0
				runtime.SetDefaultGOMAXPROCS()
				return
			}
			runtime.GOMAXPROCS(procsFor(procs.rate, runtime.NumCPU()))
		})
	}
}
