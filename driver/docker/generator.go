package docker

import (
	"context"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// startGenerator creates and starts the generator container, which idles
// until the driver execs probes and attacks in it.
func (dep *deployment) startGenerator(ctx context.Context) error {
	genDir, err := dep.hostDir(RoleGenerator)
	if err != nil {
		return err
	}
	gen, err := dep.create(ctx, RoleGenerator, 0, topologies.Process{Role: RoleGenerator}, &container.Config{Image: dep.d.image, Cmd: []string{"idle"}},
		&container.HostConfig{
			NetworkMode:    container.NetworkMode(dep.network),
			ReadonlyRootfs: true,
			Tmpfs:          map[string]string{"/tmp": "rw,size=64m,mode=1777"},
			Mounts:         []mount.Mount{{Type: mount.TypeBind, Source: genDir, Target: OutDir}},
			Resources:      dep.d.place.generator,
		}, nil)
	if err != nil {
		return err
	}
	gen.hostDir = genDir
	dep.gen = gen // Down removes it even if it never starts
	return dep.start(ctx, gen)
}

// Attack implements harness.Attacker: it runs the driver's k "lbbench
// attack" processes in the generator container, each with 1/k of spec's
// load, and merges their histograms. When ctx ends it kills the generator
// container (the run is void anyway).
func (dep *deployment) Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	g := loadgen.Generators{
		K:       dep.d.generators,
		Entry:   dep.plan.Entry,
		HostDir: dep.gen.hostDir, // made by startGenerator, mounted at OutDir
		Dir:     OutDir,
		Live:    dep.d.live,
		Exec: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			code, err := dep.d.c.Exec(ctx, dep.gen.id, append([]string{ImageBinary}, args...), stdout, stderr)
			if err == nil && code != 0 {
				err = fmt.Errorf("exit status %d", code)
			}
			return err
		},
	}
	stop := context.AfterFunc(ctx, func() {
		dep.d.c.api.ContainerKill(context.Background(), dep.gen.id, "KILL")
	})
	defer stop()
	m, err := g.Run(ctx, spec)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("docker: %s: %w", dep.plan.ID, err)
	}
	return m, err
}
