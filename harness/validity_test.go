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
