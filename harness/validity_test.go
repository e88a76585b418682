package harness_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/testkit/fakedriver"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// TestJudge: each way a run can be too distorted to count, and the reason
// it is given.
func TestJudge(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond}
	lagging := func(held, cpus int, cpu time.Duration) results.Measurement {
		m := *fakedriver.Measurement(20 * time.Millisecond)
		m.Generator.Held, m.Generator.MaxInFlight = uint64(held), 16
		m.Generator.CPUs, m.Generator.CPU = cpus, cpu
		return m
	}
	for _, tc := range []struct {
		name      string
		m         results.Measurement
		want      []string
		saturated string
	}{
		{"clean", *fakedriver.Measurement(time.Millisecond), nil, ""},
		{"no requests", results.Measurement{}, []string{"no measured requests"}, ""},
		{"slow sender", func() results.Measurement {
			m := *fakedriver.Measurement(time.Millisecond)
			m.AchievedRate = 80
			return m
		}(), []string{"achieved rate 80.0/s is 20.0% below intended 100.0/s"}, ""},
		{"send lag with free slots", lagging(0, 2, 0), []string{"exceeds 5ms: the generator fell behind (it had free in-flight slots"}, ""},
		{"send lag with free slots, steal", func() results.Measurement {
			m := lagging(0, 2, 0)
			m.Generator.Steal = 40 * time.Millisecond
			return m
		}(), []string{"yet sent late); the hypervisor took 40ms of its CPUs' time meanwhile (steal, 2.0% of 2 CPUs)"}, ""},
		{"send lag at the cap, CPU to spare", lagging(40, 2, 100*time.Millisecond), nil, "the target could not keep up (40 requests waited at the generator's cap of 16 in flight"},
		{"send lag at the cap, CPU used up", lagging(40, 1, 950*time.Millisecond), []string{"the generator fell behind (its CPU time was 95% of its 1 CPUs"}, ""},
		{"unsent requests", func() results.Measurement {
			m := lagging(40, 2, 0)
			m.Generator.Unsent, m.AchievedRate = 30, 60
			return m
		}(), nil, "30 never sent"},
		{"every request failed", func() results.Measurement {
			m := *fakedriver.Measurement(time.Millisecond)
			m.Errors, m.ErrorKinds = m.Requests, map[string]uint64{"404": m.Requests}
			return m
		}(), []string{"every one of the 100 measured requests failed (404: 100)"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := results.Run{Measurement: tc.m}
			harness.Judge(&run, v, 0)
			if run.Valid != (len(tc.want) == 0) || len(run.Invalid) != len(tc.want) {
				t.Fatalf("valid=%v reasons %q, want %q", run.Valid, run.Invalid, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(run.Invalid[i], w) {
					t.Errorf("reason %q lacks %q", run.Invalid[i], w)
				}
			}
			if !strings.Contains(run.Saturated, tc.saturated) || (tc.saturated == "") != (run.Saturated == "") {
				t.Errorf("saturated %q, want %q", run.Saturated, tc.saturated)
			}
		})
	}
}

