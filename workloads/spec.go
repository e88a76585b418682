package workloads

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/internal/field"
)

// Arrival kinds.
const (
	// Constant sends requests evenly spaced, 1/rate apart.
	Constant = "constant"
	// Poisson sends requests with exponentially distributed gaps of mean
	// 1/rate, drawn from the workload's seed.
	Poisson = "poisson"
	// Burst sends Size requests at once every Every.
	Burst = "burst"
	// Ramp changes the rate linearly from From to To over the measured
	// duration (the warm-up runs at From).
	Ramp = "ramp"
	// Steps runs each step's constant rate for the step's duration, in
	// order (the warm-up runs at the first step's rate): a latency-versus-
	// load curve in one run.
	Steps = "steps"
)

// ArrivalKinds lists the arrival kinds.
var ArrivalKinds = []string{Burst, Constant, Poisson, Ramp, Steps}

// Service-time distributions.
const (
	// Fixed always uses Service.Value.
	Fixed = "fixed"
	// Exp draws from an exponential distribution with mean Service.Mean.
	Exp = "exp"
	// Uniform draws uniformly from [Service.Min, Service.Max].
	Uniform = "uniform"
	// LogNormal draws Median·e^(Sigma·Z), Z standard normal.
	LogNormal = "lognormal"
	// Bimodal draws High with probability PHigh, else Low.
	Bimodal = "bimodal"
	// Pareto draws Min/U^(1/Alpha), U uniform in (0,1], capped at Max:
	// a heavy tail with a bound.
	Pareto = "pareto"
)

// Dists lists the service-time distributions.
var Dists = []string{Bimodal, Exp, Fixed, LogNormal, Pareto, Uniform}

// Defaults used by WithDefaults; flags reuse them.
const (
	DefaultArrival     = Poisson
	DefaultDuration    = 10 * time.Second
	DefaultWarmup      = 2 * time.Second
	DefaultConnections = 64
	DefaultTimeout     = 10 * time.Second
	DefaultSeed        = 1
	DefaultPath        = "/work"
	DefaultMethod      = "GET"
	// MinDuration is the shortest measured duration Validate accepts.
	MinDuration = 100 * time.Millisecond
)

// Upper bounds Validate enforces. Each is far beyond what a real
// benchmark on one machine uses, and low enough that a typo (an extra
// zero, 1e12 for 1e2) is refused at parse time instead of running for
// ever or exhausting memory.
const (
	// MaxRate bounds any arrival rate: one generator process sends at
	// most about 10^5 requests/s on loopback, so 10^6/s is already ten
	// times what can be honoured (use --generators beyond).
	MaxRate = 1e6
	// MaxArrivals bounds the arrivals of one run (mean rate × (warm-up +
	// duration)): 10^8 is over 15 minutes at the highest rate a generator
	// reaches, and keeps the per-run histograms and counters bounded.
	MaxArrivals = 1e8
	// MaxRunTime bounds warm-up + duration of one run: a day.
	MaxRunTime = 24 * time.Hour
	// MaxClasses bounds the request classes: each has its own histograms
	// in every run.
	MaxClasses = 256
	// MaxConnections bounds the client connections of a generator: each
	// is a socket, and one loopback address pair has about 28,000
	// ephemeral ports.
	MaxConnections = 20000
	// MaxNamedClients bounds clients.named: each has its own histograms.
	MaxNamedClients = 256
	// MaxSteps bounds arrival.steps, each at least MinDuration long.
	MaxSteps = 10000
	// MaxBurst bounds a burst's size (requests sent at one instant).
	MaxBurst = 1000000
	// MaxWeight bounds a class weight or client share: weights are
	// relative, and beyond 10^9 their ratios lose meaning in float64 sums.
	MaxWeight = 1e9
)

