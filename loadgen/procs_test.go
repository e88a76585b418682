package loadgen

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/workloads"
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

// TestOnlyAnOwnProcessSetsProcs: an attack that is its process's only work
// (lbbench attack) runs on one P at a low rate; one beside a harness (the
// local driver's, in lbbench run) leaves GOMAXPROCS as it was.
func TestOnlyAnOwnProcessSetsProcs(t *testing.T) {
	// Not parallel: it sets the process's GOMAXPROCS.
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: GOMAXPROCS is 1 either way")
	}
	def := runtime.GOMAXPROCS(0)
	seen := make(chan int, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- runtime.GOMAXPROCS(0):
		default:
		}
	}))
	defer srv.Close()
	spec := lowRateSpec(100)
	for _, c := range []struct {
		own  bool
		want int
	}{{false, def}, {true, 1}} {
		if _, err := Attack(context.Background(), srv.URL, spec, Options{OwnProcess: c.own}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for len(seen) > 0 {
			if got := <-seen; got != c.want {
				t.Fatalf("OwnProcess %v: GOMAXPROCS %d during the attack, want %d", c.own, got, c.want)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("OwnProcess %v: the server saw no request", c.own)
		}
		if got := runtime.GOMAXPROCS(0); got != def {
			t.Errorf("OwnProcess %v: GOMAXPROCS %d after the attack, want %d back", c.own, got, def)
		}
	}
}

// TestGeneratorCPUsIsTheAffinity: a low-rate attack runs on one P, but the
// CPUs it records are those it may run on, over which its steal is summed
// (results.Run.HostSteal divides by them).
func TestGeneratorCPUsIsTheAffinity(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	spec := lowRateSpec(50)
	m, err := Attack(context.Background(), srv.URL, spec, Options{OwnProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := proccpu.NewStealClock().CPUs(); m.Generator.CPUs != want {
		t.Errorf("Generator.CPUs = %d, want the %d CPUs of the process's affinity", m.Generator.CPUs, want)
	}
}

// lowRateSpec is 200 ms of one class at a constant rate, no warm-up: an
// attack that leaves GOMAXPROCS at one P when it sets it.
func lowRateSpec(rate workloads.Rate) workloads.Spec {
	return workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: rate},
		Duration: 200 * time.Millisecond,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
}
