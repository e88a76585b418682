package results

import (
	"fmt"
	"time"

	"github.com/lbbench/lbbench/internal/proccpu"
)

// Server describes the host under a run's server side (its workers and
// proxy) during the run.
type Server struct {
	// CPUs is how many CPUs the server's processes could run on: the
	// union of their CPU affinities (a driver's pinning, a container's
	// cpuset, the CPUs of a pod's node).
	CPUs int `json:"cpus"`
	// Steal is the hypervisor's steal time on those CPUs from just
	// before the load to just after it (/proc/stat, read on the server's
	// host by the workers' supervisor): time they had work and the host
	// ran something else. 0 outside a virtual machine; recorded even
	// then.
	Steal time.Duration `json:"steal"`
}

// Steal is what the host took from the CPUs a run used: the steal time of
// the generator's CPUs and the server's, as a share of the time those
// CPUs had during the run (warm-up included).
type Steal struct {
	// Time is the steal time, generator's and server's summed; CPUs how
	// many CPUs it was measured on, GeneratorCPUs and ServerCPUs of them
	// each side's (a CPU both sides could use counts on each).
	Time                      time.Duration
	CPUs                      int
	GeneratorCPUs, ServerCPUs int
	// Share is Time over the run's time (its measured window plus
	// warm-up) times CPUs. Least is the share the counters show for
	// certain: Time less one tick (proccpu.Tick, /proc/stat's unit) per
	// CPU. The kernel accounts steal at a CPU's tick, so a reading can
	// hold a tick the host took before the run began: a run of a few
	// milliseconds can show 80% of its time stolen from one tick around
	// it. On a run of seconds the difference is 10 ms over its time
	// (0.17% of 5 s and a 1 s warm-up).
	Share, Least float64
}

// HostSteal is what the host took from the CPUs r used (Steal), with
// warmup the scenario's warm-up; ok is false when neither side's steal was
// measured (results without Generator.CPUs or Server, a simulation).
func (r Run) HostSteal(warmup time.Duration) (s Steal, ok bool) {
	wall := r.Duration + max(warmup, 0)
	if g := r.Generator; g.CPUs > 0 {
		s.Time += g.Steal
		s.GeneratorCPUs = g.CPUs
	}
	if r.Server != nil && r.Server.CPUs > 0 {
		s.Time += r.Server.Steal
		s.ServerCPUs = r.Server.CPUs
	}
	s.CPUs = s.GeneratorCPUs + s.ServerCPUs
	if s.CPUs == 0 || wall <= 0 {
		return Steal{}, false
	}
	s.Share = s.Time.Seconds() / wall.Seconds() / float64(s.CPUs)
	s.Least = max(s.Time-time.Duration(s.CPUs)*proccpu.Tick, 0).Seconds() / wall.Seconds() / float64(s.CPUs)
	return s, true
}

// String says the steal in words: "1.2% of the run's 4 CPUs (480ms: the
// generator's 2, the server's 2)".
func (s Steal) String() string {
	var sides string
	switch {
	case s.GeneratorCPUs > 0 && s.ServerCPUs > 0:
		sides = fmt.Sprintf(": the generator's %d, the server's %d", s.GeneratorCPUs, s.ServerCPUs)
	case s.GeneratorCPUs > 0:
		sides = ": the generator's; the server's not measured"
	default:
		sides = ": the server's; the generator's not measured"
	}
	return fmt.Sprintf("%.1f%% of the run's %d CPUs (%s%s)", 100*s.Share, s.CPUs, s.Time.Round(time.Millisecond), sides)
}