// Spec is one workload: how requests arrive, what they ask for and how the
// client connects. The zero value is not valid: an arrival rate and at
// least one class are required (WithDefaults adds no class).
type Spec struct {
	// Arrival is the open-loop arrival process.
	Arrival Arrival `yaml:"arrival" json:"arrival"`
	// Duration is the measured part of a run; zero means DefaultDuration,
	// or for steps the sum of the steps' durations.
	Duration time.Duration `yaml:"duration" json:"duration"`
	// Warmup is sent before Duration on the same processes and connections
	// and not recorded; zero means DefaultWarmup, a negative value
	// (NoWarmup) none (see WarmupTime). In a scenario file, "warmup: 0s" is none: only an
	// absent warmup gets the default.
	Warmup time.Duration `yaml:"warmup" json:"warmup"`
	// Classes is the weighted mix of request kinds; each request draws one.
	Classes []Class `yaml:"classes" json:"classes"`
	// Clients is the client connection model.
	Clients Clients `yaml:"clients" json:"clients"`
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// Seed makes arrivals and class draws reproducible; zero means DefaultSeed.
	Seed uint64 `yaml:"seed" json:"seed"`
	// Closed, when set, makes the workload closed loop: every named client
	// sends its Requests one after another and Arrival, Duration and
	// Warmup do not apply (see closed.go).
	Closed *Closed `yaml:"closed,omitempty" json:"closed,omitempty"`
	// Bursts, when set, replaces Arrival with bursts of simultaneous new
	// connections (see closed.go).
	Bursts *Bursts `yaml:"bursts,omitempty" json:"bursts,omitempty"`
}

// Arrival is an arrival process. Which fields apply depends on Kind.
type Arrival struct {
	// Kind is one of ArrivalKinds; empty means DefaultArrival.
	Kind string `yaml:"kind" json:"kind"`
	// RatePerSec is the mean rate of constant and poisson, per second.
	RatePerSec Rate `yaml:"rate,omitempty" json:"rate,omitempty"`
	// Size and Every shape a burst: Size requests at once every Every.
	Size  int           `yaml:"size,omitempty" json:"size,omitempty"`
	Every time.Duration `yaml:"every,omitempty" json:"every,omitempty"`
	// From and To are a ramp's first and last rate, per second.
	From Rate `yaml:"from,omitempty" json:"from,omitempty"`
	To   Rate `yaml:"to,omitempty" json:"to,omitempty"`
	// Steps are the rates of a steps arrival, in order.
	Steps []Step `yaml:"steps,omitempty" json:"steps,omitempty"`
}

// Step is one constant-rate stretch of a steps arrival.
type Step struct {
	RatePerSec Rate          `yaml:"rate" json:"rate"`
	Duration   time.Duration `yaml:"duration" json:"duration"`
}

// MeanRate is the arrival's mean rate over the measured duration d, per
// second.
func (a Arrival) MeanRate(d time.Duration) float64 {
	switch a.Kind {
	case Burst:
		if a.Every <= 0 {
			return 0
		}
		return float64(a.Size) / a.Every.Seconds()
	case Ramp:
		return float64(a.From+a.To) / 2
	case Steps:
		var n, t float64
		for _, s := range a.Steps {
			n += float64(s.RatePerSec) * s.Duration.Seconds()
			t += s.Duration.Seconds()
		}
		if t == 0 {
			return 0
		}
		return n / t
	}
	return float64(a.RatePerSec)
}

// Scaled returns a copy of a offering the fraction f of its load, for
// splitting one arrival process across clients or generators: rates are
// multiplied by f, and bursts keep their size but come 1/f times as often.
func (a Arrival) Scaled(f float64) Arrival {
	a.RatePerSec *= Rate(f)
	a.From *= Rate(f)
	a.To *= Rate(f)
	if a.Every > 0 && f > 0 {
		a.Every = time.Duration(float64(a.Every) / f)
	}
	steps := slices.Clone(a.Steps)
	for i := range steps {
		steps[i].RatePerSec *= Rate(f)
	}
	a.Steps = steps
	return a
}

// Class is one kind of request in the mix.
type Class struct {
	// Name labels the class in results; required and unique.
	Name string `yaml:"name" json:"name"`
	// Path is the request path, optionally with a query; empty means
	// DefaultPath.
	Path string `yaml:"path" json:"path"`
	// Method is the HTTP method; empty means DefaultMethod.
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Headers are added to every request of the class.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// BodyBytes is the size of the request body; zero sends none.
	BodyBytes int `yaml:"body_bytes,omitempty" json:"body_bytes,omitempty"`
	// Weight is the class's relative share of requests; must be > 0.
	Weight float64 `yaml:"weight" json:"weight"`
	// Service is the service time the worker is asked to spend.
	Service Service `yaml:"service" json:"service"`
	// CPU asks the worker to spend the service time burning CPU rather
	// than sleeping, whatever the worker's own mode.
	CPU bool `yaml:"cpu,omitempty" json:"cpu,omitempty"`
}

