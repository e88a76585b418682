package workloads

import (
	"fmt"
	"time"
)

// Arrival kinds.
const (
	// Constant sends requests evenly spaced, 1/rate apart.
	Constant = "constant"
	// Poisson sends requests with exponentially distributed gaps of mean
	// 1/rate, drawn from the workload's seed.
	Poisson = "poisson"
)

// Service-time distributions.
const (
	// Fixed always uses Service.Value.
	Fixed = "fixed"
	// Exp draws from an exponential distribution with mean Service.Mean.
	Exp = "exp"
	// Uniform draws uniformly from [Service.Min, Service.Max].
	Uniform = "uniform"
)

// Defaults used by WithDefaults; flags reuse them.
const (
	DefaultArrival     = Poisson
	DefaultDuration    = 10 * time.Second
	DefaultWarmup      = 2 * time.Second
	DefaultConnections = 64
	DefaultTimeout     = 10 * time.Second
	DefaultSeed        = 1
	DefaultPath        = "/work"
	// MinDuration is the shortest measured duration Validate accepts.
	MinDuration = 100 * time.Millisecond
)

// Spec is one workload: how requests arrive, what they ask for and how the
// client connects. The zero value is not valid: Arrival.RatePerSec and at
// least one class are required (WithDefaults adds no class).
type Spec struct {
	// Arrival is the open-loop arrival process.
	Arrival Arrival `yaml:"arrival" json:"arrival"`
	// Duration is the measured part of a run; zero means DefaultDuration.
	Duration time.Duration `yaml:"duration" json:"duration"`
	// Warmup is sent before Duration on the same processes and connections
	// and not recorded; zero means DefaultWarmup, a negative value none.
	Warmup time.Duration `yaml:"warmup" json:"warmup"`
	// Classes is the weighted mix of request kinds; each request draws one.
	Classes []Class `yaml:"classes" json:"classes"`
	// Clients is the client connection model.
	Clients Clients `yaml:"clients" json:"clients"`
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// Seed makes arrivals and class draws reproducible; zero means DefaultSeed.
	Seed uint64 `yaml:"seed" json:"seed"`
}

// Arrival is an arrival process.
type Arrival struct {
	// Kind is "constant" or "poisson"; empty means DefaultArrival.
	Kind string `yaml:"kind" json:"kind"`
	// RatePerSec is the intended mean rate in requests per second; required.
	RatePerSec float64 `yaml:"rate" json:"rate"`
}

// Class is one kind of request in the mix.
type Class struct {
	// Name labels the class in results; required and unique.
	Name string `yaml:"name" json:"name"`
	// Path is the request path; empty means DefaultPath.
	Path string `yaml:"path" json:"path"`
	// Weight is the class's relative share of requests; must be > 0.
	Weight float64 `yaml:"weight" json:"weight"`
	// Service is the service time the worker is asked to spend.
	Service Service `yaml:"service" json:"service"`
}

// Service is a service-time distribution.
type Service struct {
	// Dist is "fixed", "exp" or "uniform"; empty means fixed.
	Dist string `yaml:"dist" json:"dist"`
	// Value is the fixed service time.
	Value time.Duration `yaml:"value,omitempty" json:"value,omitempty"`
	// Mean is the mean of the exponential distribution.
	Mean time.Duration `yaml:"mean,omitempty" json:"mean,omitempty"`
	// Min and Max bound the uniform distribution.
	Min time.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max time.Duration `yaml:"max,omitempty" json:"max,omitempty"`
}

// Clients is the client connection model.
type Clients struct {
	// Connections caps the connections the generator opens to the entry
	// point; zero means DefaultConnections.
	Connections int `yaml:"connections" json:"connections"`
	// KeepAlive reuses client connections across requests; nil means true.
	KeepAlive *bool `yaml:"keepalive" json:"keepalive"`
}

// KeepAliveOn reports whether client keep-alive is on (nil means on).
func (c Clients) KeepAliveOn() bool { return c.KeepAlive == nil || *c.KeepAlive }

