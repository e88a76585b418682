package topologies

import (
	"path/filepath"

	"github.com/lbbench/lbbench/targets/prefork"
)

// Target is a foreign server the workers run in place of the built-in
// worker, for example a Gunicorn or Uvicorn command line. "lbbench serve
// --exec" starts it: once per worker in the topologies with an endpoint per
// worker (proxy, unix) and in reuseport, once in all with {workers} in
// shared. See prefork.Exec for the placeholders ({port}, {host}, {socket},
// {index}, {workers}, {fd}).
//
// A foreign server keeps no lbbench counters: per-worker requests come from
// the X-Worker response header if it sets one, and otherwise, behind the
// built-in proxy, from the upstream the proxy chose.
type Target struct {
	// Exec is the command template; required.
	Exec string `yaml:"exec" json:"exec"`
	// Probe is the HTTP path that answers 200 once an instance is ready;
	// empty means prefork.DefaultProbe ("/").
	Probe string `yaml:"probe,omitempty" json:"probe,omitempty"`
	// Dir is the directory the command runs in, relative to the one lbbench
	// run starts in; empty means that directory.
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
}

// validateTarget reports a problem with w.Target (nil is valid).
func (w Workers) validateTarget() error {
	t := w.Target
	if t == nil {
		return nil
	}
	if t.Exec == "" {
		return fieldErr("target.exec", "is required: the command that starts your server, e.g. \"gunicorn -b 127.0.0.1:{port} app:app\"")
	}
	words, err := prefork.SplitCommand(t.Exec)
	if err != nil {
		return fieldErr("target.exec", "%v", err)
	}
	if len(words) == 0 {
		return fieldErr("target.exec", "is empty")
	}
	if t.Probe != "" && t.Probe[0] != '/' {
		return fieldErr("target.probe", "must be an HTTP path starting with /, got %q", t.Probe)
	}
	if len(w.Slow) > 0 {
		return fieldErr("slow", "needs the built-in worker; a target serves at its own speed")
	}
	return nil
}

// targetArgs are the "lbbench serve" flags that run w.Target; none for the
// built-in worker. Dir is made absolute here, in the process that reads
// the scenario, since serve runs in a working directory of its own.
func (w Workers) targetArgs() []string {
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