// Service is a service-time distribution; which fields apply depends on
// Dist.
type Service struct {
	// Dist is one of Dists; empty means fixed.
	Dist string `yaml:"dist" json:"dist"`
	// Value is the fixed service time.
	Value time.Duration `yaml:"value,omitempty" json:"value,omitempty"`
	// Mean is the mean of the exponential distribution.
	Mean time.Duration `yaml:"mean,omitempty" json:"mean,omitempty"`
	// Min and Max bound the uniform distribution; for pareto Min is the
	// scale (the smallest value) and Max the cap.
	Min time.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max time.Duration `yaml:"max,omitempty" json:"max,omitempty"`
	// Median and Sigma shape the lognormal distribution.
	Median time.Duration `yaml:"median,omitempty" json:"median,omitempty"`
	Sigma  float64       `yaml:"sigma,omitempty" json:"sigma,omitempty"`
	// Low, High and PHigh shape the bimodal distribution.
	Low   time.Duration `yaml:"low,omitempty" json:"low,omitempty"`
	High  time.Duration `yaml:"high,omitempty" json:"high,omitempty"`
	PHigh float64       `yaml:"p_high,omitempty" json:"p_high,omitempty"`
	// Alpha is the pareto shape; smaller is heavier (1 < Alpha keeps the
	// mean finite).
	Alpha float64 `yaml:"alpha,omitempty" json:"alpha,omitempty"`
}

// Least is the shortest service time s can draw: the fixed value, the
// lower bound of uniform and pareto, the lower mode of bimodal, and zero
// for exp and lognormal.
func (s Service) Least() time.Duration {
	switch s.Dist {
	case Fixed, "":
		return s.Value
	case Uniform, Pareto:
		return s.Min
	case Bimodal:
		return min(s.Low, s.High)
	}
	return 0
}

// Scaled returns s with every duration of its distribution multiplied by
// f: the same shape, f times slower (f > 1) or faster.
func (s Service) Scaled(f float64) Service {
	scale := func(d *time.Duration) { *d = time.Duration(math.Round(float64(*d) * f)) }
	for _, d := range []*time.Duration{&s.Value, &s.Mean, &s.Min, &s.Max, &s.Median, &s.Low, &s.High} {
		scale(d)
	}
	return s
}

// Clients is the client connection model.
type Clients struct {
	// Connections caps the connections the generator opens to the entry
	// point; zero means DefaultConnections. Requests beyond it wait for a
	// connection, and that wait counts in their latency.
	Connections int `yaml:"connections" json:"connections"`
	// KeepAlive reuses client connections across requests; nil means true.
	KeepAlive *bool `yaml:"keepalive" json:"keepalive"`
	// RequestsPerConn closes a connection after that many requests (1, 2,
	// 5, ...); zero means no limit.
	RequestsPerConn int `yaml:"requests_per_conn,omitempty" json:"requests_per_conn,omitempty"`
	// Preopen opens every one of the Connections before the schedule
	// starts, instead of one whenever a request finds none idle, and keeps
	// them all in use: a request takes the connection idle the longest.
	// It models a front that holds many connections to its workers (more
	// than it has requests in flight), each pinned to whichever worker
	// accepted it. It needs keep-alive on and no requests_per_conn; a
	// connection the server closes is replaced on demand.
	Preopen bool `yaml:"preopen,omitempty" json:"preopen,omitempty"`
	// MaxInFlight caps the requests a generator stream keeps outstanding
	// (at most MaxInFlight); zero means derived from the workload (see
	// Spec.InFlightCap). Requests due at the cap leave late: send lag.
	MaxInFlight int `yaml:"max_in_flight,omitempty" json:"max_in_flight,omitempty"`
	// Named splits the load among named clients with fixed shares, each
	// with its own persistent connections; when set, Connections is
	// ignored.
	Named []NamedClient `yaml:"named,omitempty" json:"named,omitempty"`
}