// TestCPUDuring: a process's CPU during the load is its time after minus
// before, matched by role and name; one whose time went down (it
// restarted) counts from zero; the generator is added.
func TestCPUDuring(t *testing.T) {
	before := []results.ProcessCPU{
		{Role: results.RoleWorkers, Name: "worker 0", Worker: 0, Time: 100 * time.Millisecond},
		{Role: results.RoleWorkers, Name: "worker 1", Worker: 1, Time: 900 * time.Millisecond},
		{Role: results.RoleProxy, Name: "nginx", Worker: -1, Time: 50 * time.Millisecond},
	}
	after := []results.ProcessCPU{
		{Role: results.RoleWorkers, Name: "worker 0", Worker: 0, Time: 400 * time.Millisecond},
		{Role: results.RoleWorkers, Name: "worker 1", Worker: 1, Time: 200 * time.Millisecond}, // restarted
		{Role: results.RoleProxy, Name: "nginx", Worker: -1, Time: 250 * time.Millisecond},
	}
	got := harness.CPUDuring(before, after, results.Generator{CPU: 70 * time.Millisecond})
	want := []results.ProcessCPU{
		{Role: results.RoleWorkers, Name: "worker 0", Worker: 0, Time: 300 * time.Millisecond},
		{Role: results.RoleWorkers, Name: "worker 1", Worker: 1, Time: 200 * time.Millisecond},
		{Role: results.RoleProxy, Name: "nginx", Worker: -1, Time: 200 * time.Millisecond},
		{Role: results.RoleGenerator, Name: "generator", Worker: -1, Time: 70 * time.Millisecond},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestJudgeSteal: a run during which the host stole more than
// validity.max_steal of the time of its CPUs, the generator's and the
// server's together, is invalid, with the share, the CPUs and the
// threshold in its reason, before any other; at or below it, or with the
// check off, or on an idle machine (steal 0, as here), the run is judged
// as before.
func TestJudgeSteal(t *testing.T) {
	def := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond, MaxSteal: scenario.DefaultMaxSteal}
	ms := time.Millisecond
	// syntheticMeasurement's window is 1 s; with a warm-up of 1 s each CPU
	// had 2 s.
	const warmup = time.Second
	measured := func(gen time.Duration, genCPUs int, server *results.Server, lag time.Duration) results.Run {
		run := results.Run{Measurement: *fakedriver.Measurement(lag), Server: server}
		run.Generator.Steal, run.Generator.CPUs = gen, genCPUs
		return run
	}
	for _, tc := range []struct {
		name string
		v    scenario.Validity
		run  results.Run
		want []string
	}{
		{"idle machine", def, measured(0, 2, &results.Server{CPUs: 2}, ms), nil},
		{"not measured", def, measured(0, 0, nil, ms), nil},
		{"below the threshold", def, measured(100*ms, 2, &results.Server{CPUs: 2, Steal: 200 * ms}, ms), nil},
		{"over it, both sides", def, measured(200*ms, 2, &results.Server{CPUs: 2, Steal: 600 * ms}, ms),
			[]string{"the host stole 10.0% of the run's 4 CPUs (800ms: the generator's 2, the server's 2), more than the threshold of 5%"}},
		{"over it, the server alone", def, measured(0, 0, &results.Server{CPUs: 1, Steal: 300 * ms}, ms),
			[]string{"the host stole 15.0% of the run's 1 CPUs (300ms: the server's; the generator's not measured)"}},
		{"over it, and the generator fell behind", def, measured(500*ms, 1, &results.Server{CPUs: 1, Steal: 500 * ms}, 20*ms),
			[]string{"the host stole 25.0% of the run's 2 CPUs", "the generator fell behind (it had free in-flight slots, yet sent late); the hypervisor took 500ms"}},
		{"a stricter threshold", scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * ms, MaxSteal: 0.01}, measured(140*ms, 2, &results.Server{CPUs: 2, Steal: 0}, ms),
			[]string{"the host stole 1.8% of the run's 4 CPUs (140ms: the generator's 2, the server's 2), more than the threshold of 1%"}},
		// One counter tick per CPU (10 ms) can be steal from before the
		// run: 120 ms is 1.5% of the CPUs' time, 1.0% for certain.
		{"a stricter threshold, within a tick per CPU", scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * ms, MaxSteal: 0.01}, measured(120*ms, 2, &results.Server{CPUs: 2, Steal: 0}, ms), nil},
		{"the check off", scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * ms, MaxSteal: 1}, measured(2*time.Second, 1, &results.Server{CPUs: 1, Steal: 2 * time.Second}, ms), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			harness.Judge(&run, tc.v, warmup)
			if run.Valid != (len(tc.want) == 0) || len(run.Invalid) != len(tc.want) {
				t.Fatalf("valid=%v reasons %q, want %q", run.Valid, run.Invalid, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(run.Invalid[i], w) {
					t.Errorf("reason %q lacks %q", run.Invalid[i], w)
				}
			}
		})
	}
}

