package job

import (
	"context"
	"fmt"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// SimNote heads the tables of a simulated job (Options.Simulate), so
// that no one takes them for a measurement.
const SimNote = "SIMULATED by lbbench model sim (discrete-event model, not a measurement; proxy hop and connection setup cost nothing)\n"

// simPinning is a simulated run's Env.Pinning.
const simPinning = "none (simulated)"

// Simulator is the model's simulator as a harness.Driver: harness.Run
// drives simulated runs through the loop that makes measured ones (the
// same schedule, round workloads, checkpoints, progress, interruption),
// and marks their results Simulated. Each deployment simulates its
// variant when the loop offers it the round's workload
// (model.SimulateRun). Its zero value is ready; it holds no state and is
// safe for concurrent use.
type Simulator struct{}

var (
	_ harness.Driver     = Simulator{}
	_ harness.Simulator  = Simulator{}
	_ harness.Deployment = (*simDeployment)(nil)
)

// Name is model.Driver, the Env.Driver of simulated results.
func (Simulator) Name() string { return model.Driver }

// Simulated is true: Run marks the results Simulated.
func (Simulator) Simulated() bool { return true }

// Describe refuses, before any run, a scenario the model cannot simulate
// (model.Simulable, wrapping model.ErrUnsupported), and records that
// nothing was pinned.
func (Simulator) Describe(_ context.Context, s scenario.Scenario, env *results.Env) error {
	env.Pinning = simPinning
	return model.Simulable(s)
}

// Up starts nothing: the run is simulated when it is attacked.
func (Simulator) Up(_ context.Context, b harness.Bring) (harness.Deployment, error) {
	if b.Exe != "" {
		return nil, fmt.Errorf("job: %s: variant %s runs build %s: the simulator models variants, not builds of lbbench", b.ID, b.Variant.Name, b.Variant.Build)
	}
	return &simDeployment{b: b}, nil
}

// simDeployment is one simulated run: Attack simulates it, Stats reports
// the simulated workers' and proxy's counters.
type simDeployment struct {
	b   harness.Bring
	run *results.Run // the last Attack's
}

// Entry names the simulated topology, as model.SimulateRun does.
func (d *simDeployment) Entry() string { return model.Driver + "://" + d.b.Variant.Topology }

// Attack simulates the run offered spec.
func (d *simDeployment) Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	run, _, err := model.SimulateRun(ctx, d.b.Workers, d.b.Variant, spec)
	if err != nil {
		return nil, err
	}
	d.run = run
	return &run.Measurement, nil
}

// Stats are the simulated workers' and proxy's counters of the last
// Attack.
func (d *simDeployment) Stats(context.Context) (harness.Stats, error) {
	if d.run == nil {
		return harness.Stats{}, nil
	}
	st := harness.Stats{Proxy: d.run.Proxy}
	for _, w := range d.run.Workers {
		st.Workers = append(st.Workers, results.WorkerStats{Index: w.Index, Requests: w.Requests, Connections: w.Connections, MaxQueue: w.MaxQueue})
	}
	return st, nil
}

// Down has nothing to stop.
func (d *simDeployment) Down(context.Context) error { return nil }