// NamedClient is one client of a fixed share of the load.
type NamedClient struct {
	// Name labels the client in results; required and unique.
	Name string `yaml:"name" json:"name"`
	// Share is the client's relative share of requests; must be > 0.
	Share float64 `yaml:"share" json:"share"`
	// Connections is how many persistent connections the client uses; zero
	// means 1: the client's requests go one at a time, in order.
	Connections int `yaml:"connections,omitempty" json:"connections,omitempty"`
	// Requests is the client's fixed number of requests in a closed-loop
	// workload (Spec.Closed); open-loop clients leave it zero.
	Requests int `yaml:"requests,omitempty" json:"requests,omitempty"`
}

// KeepAliveOn reports whether client keep-alive is on (nil means on).
func (c Clients) KeepAliveOn() bool { return c.KeepAlive == nil || *c.KeepAlive }

// fieldErr returns a *field.Error for the field at path.
func fieldErr(path, format string, args ...any) error {
	return field.Errorf(path, format, args...)
}

// WarmupTime is how long the warm-up lasts: Warmup, or zero when Warmup is
// negative (none).
func (s Spec) WarmupTime() time.Duration { return max(s.Warmup, 0) }

// WithDefaults returns a copy of s with zero values replaced by defaults.
// It is idempotent.
func (s Spec) WithDefaults() Spec {
	if s.Arrival.Kind == "" {
		s.Arrival.Kind = DefaultArrival
	}
	s.Arrival.Steps = slices.Clone(s.Arrival.Steps)
	if s.Duration == 0 {
		s.Duration = DefaultDuration
		if s.Arrival.Kind == Steps {
			s.Duration = s.Arrival.stepsDuration()
		}
	}
	if s.Warmup == 0 {
		s.Warmup = DefaultWarmup
	}
	s.Clients = s.Clients.WithDefaults()
	if s.Closed != nil {
		c := *s.Closed
		if c.Order == "" {
			c.Order = Sequential
		}
		c.Pattern = slices.Clone(c.Pattern)
		s.Closed = &c
		// A closed-loop client's share is its number of requests.
		for i := range s.Clients.Named {
			if n := &s.Clients.Named[i]; n.Share == 0 {
				n.Share = float64(n.Requests)
			}
		}
	}
	if s.Bursts != nil {
		b := *s.Bursts
		s.Bursts = &b
	}
	if s.Deterministic() {
		// No warm-up: every request counts.
		s.Warmup = NoWarmup
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
		if c.Method == "" {
			c.Method = DefaultMethod
		}
		if c.Service.Dist == "" {
			c.Service.Dist = Fixed
		}
		c.Headers = maps.Clone(c.Headers)
		classes[i] = c
	}
	s.Classes = classes
	return s
}

// WithDefaults returns a copy of c with zero values replaced by defaults.
func (c Clients) WithDefaults() Clients {
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	named := slices.Clone(c.Named)
	for i := range named {
		if named[i].Connections == 0 {
			named[i].Connections = 1
		}
	}
	c.Named = named
	return c
}

func (a Arrival) stepsDuration() time.Duration {
	var d time.Duration
	for _, s := range a.Steps {
		d += s.Duration
	}
	return d
}

