package docker

import (
	"strings"
	"testing"
)

func TestPlacement(t *testing.T) {
	// Enough CPUs: disjoint cpusets, no limits.
	p := newPlacement(8)
	if p.generator.CpusetCpus != "0" || p.server.CpusetCpus != "1-7" || p.generator.NanoCPUs != 0 || p.server.NanoCPUs != 0 {
		t.Errorf("8 CPUs: generator %+v, server %+v", p.generator, p.server)
	}
	if len(p.roles) != 2 || p.roles[1].Cpuset != "1-7" || !strings.Contains(p.desc, "cpusets") {
		t.Errorf("8 CPUs: recorded %+v, %q", p.roles, p.desc)
	}
	// Too few: a limit of half the machine each, and the reason recorded.
	p = newPlacement(2)
	if p.generator.CpusetCpus != "" || p.generator.NanoCPUs != 1e9 || p.server.NanoCPUs != 1e9 {
		t.Errorf("2 CPUs: generator %+v, server %+v", p.generator, p.server)
	}
	if p.roles[0].CPULimit != 1 || !strings.Contains(p.desc, "too few for disjoint cpusets") {
		t.Errorf("2 CPUs: recorded %+v, %q", p.roles, p.desc)
	}
}
