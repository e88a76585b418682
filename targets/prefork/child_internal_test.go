package prefork

import (
	"runtime"
	"testing"
)

// TestLimitProcs: a worker runs its Go code on at most its concurrency in
// CPUs, never more than the machine has, and leaves GOMAXPROCS alone when
// the environment sets it.
func TestLimitProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs to see a limit")
	}
	limitProcs(1)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("concurrency 1: GOMAXPROCS %d, want 1", got)
	}
	runtime.GOMAXPROCS(was)
	limitProcs(1 << 20)
	if got := runtime.GOMAXPROCS(0); got != was {
		t.Errorf("concurrency above the CPUs: GOMAXPROCS %d, want it left at %d", got, was)
	}
	t.Setenv("GOMAXPROCS", "2")
	limitProcs(1)
	if got := runtime.GOMAXPROCS(0); got != was {
		t.Errorf("GOMAXPROCS in the environment: GOMAXPROCS %d, want it left at %d", got, was)
	}
}