// Validate reports the first problem in s, naming the field. Call it on the
// result of WithDefaults.
func (s Spec) Validate() error {
	if err := field.Finite(s, ""); err != nil {
		return err
	}
	if err := s.validateDeterministic(); err != nil {
		return err
	}
	if !s.Deterministic() {
		if err := s.Arrival.validate(s.Duration); err != nil {
			return err
		}
	}
	if s.Duration < MinDuration && !s.Deterministic() {
		return fieldErr("duration", "must be at least %s, got %s (write a unit, for example 20s)", MinDuration, s.Duration)
	}
	if total := s.WarmupTime() + s.Duration; total > MaxRunTime || total < s.Duration {
		return fieldErr("duration", "warm-up + duration must be at most %s (one run; use repeat for more), got %s + %s", MaxRunTime, s.WarmupTime(), s.Duration)
	}
	if n := s.Arrival.MeanRate(s.Duration) * (s.WarmupTime() + s.Duration).Seconds(); n > MaxArrivals {
		return fieldErr("arrival", "asks for %.3g arrivals in one run (mean rate × (warm-up + duration)); the limit is %.0e, over 15 minutes at the highest rate one generator sends: shorten the run or lower the rate", n, float64(MaxArrivals))
	}
	if len(s.Classes) > MaxClasses {
		return fieldErr("classes", "at most %d classes (each has its own histograms in every run), got %d", MaxClasses, len(s.Classes))
	}
	if s.Timeout < 0 {
		return fieldErr("timeout", "must be > 0, got %s", s.Timeout)
	}
	if err := s.Clients.validate(); err != nil {
		return err
	}
	if len(s.Classes) == 0 {
		return fieldErr("classes", "at least one request class is required")
	}
	seen := map[string]bool{}
	for i, c := range s.Classes {
		f := fmt.Sprintf("classes[%d]", i)
		if err := field.Name(f+".name", c.Name); err != nil {
			return err
		}
		if seen[c.Name] {
			return fieldErr(f+".name", "duplicate class name %q", c.Name)
		}
		seen[c.Name] = true
		if c.Path == "" || c.Path[0] != '/' {
			return fieldErr(f+".path", "must start with /, got %q", c.Path)
		}
		if strings.ContainsAny(c.Method, " \t\r\n") || c.Method != strings.ToUpper(c.Method) {
			return fieldErr(f+".method", "must be an upper-case HTTP method such as GET or POST, got %q", c.Method)
		}
		for k := range c.Headers {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") {
				return fieldErr(f+".headers", "invalid header name %q", k)
			}
		}
		if c.BodyBytes < 0 || c.BodyBytes > 64<<20 {
			return fieldErr(f+".body_bytes", "must be between 0 and 64 MiB, got %d", c.BodyBytes)
		}
		if c.Weight <= 0 || c.Weight > MaxWeight {
			return fieldErr(f+".weight", "must be > 0 and at most %g (weights are relative), got %g", MaxWeight, c.Weight)
		}
		if err := c.Service.validate(f + ".service"); err != nil {
			return err
		}
	}
	return nil
}

func (a Arrival) validate(d time.Duration) error {
	switch a.Kind {
	case Constant, Poisson:
		if !(a.RatePerSec > 0) || a.RatePerSec > MaxRate {
			return fieldErr("arrival.rate", "must be > 0 and at most %.0e requests per second (one generator sends about 10^5/s; use --generators to split more), got %g", MaxRate, a.RatePerSec)
		}
	case Burst:
		if a.Size < 1 || a.Size > MaxBurst {
			return fieldErr("arrival.size", "must be between 1 and %d requests per burst, got %d", MaxBurst, a.Size)
		}
		if a.Every <= 0 {
			return fieldErr("arrival.every", "must be > 0 (time between bursts, for example 100ms), got %s", a.Every)
		}
	case Ramp:
		if !(a.From > 0) || !(a.To > 0) || a.From > MaxRate || a.To > MaxRate {
			return fieldErr("arrival.from", "ramp rates from and to must both be > 0 and at most %.0e requests per second, got %g and %g", MaxRate, a.From, a.To)
		}
	case Steps:
		if len(a.Steps) == 0 || len(a.Steps) > MaxSteps {
			return fieldErr("arrival.steps", "between 1 and %d steps are required, got %d", MaxSteps, len(a.Steps))
		}
		for i, s := range a.Steps {
			if !(s.RatePerSec > 0) || s.RatePerSec > MaxRate {
				return fieldErr(fmt.Sprintf("arrival.steps[%d].rate", i), "must be > 0 and at most %.0e requests per second, got %g", MaxRate, s.RatePerSec)
			}
			if s.Duration < MinDuration || s.Duration > MaxRunTime {
				return fieldErr(fmt.Sprintf("arrival.steps[%d].duration", i), "must be between %s and %s, got %s", MinDuration, MaxRunTime, s.Duration)
			}
		}
		if total := a.stepsDuration(); d != total {
			return fieldErr("duration", "is %s but the steps add up to %s (leave duration out for steps)", d, total)
		}
	default:
		return fieldErr("arrival.kind", "unknown arrival %q (known: %s)", a.Kind, strings.Join(ArrivalKinds, ", "))
	}
	return nil
}

