package topologies

import (
	"path/filepath"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
)

// targetExec is the foreign server that runs w.Target; nil for the
// built-in worker. Dir is made absolute here, in the process that reads
// the scenario, since serve runs in a working directory of its own.
func targetExec(w scenario.Workers) *prefork.Exec {
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
	return &prefork.Exec{Command: t.Exec, Probe: probe, Dir: dir}
}
