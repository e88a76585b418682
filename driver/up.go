package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/topologies"
)

// DefaultTeardownTimeout bounds the teardown of what a failed bring-up
// had started (Start).
const DefaultTeardownTimeout = 2 * DefaultStopTimeout

// Planner is a driver that brings a rendered plan up: with Up, its
// harness.Driver's Up. Its Allocator (and topologies.EngineFinder, when it
// is one) renders the plan.
type Planner interface {
	topologies.Allocator
	// UpPlan brings p up, every process ready, or leaves nothing behind
	// and returns an error (Start does both).
	UpPlan(ctx context.Context, p topologies.Plan) (harness.Deployment, error)
}

// Up renders r's plan with d (topologies.RenderRun) and brings it up with
// d.UpPlan: every driver's harness.Driver Up.
func Up(ctx context.Context, d Planner, r harness.Bring) (harness.Deployment, error) {
	p, err := topologies.RenderRun(r.ID, r.Variant, r.Workers, d, r.Exe)
	if err != nil {
		return nil, err
	}
	return d.UpPlan(ctx, p)
}

// Starting is a deployment that a driver has yet to bring up.
type Starting interface {
	harness.Deployment
	// Start brings the deployment up, each process ready before the
	// next starts. On error, what it made stays for Down to remove.
	Start(ctx context.Context) error
}

// Start brings dep up (dep.Start). When that fails it takes down what was
// started, within DefaultTeardownTimeout or at once on a hard stop
// (hardstop.Teardown), and returns Start's error joined with Down's.
func Start(ctx context.Context, dep Starting) (harness.Deployment, error) {
	if err := dep.Start(ctx); err != nil {
		downCtx, cancel := hardstop.Teardown(ctx, DefaultTeardownTimeout)
		defer cancel()
		return nil, errors.Join(err, dep.Down(downCtx))
	}
	return dep, nil
}

// InImage returns an error unless every process of p can run from a
// container driver's image, which holds the lbbench binary and nothing
// of this machine: workers.target runs a command of this machine.
func InImage(p topologies.Plan) error {
	for _, proc := range p.Processes {
		if proc.Serve != nil && proc.Serve.Exec != nil {
			return fmt.Errorf("%s: workers.target runs a command from this machine, which is not in the lbbench image; run it with --driver local", p.ID)
		}
	}
	return nil
}