// TestJudgeStealTick: /proc/stat counts steal in ticks of 10 ms per CPU,
// so a run of a few milliseconds can read a whole tick the host took
// around it, most of its time (as a 6 ms run of a test did: "the host
// stole 79.2% of the run's 4 CPUs (20ms ...)"). Such a run stays valid;
// one whose steal goes beyond a tick per CPU is invalid, however short.
func TestJudgeStealTick(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond, MaxSteal: scenario.DefaultMaxSteal}
	ms := time.Millisecond
	for _, tc := range []struct {
		window, steal time.Duration // steal on each side's 2 CPUs
		valid         bool
	}{
		{6 * ms, 10 * ms, true},
		{6 * ms, 20 * ms, true},
		{100 * ms, 20 * ms, true},
		{100 * ms, 100 * ms, false},
		{6 * ms, 30 * ms, false},
	} {
		run := results.Run{Measurement: *fakedriver.Measurement(ms), Server: &results.Server{CPUs: 2, Steal: tc.steal}}
		run.Duration = tc.window
		run.Generator.Steal, run.Generator.CPUs = tc.steal, 2
		st, _ := run.HostSteal(0)
		harness.Judge(&run, v, 0)
		stole := len(run.Invalid) > 0 && strings.Contains(run.Invalid[0], "the host stole")
		if stole == tc.valid {
			t.Errorf("%v of steal on each side's 2 CPUs in %v (share %.3f, for certain %.3f): reasons %q, want valid=%v", tc.steal, tc.window, st.Share, st.Least, run.Invalid, tc.valid)
		}
	}
}

// TestJudgeConcurrent: a run during which another lbbench run was running
// on the host is invalid, its reason first and naming the other run,
// unless the scenario allows it (the run keeps Concurrent either way).
func TestJudgeConcurrent(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond, MaxSteal: scenario.DefaultMaxSteal}
	other := "pid 4242, scenario default, since 15:04:05"
	run := results.Run{Measurement: *fakedriver.Measurement(20 * time.Millisecond), Concurrent: []string{other}}
	harness.Judge(&run, v, 0)
	if run.Valid || len(run.Invalid) != 2 || !strings.Contains(run.Invalid[0], "another lbbench run was running on this host during the load ("+other+")") {
		t.Errorf("valid=%v reasons %q; want the other run first, then the send lag", run.Valid, run.Invalid)
	}
	v.AllowConcurrent = true
	run = results.Run{Measurement: *fakedriver.Measurement(time.Millisecond), Concurrent: []string{other}}
	harness.Judge(&run, v, 0)
	if !run.Valid || len(run.Concurrent) != 1 {
		t.Errorf("allowed: valid=%v reasons %q concurrent %q; want valid, the other run kept", run.Valid, run.Invalid, run.Concurrent)
	}
}

// TestServerDuring: the server's steal over the load is, per CPU reported
// before and after, after minus before, summed; a CPU reported on one
// side only is left out, and nothing reported is nil (not measured).
func TestServerDuring(t *testing.T) {
	ms := time.Millisecond
	before := map[int]time.Duration{0: 100 * ms, 1: 50 * ms, 3: 10 * ms}
	after := map[int]time.Duration{0: 160 * ms, 1: 50 * ms, 2: 900 * ms, 3: 5 * ms}
	if got := harness.ServerDuring(before, after); got == nil || *got != (results.Server{CPUs: 3, Steal: 60 * ms}) {
		t.Errorf("got %+v, want 3 CPUs, 60ms", got)
	}
	if got := harness.ServerDuring(before, map[int]time.Duration{2: ms}); got != nil {
		t.Errorf("no CPU in both: %+v, want nil", got)
	}
	if got := harness.ServerDuring(nil, after); got != nil {
		t.Errorf("nothing before: %+v, want nil", got)
	}
}

