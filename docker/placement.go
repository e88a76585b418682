package docker

import (
	"fmt"
	"strconv"

	"github.com/docker/docker/api/types/container"

	"github.com/lbbench/lbbench/harness"
)

// placement is how the generator's and the server's containers share the
// machine's CPUs.
type placement struct {
	generator, server container.Resources
	roles             []harness.ContainerPlacement
	desc              string
}

// newPlacement gives the generator CPU 0 and the server CPUs 1 to n-1 as
// disjoint cpusets when the machine has at least harness.MinPinCPUs CPUs;
// with fewer, a cpuset of one CPU would leave the side that gets it starved
// (see harness.MinPinCPUs), so each container gets a CPU limit of half the
// machine instead: neither side can take all of it, but they do share.
func newPlacement(ncpu int) placement {
	if ncpu >= harness.MinPinCPUs {
		gen, srv := "0", "1-"+strconv.Itoa(ncpu-1)
		return placement{
			generator: container.Resources{CpusetCpus: gen},
			server:    container.Resources{CpusetCpus: srv},
			roles: []harness.ContainerPlacement{
				{Role: RoleGenerator, Cpuset: gen},
				{Role: "server", Cpuset: srv},
			},
			desc: fmt.Sprintf("docker cpusets: generator cpu %s; server containers cpus %s", gen, srv),
		}
	}
	half := float64(max(ncpu, 1)) / 2
	nano := int64(half * 1e9)
	return placement{
		generator: container.Resources{NanoCPUs: nano},
		server:    container.Resources{NanoCPUs: nano},
		roles: []harness.ContainerPlacement{
			{Role: RoleGenerator, CPULimit: half},
			{Role: "server", CPULimit: half},
		},
		desc: fmt.Sprintf("docker CPU limits: generator %g CPU, each server container %g CPU (%d CPUs: too few for disjoint cpusets)", half, half, ncpu),
	}
}
