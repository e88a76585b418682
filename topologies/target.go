package topologies

import (
	"path/filepath"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
)

// targetArgs are the "lbbench serve" flags that run w.Target; none for the
// built-in worker. Dir is made absolute here, in the process that reads
// the scenario, since serve runs in a working directory of its own.
func targetArgs(w scenario.Workers) []string {
	t := w.Target
	if t == nil {
		return nil
	}
	dir, err := filepath.Abs(t.Dir)
	if err != nil {
		dir = t.Dir
	}
	probe := t.Probe
	if probe == "" {
		probe = prefork.DefaultProbe
	}
	return []string{"--exec", t.Exec, "--probe", probe, "--exec-dir", dir}
}
