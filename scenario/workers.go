package scenario

import (
	"fmt"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/internal/shellwords"
)

// Workers describes the worker replicas every variant of a scenario runs.
type Workers struct {
	// Count is the number of worker processes; required.
	Count int `yaml:"count" json:"count"`
	// Concurrency is how many requests one worker serves at a time; zero
	// means 1 (a single-task worker).
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Mode is "sleep" or "spin"; empty means sleep.
	Mode string `yaml:"mode" json:"mode"`
	// Slow makes some workers slower than the rest.
	Slow []Slow `yaml:"slow,omitempty" json:"slow,omitempty"`
	// AcceptWhen is "always" (the default: a worker accepts whenever a
	// connection is queued, busy or not) or "idle" (an event-loop worker:
	// it accepts only while it has a free slot; see
	// worker.Config.AcceptWhen). A variant's accept_when overrides it.
	AcceptWhen string `yaml:"accept_when,omitempty" json:"accept_when,omitempty"`
	// Target, when set, runs a foreign server in place of the built-in
	// worker; nil means the built-in worker.
	Target *Target `yaml:"target,omitempty" json:"target,omitempty"`
}

// Slow multiplies one worker's service times by Factor.
type Slow struct {
	Index  int     `yaml:"index" json:"index"`
	Factor float64 `yaml:"factor" json:"factor"`
}

// fieldErr returns a *field.Error for the field at path.
func fieldErr(path, format string, args ...any) error {
	return field.Errorf(path, format, args...)
}

// WithDefaults returns a copy of w with zero values filled in.
func (w Workers) WithDefaults() Workers {
	if w.Concurrency == 0 {
		w.Concurrency = 1
	}
	if w.Mode == "" {
		w.Mode = "sleep"
	}
	return w
}

// Bounds on the workers, stated with their reasons in the errors.
const (
	// MaxWorkers bounds workers.count.
	MaxWorkers = 1024
	// MaxConcurrency bounds workers.concurrency.
	MaxConcurrency = 100000
)

// Validate reports the first problem in w.
func (w Workers) Validate() error {
	if w.Count < 1 {
		return fieldErr("count", "at least 1 worker is required, got %d", w.Count)
	}
	if w.Count > MaxWorkers {
		return fieldErr("count", "at most %d workers (each is a process with its own port, taken from a block of consecutive ports in 10000-32767, and this is far past the CPUs of any one machine), got %d", MaxWorkers, w.Count)
	}
	if err := w.validateTarget(); err != nil {
		return err
	}
	if w.Concurrency < 1 || w.Concurrency > MaxConcurrency {
		return fieldErr("concurrency", "must be between 1 and %d (tasks in service at once per worker), got %d", MaxConcurrency, w.Concurrency)
	}
	if err := validateAcceptWhen("accept_when", w.AcceptWhen); err != nil {
		return err
	}
	if w.Target != nil && w.AcceptWhen == AcceptIdle {
		return fieldErr("accept_when", "idle needs the built-in worker; a target accepts its own way")
	}
	if w.Mode != "sleep" && w.Mode != "spin" {
		return fieldErr("mode", "unknown mode %q (known: sleep, spin)", w.Mode)
	}
	for i, s := range w.Slow {
		if s.Index < 0 || s.Index >= w.Count {
			return fieldErr(fmt.Sprintf("slow[%d].index", i), "must name one of the %d workers (0 to %d), got %d", w.Count, w.Count-1, s.Index)
		}
		if !(s.Factor > 0) || s.Factor > 100 {
			return fieldErr(fmt.Sprintf("slow[%d].factor", i), "must be in (0, 100], got %g", s.Factor)
		}
	}
	return nil
}

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
	words, err := shellwords.Split(t.Exec)
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

// Values of accept_when (Workers.AcceptWhen, Variant.AcceptWhen).
const (
	AcceptAlways = "always"
	AcceptIdle   = "idle"
)

// validateAcceptWhen checks an accept_when value at path; empty is the
// default.
func validateAcceptWhen(path, v string) error {
	if v != "" && v != AcceptAlways && v != AcceptIdle {
		return fieldErr(path, "unknown value %q (known: %s, %s)", v, AcceptAlways, AcceptIdle)
	}
	return nil
}
