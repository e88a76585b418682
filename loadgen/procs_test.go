package loadgen

import (
	"math"
	"runtime"
	"testing"
)

func TestProcsFor(t *testing.T) {
	for _, c := range []struct {
		rate       float64
		cpus, want int
	}{
		{0, 2, 1}, {1000, 2, 1}, {RatePerProc, 2, 1}, {RatePerProc + 1, 2, 2}, {10000, 2, 2},
		{20000, 2, 2}, {20000, 8, 4}, {1e12, 8, 8}, {math.NaN(), 4, 1}, {math.Inf(1), 4, 4}, {-5, 4, 1},
		{5000, 1, 1},
	} {
		if got := procsFor(c.rate, c.cpus); got != c.want {
			t.Errorf("procsFor(%v, %d) = %d, want %d", c.rate, c.cpus, got, c.want)
		}
	}
}

// TestHoldProcs: attacks running at once get the CPUs for the sum of their
// rates, the last one to end gives the runtime its default back, and a
// GOMAXPROCS in the environment is left alone.
func TestHoldProcs(t *testing.T) {
	// Not parallel: it sets the process's GOMAXPROCS.
	def := runtime.GOMAXPROCS(0)
	cpus := runtime.NumCPU()
	a := holdProcs(1000)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("one attack at 1000/s: GOMAXPROCS %d, want 1", got)
	}
	b := holdProcs(2 * RatePerProc)
	if got, want := runtime.GOMAXPROCS(0), min(3, cpus); got != want {
		t.Errorf("attacks at 1000/s and %d/s: GOMAXPROCS %d, want %d", 2*RatePerProc, got, want)
	}
	b()
	b() // idempotent: must not count the attack twice
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("after the second attack ended: GOMAXPROCS %d, want 1", got)
	}
	a()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Errorf("after every attack ended: GOMAXPROCS %d, want the default %d", got, def)
	}

	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	c := holdProcs(10)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("with GOMAXPROCS=2 in the environment, an attack at 10/s set it to %d", got)
	}
	c()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("with GOMAXPROCS=2 in the environment, after the attack: %d", got)
	}
	runtime.SetDefaultGOMAXPROCS()
}