// TestCause: the short cause of an invalid run is the first of its
// reasons that names one a retry is for (another lbbench run on the host
// before the generator falling behind, as judge gives them), else its
// first reason; a valid run has none.
func TestCause(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		m          results.Measurement
		concurrent []string
		want       string
	}{
		{"valid", *fakedriver.Measurement(time.Millisecond), nil, ""},
		{"behind", *fakedriver.Measurement(20 * time.Millisecond), nil, harness.CauseBehind},
		{"beside another run, and behind", *fakedriver.Measurement(20 * time.Millisecond), []string{"pid 4242, scenario default, since 15:04:05"}, harness.CauseNeighbour},
		{"no requests", results.Measurement{}, nil, "no measured requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := results.Run{Measurement: tc.m, Concurrent: tc.concurrent}
			harness.Judge(&run, v, 0)
			if got := harness.Cause(run); got != tc.want {
				t.Errorf("Cause = %q, want %q (reasons %q)", got, tc.want, run.Invalid)
			}
		})
	}
}

// TestJudgeSharedCPUs: at the in-flight cap, a generator that shared the
// server's CPUs and took what the target needed made the run invalid; a
// target past its own capacity, or a generator on another node, leaves a
// saturated run.
func TestJudgeSharedCPUs(t *testing.T) {
	v := scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond}
	// 100 requests at 100/s: 10 ms of CPU per request is a tenth of a
	// CPU's second, 5% of two.
	run := func(gen, target time.Duration, pods ...results.Pod) results.Run {
		m := *fakedriver.Measurement(20 * time.Millisecond)
		m.Generator.Held, m.Generator.MaxInFlight = 40, 16
		m.Generator.CPUs, m.Generator.CPU = 2, gen
		return results.Run{Measurement: m, Server: &results.Server{CPUs: 2}, Pods: pods, CPU: []results.ProcessCPU{
			{Role: results.RoleWorkers, Name: "worker 0", Time: target},
			{Role: results.RoleGenerator, Name: "generator", Worker: -1, Time: gen},
		}}
	}
	apart := []results.Pod{{Role: "server", Node: "a"}, {Role: "generator", Node: "b"}}
	for _, tc := range []struct {
		name      string
		run       results.Run
		invalid   string
		saturated bool
	}{
		{"the generator took the target's CPUs", run(700*time.Millisecond, 1200*time.Millisecond),
			"the generator fell behind (it shared the server's 2 CPUs and took what the target needed: at the intended rate the two would have needed 95% of them, the target alone 60%)", false},
		{"the target past its own capacity", run(200*time.Millisecond, 1900*time.Millisecond), "", true},
		{"both light", run(200*time.Millisecond, 400*time.Millisecond), "", true},
		{"the generator on another node", run(700*time.Millisecond, 1200*time.Millisecond, apart...), "", true},
		{"a generator on a server's node", run(700*time.Millisecond, 1200*time.Millisecond, append(apart, results.Pod{Role: "generator", Node: "a"})...),
			"it shared the server's 2 CPUs", false},
		{"the target's CPU not measured", func() results.Run {
			r := run(1200*time.Millisecond, 0)
			r.CPU = r.CPU[1:]
			return r
		}(), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run
			harness.Judge(&r, v, 0)
			if got := strings.Join(r.Invalid, "; "); r.Valid != (tc.invalid == "") || !strings.Contains(got, tc.invalid) {
				t.Errorf("valid=%v reasons %q, want %q", r.Valid, got, tc.invalid)
			}
			if (r.Saturated != "") != tc.saturated {
				t.Errorf("saturated %q, want saturated=%v", r.Saturated, tc.saturated)
			}
		})
	}
}
