package docker

import (
	"fmt"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/lbbench/lbbench/results"
)

// placement is how the generator's and the server's containers share the
// machine's CPUs.
type placement struct {
	generator, server container.Resources
	roles             []results.ContainerPlacement
	desc              string
}

// Placement modes (WithPlacement).
const (
	// PlaceAuto is PlaceCpusets with at least MinCpusetCPUs CPUs and
	// PlaceLimits with fewer.
	PlaceAuto = "auto"
	// PlaceCpusets gives the generator CPU 0 and the server CPUs 1 to n-1.
	PlaceCpusets = "cpusets"
	// PlaceLimits gives each container a CPU limit of half the machine.
	PlaceLimits = "limits"
	// PlaceNone leaves placement to the kernel.
	PlaceNone = "none"
)

// MinCpusetCPUs is the fewest CPUs PlaceAuto splits into cpusets. Two is
// enough: on the 2-CPU development machine the default scenario with the
// generator on CPU 0 and the server on CPU 1 had all 9 runs valid, send lag
// p99 0.8 to 1.2 ms and p99s of 124, 71.9 and 80.6 ms, against one invalid
// run, send lag p99 1.3 to 3.2 ms and 121, 76.8 and 90.1 ms with CPU limits
// of one CPU per container (which let the generator and the server contend
// for both CPUs).
const MinCpusetCPUs = 2

// PlacementModes lists the modes WithPlacement accepts.
func PlacementModes() []string { return []string{PlaceAuto, PlaceCpusets, PlaceLimits, PlaceNone} }

// WithPlacement sets how containers share the CPUs (PlaceAuto by default).
func WithPlacement(mode string) Option {
	return func(c *config) { c.placement = mode }
}

// newPlacement places the containers on ncpu CPUs (see the modes).
func newPlacement(ncpu int, mode string) (placement, error) {
	switch mode {
	case PlaceAuto, "":
		if ncpu >= MinCpusetCPUs {
			return cpusets(ncpu)
		}
		return limits(ncpu), nil
	case PlaceCpusets:
		return cpusets(ncpu)
	case PlaceLimits:
		return limits(ncpu), nil
	case PlaceNone:
		return placement{
			roles: []results.ContainerPlacement{{Role: RoleGenerator}, {Role: "server"}},
			desc:  "docker: no cpusets or CPU limits",
		}, nil
	}
	return placement{}, fmt.Errorf("docker: unknown placement %q (known: %v)", mode, PlacementModes())
}

func cpusets(ncpu int) (placement, error) {
	if ncpu < 2 {
		return placement{}, fmt.Errorf("docker: disjoint cpusets need at least 2 CPUs, the daemon has %d", ncpu)
	}
	gen, srv := "0", "1-"+strconv.Itoa(ncpu-1)
	if ncpu == 2 {
		srv = "1"
	}
	return placement{
		generator: container.Resources{CpusetCpus: gen},
		server:    container.Resources{CpusetCpus: srv},
		roles: []results.ContainerPlacement{
			{Role: RoleGenerator, Cpuset: gen},
			{Role: "server", Cpuset: srv},
		},
		desc: fmt.Sprintf("docker cpusets: generator cpu %s; server containers cpus %s", gen, srv),
	}, nil
}

func limits(ncpu int) placement {
	half := float64(max(ncpu, 1)) / 2
	nano := int64(half * 1e9)
	desc := fmt.Sprintf("docker CPU limits: generator %g CPU, each server container %g CPU", half, half)
	if ncpu < MinCpusetCPUs {
		desc += fmt.Sprintf(" (%d CPU: too few for disjoint cpusets)", ncpu)
	}
	return placement{
		generator: container.Resources{NanoCPUs: nano},
		server:    container.Resources{NanoCPUs: nano},
		roles: []results.ContainerPlacement{
			{Role: RoleGenerator, CPULimit: half},
			{Role: "server", CPULimit: half},
		},
		desc: desc,
	}
}
