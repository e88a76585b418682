package docker

import (
	"strings"
	"testing"
)

func TestPlacement(t *testing.T) {
	// Enough CPUs: disjoint cpusets, no limits.
	p, err := newPlacement(8, PlaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	if p.generator.CpusetCpus != "0" || p.server.CpusetCpus != "1-7" || p.generator.NanoCPUs != 0 || p.server.NanoCPUs != 0 {
		t.Errorf("8 CPUs: generator %+v, server %+v", p.generator, p.server)
	}
	if len(p.roles) != 2 || p.roles[1].Cpuset != "1-7" || !strings.Contains(p.desc, "cpusets") {
		t.Errorf("8 CPUs: recorded %+v, %q", p.roles, p.desc)
	}
	// 2 CPUs: still cpusets, one CPU each.
	if p, _ := newPlacement(2, PlaceAuto); p.generator.CpusetCpus != "0" || p.server.CpusetCpus != "1" {
		t.Errorf("2 CPUs: generator %+v, server %+v", p.generator, p.server)
	}
	// Too few: a limit of half the machine each, and the reason recorded.
	p, _ = newPlacement(1, PlaceAuto)
	if p.generator.CpusetCpus != "" || p.generator.NanoCPUs != 5e8 || p.server.NanoCPUs != 5e8 {
		t.Errorf("1 CPU: generator %+v, server %+v", p.generator, p.server)
	}
	if p.roles[0].CPULimit != 0.5 || !strings.Contains(p.desc, "too few for disjoint cpusets") {
		t.Errorf("1 CPU: recorded %+v, %q", p.roles, p.desc)
	}
	if p, _ := newPlacement(2, PlaceLimits); p.generator.NanoCPUs != 1e9 || p.server.NanoCPUs != 1e9 || p.generator.CpusetCpus != "" {
		t.Errorf("limits on 2 CPUs: %+v, %+v", p.generator, p.server)
	}
	// Asked for: cpusets even on 2 CPUs, or nothing at all.
	if p, err := newPlacement(2, PlaceCpusets); err != nil || p.generator.CpusetCpus != "0" || p.server.CpusetCpus != "1" {
		t.Errorf("cpusets on 2 CPUs: %+v, %+v, %v", p.generator, p.server, err)
	}
	if _, err := newPlacement(1, PlaceCpusets); err == nil {
		t.Error("cpusets on 1 CPU accepted")
	}
	if p, err := newPlacement(2, PlaceNone); err != nil || p.generator.NanoCPUs != 0 || p.server.CpusetCpus != "" {
		t.Errorf("none: %+v, %+v, %v", p.generator, p.server, err)
	}
	if _, err := newPlacement(2, "fastest"); err == nil || !strings.Contains(err.Error(), "cpusets") {
		t.Errorf("unknown mode: %v, want an error listing the modes", err)
	}
}
