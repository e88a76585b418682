package driver

import (
	"fmt"

	"github.com/lbbench/lbbench/scenario"
)

// MaxGenerators bounds the generator processes of a run: more only
// compete for the CPUs they share.
const MaxGenerators = 64

// CheckGeneratorCount returns an error unless k, the generator processes
// a driver was asked for, is between 1 (every driver's default) and
// MaxGenerators.
func CheckGeneratorCount(k int) error {
	if k < 1 || k > MaxGenerators {
		return fmt.Errorf("generators: must be between 1 and %d (each is a process on this machine; more only compete for its CPUs), got %d", MaxGenerators, k)
	}
	return nil
}

// OneGenerator returns an error naming the first variant of s whose
// workload is closed-loop or a burst (workloads.Spec.Deterministic): such
// a workload runs from one generator process, so a driver given several
// refuses s with it, adding what the user should drop.
func OneGenerator(s scenario.Scenario) error {
	for _, v := range s.Variants {
		if s.WorkloadFor(v, 0).Deterministic() {
			return fmt.Errorf("variant %s: a closed-loop or burst workload runs from one generator", v.Name)
		}
	}
	return nil
}