// FieldError is a validation error that names the offending field by its
// dotted yaml path (for example "classes[1].weight").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// WithDefaults returns a copy of s with zero values replaced by defaults.
func (s Spec) WithDefaults() Spec {
	if s.Arrival.Kind == "" {
		s.Arrival.Kind = DefaultArrival
	}
	if s.Duration == 0 {
		s.Duration = DefaultDuration
	}
	if s.Warmup == 0 {
		s.Warmup = DefaultWarmup
	} else if s.Warmup < 0 {
		s.Warmup = 0
	}
	if s.Clients.Connections == 0 {
		s.Clients.Connections = DefaultConnections
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	classes := make([]Class, len(s.Classes))
	for i, c := range s.Classes {
		if c.Path == "" {
			c.Path = DefaultPath
		}
		if c.Service.Dist == "" {
			c.Service.Dist = Fixed
		}
		classes[i] = c
	}
	s.Classes = classes
	return s
}

// Validate reports the first problem in s, naming the field. Call it on the
// result of WithDefaults.
func (s Spec) Validate() error {
	switch s.Arrival.Kind {
	case Constant, Poisson:
	default:
		return fieldErr("arrival.kind", "unknown arrival %q (known: %s, %s)", s.Arrival.Kind, Constant, Poisson)
	}
	if s.Arrival.RatePerSec <= 0 {
		return fieldErr("arrival.rate", "must be > 0 requests per second, got %g", s.Arrival.RatePerSec)
	}
	if s.Duration < MinDuration {
		return fieldErr("duration", "must be at least %s, got %s (write a unit, for example 20s)", MinDuration, s.Duration)
	}
	if s.Timeout < 0 {
		return fieldErr("timeout", "must be > 0, got %s", s.Timeout)
	}
	if s.Clients.Connections < 0 {
		return fieldErr("clients.connections", "must be > 0, got %d", s.Clients.Connections)
	}
	if len(s.Classes) == 0 {
		return fieldErr("classes", "at least one request class is required")
	}
	seen := map[string]bool{}
	for i, c := range s.Classes {
		f := fmt.Sprintf("classes[%d]", i)
		if c.Name == "" {
			return fieldErr(f+".name", "is required")
		}
		if seen[c.Name] {
			return fieldErr(f+".name", "duplicate class name %q", c.Name)
		}
		seen[c.Name] = true
		if c.Path == "" || c.Path[0] != '/' {
			return fieldErr(f+".path", "must start with /, got %q", c.Path)
		}
		if c.Weight <= 0 {
			return fieldErr(f+".weight", "must be > 0, got %g", c.Weight)
		}
		if err := c.Service.validate(f + ".service"); err != nil {
			return err
		}
	}
	return nil
}

func (d Service) validate(f string) error {
	switch d.Dist {
	case Fixed:
		if d.Value < 0 {
			return fieldErr(f+".value", "must be >= 0, got %s", d.Value)
		}
	case Exp:
		if d.Mean <= 0 {
			return fieldErr(f+".mean", "must be > 0 for dist exp, got %s", d.Mean)
		}
	case Uniform:
		if d.Min < 0 || d.Max < d.Min {
			return fieldErr(f+".max", "need 0 <= min <= max, got min %s max %s", d.Min, d.Max)
		}
	default:
		return fieldErr(f+".dist", "unknown distribution %q (known: %s, %s, %s)", d.Dist, Fixed, Exp, Uniform)
	}
	return nil
}

// MeanService is the weighted mean service time of the mix, used to relate
// a rate to worker utilization.
func (s Spec) MeanService() time.Duration {
	var sum, w float64
	for _, c := range s.Classes {
		sum += c.Weight * float64(c.Service.mean())
		w += c.Weight
	}
	if w == 0 {
		return 0
	}
	return time.Duration(sum / w)
}

func (d Service) mean() time.Duration {
	switch d.Dist {
	case Exp:
		return d.Mean
	case Uniform:
		return (d.Min + d.Max) / 2
	default:
		return d.Value
	}
}