func (c Clients) validate() error {
	if c.Connections < 0 || c.Connections > MaxConnections {
		return fieldErr("clients.connections", "must be between 1 and %d (each is a socket; one loopback address pair has about 28,000 ephemeral ports), got %d", MaxConnections, c.Connections)
	}
	if len(c.Named) > MaxNamedClients {
		return fieldErr("clients.named", "at most %d named clients (each has its own histograms), got %d", MaxNamedClients, len(c.Named))
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > MaxInFlight {
		return fieldErr("clients.max_in_flight", "must be between 1 and %d (the generator's schedule window), or 0 to derive it from the workload; got %d", MaxInFlight, c.MaxInFlight)
	}
	if c.RequestsPerConn < 0 {
		return fieldErr("clients.requests_per_conn", "must be >= 0 (0: no limit), got %d", c.RequestsPerConn)
	}
	if c.Preopen && (!c.KeepAliveOn() || c.RequestsPerConn > 0) {
		return fieldErr("clients.preopen", "keeps every connection open for the run: it needs keepalive on and no requests_per_conn (got keepalive %v, requests_per_conn %d)", c.KeepAliveOn(), c.RequestsPerConn)
	}
	seen := map[string]bool{}
	for i, n := range c.Named {
		f := fmt.Sprintf("clients.named[%d]", i)
		if err := field.Name(f+".name", n.Name); err != nil {
			return err
		}
		if seen[n.Name] {
			return fieldErr(f+".name", "duplicate client name %q", n.Name)
		}
		seen[n.Name] = true
		if n.Share <= 0 || n.Share > MaxWeight {
			return fieldErr(f+".share", "must be > 0 and at most %g (shares are relative), got %g", MaxWeight, n.Share)
		}
		if n.Connections < 1 || n.Connections > MaxConnections {
			return fieldErr(f+".connections", "must be between 1 and %d (each is a socket; one loopback address pair has about 28,000 ephemeral ports), got %d", MaxConnections, n.Connections)
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
	case LogNormal:
		if d.Median <= 0 {
			return fieldErr(f+".median", "must be > 0 for dist lognormal, got %s", d.Median)
		}
		if d.Sigma < 0 || d.Sigma > 5 {
			return fieldErr(f+".sigma", "must be in [0, 5], got %g", d.Sigma)
		}
	case Bimodal:
		if d.Low < 0 || d.High < d.Low {
			return fieldErr(f+".high", "need 0 <= low <= high, got low %s high %s", d.Low, d.High)
		}
		if d.PHigh < 0 || d.PHigh > 1 {
			return fieldErr(f+".p_high", "must be a probability in [0, 1], got %g", d.PHigh)
		}
	case Pareto:
		if d.Min <= 0 {
			return fieldErr(f+".min", "must be > 0 for dist pareto (the scale), got %s", d.Min)
		}
		if d.Max < d.Min {
			return fieldErr(f+".max", "must be >= min (the cap), got %s", d.Max)
		}
		if d.Alpha <= 0 {
			return fieldErr(f+".alpha", "must be > 0, got %g", d.Alpha)
		}
	default:
		return fieldErr(f+".dist", "unknown distribution %q (known: %s)", d.Dist, strings.Join(Dists, ", "))
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
	case LogNormal:
		return time.Duration(float64(d.Median) * math.Exp(d.Sigma*d.Sigma/2))
	case Bimodal:
		return time.Duration((1-d.PHigh)*float64(d.Low) + d.PHigh*float64(d.High))
	case Pareto:
		// Mean of the capped distribution, E[min(X, cap)].
		a, m, c := d.Alpha, float64(d.Min), float64(d.Max)
		if a == 1 {
			return time.Duration(m * (1 + math.Log(c/m)))
		}
		return time.Duration(m*a/(a-1) - math.Pow(m, a)*math.Pow(c, 1-a)/(a-1))
	default:
		return d.Value
	}
}
