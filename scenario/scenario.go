package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/internal/files"

	"go.yaml.in/yaml/v3"

	"github.com/lbbench/lbbench/workloads"
)

// Defaults used by Scenario.WithDefaults.
const (
	DefaultRepeat        = 3
	DefaultMaxRateError  = 0.05
	DefaultMaxSendLagP99 = 5 * time.Millisecond
	DefaultMaxSteal      = 0.05
)

// Upper bounds Validate enforces, each stated with its reason in the error.
const (
	// MaxRepeat bounds the runs per variant: past a few dozen the
	// confidence intervals barely narrow, and each run is a full start-up.
	MaxRepeat = 1000
	// MaxVariants bounds the variants of one scenario.
	MaxVariants = 256
	// MaxScenarioTime bounds repeat × variants × (warm-up + duration), the
	// measuring time of the whole scenario: a week, beyond which a typo
	// is more likely than intent.
	MaxScenarioTime = 7 * 24 * time.Hour
)

// Scenario is one comparison: a set of variants run against one workload,
// each repeated Repeat times in an interleaved, randomized, balanced order.
type Scenario struct {
	// Name labels the scenario; required.
	Name string `yaml:"name" json:"name"`
	// Description says what question the scenario answers.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Workers are the worker replicas every variant runs.
	Workers Workers `yaml:"workers" json:"workers"`
	// Workload is the load offered to every variant.
	Workload workloads.Spec `yaml:"workload" json:"workload"`
	// Variants are the arrangements compared; at least one.
	Variants []Variant `yaml:"variants" json:"variants"`
	// Repeat is the number of runs per variant; zero means DefaultRepeat.
	Repeat int `yaml:"repeat" json:"repeat"`
	// Validity sets when a run is too distorted to count.
	Validity Validity `yaml:"validity" json:"validity"`
	// Claims are what the scenario expects, judged in the report (see
	// claims.go).
	Claims []Claim `yaml:"claims,omitempty" json:"claims,omitempty"`
	// Verdicts are the metrics a comparison of this scenario judges
	// (against --baseline, or its variants with the first) when no
	// --metric is given: a gate's scenario names what it gates on, such
	// as p99 and cpu_per_request(proxy). Empty: the comparison's
	// defaults.
	Verdicts []string `yaml:"verdicts,omitempty" json:"verdicts,omitempty"`
}

// WorkloadFor returns the workload variant v is run with in round (from
// 1): the scenario's, with v's client model in place of the scenario's
// when v has one, its service times scaled by v's ServiceScale, and
// seeded with a seed derived from Workload.Seed and round, so that every variant of
// a round sees the same requests and each round different ones. Round 1
// (and 0, for a caller outside any round) keeps the file's seed. A
// closed-loop or burst workload keeps the file's seed in every round: it
// draws nothing per round (bursts are the same every time, by design).
// The harness and the simulator both take a run's workload from here.
func (s Scenario) WorkloadFor(v Variant, round int) workloads.Spec {
	spec := s.Workload
	if v.Clients != nil {
		spec.Clients = *v.Clients
	}
	if v.ServiceScale != 0 && v.ServiceScale != 1 {
		spec.Classes = slices.Clone(spec.Classes)
		for i := range spec.Classes {
			spec.Classes[i].Service = spec.Classes[i].Service.Scaled(v.ServiceScale)
		}
	}
	if !spec.Deterministic() {
		spec.Seed = roundSeed(spec.Seed, round)
	}
	return spec
}

// roundSeedStep separates the seeds of successive rounds (the golden
// ratio's 64-bit fraction, as the simulator has always used).
const roundSeedStep = 0x9e3779b97f4a7c15

// roundSeed is the workload seed of round (from 1) of a workload seeded
// with seed: seed itself for round 1 (and for 0 or less), a distinct one
// for each later round. A zero seed is workloads.DefaultSeed's.
func roundSeed(seed uint64, round int) uint64 {
	if round <= 1 {
		return seed
	}
	if seed == 0 {
		seed = workloads.DefaultSeed
	}
	return seed + uint64(round-1)*roundSeedStep
}

// Validity holds the bounds beyond which a run is marked invalid and left
// out of verdicts.
type Validity struct {
	// MaxRateError is the largest tolerated relative difference between the
	// achieved and the intended send rate; zero means DefaultMaxRateError.
	MaxRateError float64 `yaml:"max_rate_error" json:"max_rate_error"`
	// MaxSendLagP99 is the largest tolerated 99th percentile of send lag
	// (actual minus intended send time); zero means DefaultMaxSendLagP99.
	MaxSendLagP99 time.Duration `yaml:"max_send_lag_p99" json:"max_send_lag_p99"`
	// MaxSteal is the largest tolerated share of the time of the CPUs a
	// run used (the generator's and the server's) that the host stole
	// from them (hypervisor steal time, results.Run.HostSteal): such a run
	// measured a machine that was not there the whole time, on the
	// target's side as much as on the generator's. Zero means
	// DefaultMaxSteal (5%); 1 turns the check off.
	MaxSteal float64 `yaml:"max_steal,omitempty" json:"max_steal,omitempty"`
	// AllowConcurrent keeps valid a run during which another lbbench run
	// was running on the same host (results.Run.Concurrent still names
	// it). By default such a run is invalid: the other run's processes
	// took CPU, memory bandwidth and sockets from this one's, which no
	// pairing of rounds cancels. Set it where runs cannot disturb each
	// other (pinned to disjoint CPUs of a large machine).
	AllowConcurrent bool `yaml:"allow_concurrent,omitempty" json:"allow_concurrent,omitempty"`
}

// WithDefaults returns a copy of s with zero values filled in.
func (s Scenario) WithDefaults() Scenario {
	s.Workers = s.Workers.WithDefaults()
	s.Workload = s.Workload.WithDefaults()
	vs := make([]Variant, len(s.Variants))
	for i, v := range s.Variants {
		vs[i] = v.WithDefaults()
		if v.Clients != nil {
			c := v.Clients.WithDefaults()
			vs[i].Clients = &c
		}
	}
	s.Variants = vs
	if s.Repeat == 0 {
		s.Repeat = DefaultRepeat
	}
	if s.Validity.MaxRateError == 0 {
		s.Validity.MaxRateError = DefaultMaxRateError
	}
	if s.Validity.MaxSendLagP99 == 0 {
		s.Validity.MaxSendLagP99 = DefaultMaxSendLagP99
	}
	if s.Validity.MaxSteal == 0 {
		s.Validity.MaxSteal = DefaultMaxSteal
	}
	return s
}

// Validate reports the first problem in s as a *FieldError naming the field
// by its dotted yaml path. Call it on the result of WithDefaults.
func (s Scenario) Validate(cat Catalog) error {
	if err := field.Finite(s, ""); err != nil {
		return err
	}
	if err := checkTitle(s.Name); err != nil {
		return err
	}
	if err := s.Workers.Validate(); err != nil {
		return field.Prefix("workers", err)
	}
	if err := s.Workload.Validate(); err != nil {
		return field.Prefix("workload", err)
	}
	if len(s.Variants) == 0 {
		return &FieldError{Field: "variants", Msg: "at least one variant is required"}
	}
	if len(s.Variants) > MaxVariants {
		return &FieldError{Field: "variants", Msg: fmt.Sprintf("at most %d variants (every one runs repeat times; split the comparison), got %d", MaxVariants, len(s.Variants))}
	}
	seen := map[string]bool{}
	for i, v := range s.Variants {
		f := fmt.Sprintf("variants[%d]", i)
		if err := v.Validate(cat); err != nil {
			return field.Prefix(f, err)
		}
		if seen[v.Name] {
			return &FieldError{Field: f + ".name", Msg: fmt.Sprintf("duplicate variant name %q", v.Name)}
		}
		if v.WorkerCost > 0 && !s.BuiltinWorkers(v) && v.Target == nil {
			// (a variant's own target is refused by Variant.Validate)
			return &FieldError{Field: f + ".worker_cost", Msg: "an injected worker cost (--inject-cost workers=D) needs the built-in worker; workers.target runs a foreign server"}
		}
		if v.Clients != nil {
			w := s.WorkloadFor(v, 0)
			if err := w.Validate(); err != nil {
				return field.Prefix(f, err)
			}
		}
		for j, pl := range v.Proxy.Pools {
			for k, wi := range pl.Workers {
				if wi >= s.Workers.Count {
					return &FieldError{Field: fmt.Sprintf("%s.proxy.pools[%d].workers[%d]", f, j, k),
						Msg: fmt.Sprintf("names worker %d, but workers.count is %d (indexes 0 to %d)", wi, s.Workers.Count, s.Workers.Count-1)}
				}
			}
		}
		seen[v.Name] = true
	}
	if s.Repeat < 1 || s.Repeat > MaxRepeat {
		return &FieldError{Field: "repeat", Msg: fmt.Sprintf("must be between 1 and %d (past a few dozen runs the confidence intervals barely narrow), got %d", MaxRepeat, s.Repeat)}
	}
	if err := s.checkTotalTime(); err != nil {
		return err
	}
	if !(s.Validity.MaxRateError >= 0) || s.Validity.MaxRateError >= 1 {
		return &FieldError{Field: "validity.max_rate_error", Msg: fmt.Sprintf("must be in (0, 1), got %g", s.Validity.MaxRateError)}
	}
	if s.Validity.MaxSendLagP99 < 0 {
		return &FieldError{Field: "validity.max_send_lag_p99", Msg: fmt.Sprintf("must be > 0, got %s", s.Validity.MaxSendLagP99)}
	}
	if !(s.Validity.MaxSteal > 0) || s.Validity.MaxSteal > 1 {
		return &FieldError{Field: "validity.max_steal", Msg: fmt.Sprintf("must be in (0, 1] (a share of the run's CPU time; 1 turns the check off), got %g", s.Validity.MaxSteal)}
	}
	if err := s.validateVerdicts(cat.ComparisonMetrics); err != nil {
		return err
	}
	return s.validateClaims(cat.Metrics)
}

// validateVerdicts checks the verdict metrics against known, the names a
// comparison knows (none given: names only, unchecked).
func (s Scenario) validateVerdicts(known []string) error {
	seen := map[string]bool{}
	for i, m := range s.Verdicts {
		f := fmt.Sprintf("verdicts[%d]", i)
		switch {
		case m == "":
			return &FieldError{Field: f, Msg: "is empty"}
		case known != nil && !slices.Contains(known, m):
			return &FieldError{Field: f, Msg: fmt.Sprintf("unknown metric %q (known: %s)", m, strings.Join(known, ", "))}
		case seen[m]:
			return &FieldError{Field: f, Msg: fmt.Sprintf("%q given twice", m)}
		}
		seen[m] = true
	}
	return nil
}

// MaxTitleLen bounds the scenario's name, shown in reports and titles.
const MaxTitleLen = 200

// checkTitle checks the scenario's name. It is never part of a file name
// (reports escape it wherever they show it), so any printable text is
// allowed; control characters, which would break the terminal table and
// the text exports, are not.
func checkTitle(name string) error {
	if name == "" {
		return &FieldError{Field: "name", Msg: "is required"}
	}
	if len(name) > MaxTitleLen {
		return &FieldError{Field: "name", Msg: fmt.Sprintf("is longer than %d bytes", MaxTitleLen)}
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return &FieldError{Field: "name", Msg: fmt.Sprintf("%q holds a control character or invalid UTF-8", name)}
		}
	}
	return nil
}

// checkTotalTime refuses a scenario whose measuring time, repeat ×
// variants × (warm-up + duration), exceeds MaxScenarioTime, computed
// without overflow.
func (s Scenario) checkTotalTime() error {
	var total float64
	for _, v := range s.Variants {
		w := s.WorkloadFor(v, 0)
		total += float64(s.Repeat) * (w.WarmupTime() + w.Duration).Seconds()
	}
	if total > MaxScenarioTime.Seconds() {
		return &FieldError{Field: "repeat", Msg: fmt.Sprintf("repeat × variants × (warm-up + duration) is %.3g hours of measuring; the limit is %s (a week): lower repeat or duration, or split the scenario", total/3600, MaxScenarioTime)}
	}
	return nil
}

// FieldError is a problem in the input tied to a field (dotted yaml path
// such as "workload.classes[1].weight") and, when loaded from a file, to
// its line. Every layer that validates input returns this one type.
type FieldError = field.Error

// MaxFileBytes bounds a scenario or workload file. The largest scenario
// lbbench ships is a few KiB; a megabyte leaves room for hundreds of
// variants while keeping the YAML decoder's memory (tens of bytes per byte
// of input) far from the machine's.
const MaxFileBytes = 1 << 20

// Load reads, decodes, defaults and validates the scenario file at
// path. Errors name the file, the line and the field.
func Load(path string, cat Catalog) (Scenario, error) {
	data, err := readBounded(path, "scenario")
	if err != nil {
		return Scenario{}, err
	}
	return Parse(path, data, cat)
}

// readBounded reads at most MaxFileBytes of the file at path.
func readBounded(path, what string) ([]byte, error) {
	data, err := files.Read(path, MaxFileBytes)
	if errors.Is(err, files.ErrTooLarge) {
		return nil, &FieldError{File: path, Msg: fmt.Sprintf("file larger than %d bytes: a %s is a few KiB; split it or generate fewer variants", MaxFileBytes, what)}
	}
	if err != nil {
		return nil, fmt.Errorf("scenario: read %s: %w", what, err)
	}
	return data, nil
}

// decodeNode parses data as exactly one YAML document and returns its
// root node (nil for an empty file). A second document is refused: the
// decoder would silently ignore it.
func decodeNode(name string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, &FieldError{File: name, Msg: fmt.Sprintf("larger than %d bytes", MaxFileBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(name, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(name, err)
	default:
		return nil, &FieldError{File: name, Line: next.Line, Msg: "a second YAML document (after ---): a file holds one; put each scenario in its own file"}
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	return root.Content[0], nil
}

// Parse decodes, defaults and validates a scenario; name is used in
// error messages (usually the file's path). Unknown keys, bare numbers for
// durations, non-finite numbers, a second document and values beyond
// lbbench's limits are errors naming the file, the line and the field.
func Parse(name string, data []byte, cat Catalog) (Scenario, error) {
	doc, err := decodeNode(name, data)
	if err != nil {
		return Scenario{}, err
	}
	if doc == nil {
		return Scenario{}, &FieldError{File: name, Msg: "empty scenario"}
	}
	if err := checkNode(doc, reflect.TypeFor[Scenario](), ""); err != nil {
		err.(*FieldError).File = name
		return Scenario{}, err
	}
	if err := checkText(doc, ""); err != nil {
		err.(*FieldError).File = name
		return Scenario{}, err
	}
	var s Scenario
	if err := doc.Decode(&s); err != nil {
		return Scenario{}, yamlError(name, err)
	}
	explicitNoWarmup(mapValue(doc, "workload"), &s.Workload)
	s = s.WithDefaults()
	if err := s.Validate(cat); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = name
			fe.Line = lineOf(doc, fe.Field)
			return Scenario{}, fe
		}
		return Scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// explicitNoWarmup makes "warmup: 0s" written in the workload mapping n
// mean no warm-up, as it reads, rather than the default that an absent
// warmup gets (the zero value of Spec.Warmup).
func explicitNoWarmup(n *yaml.Node, spec *workloads.Spec) {
	if v := mapValue(n, "warmup"); v != nil && v.Tag != "!!null" && spec.Warmup == 0 {
		spec.Warmup = workloads.NoWarmup
	}
}

// mapValue returns the value of key in the mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// yamlError rewrites the yaml package's "line N: ..." messages as
// "file:N: ...".
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = name + ":" + strings.TrimPrefix(m, "line ")
		}
		return &FieldError{Msg: strings.Join(msgs, "\n")}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		return &FieldError{Msg: name + ":" + rest}
	}
	return &FieldError{File: name, Msg: msg}
}

// lineOf finds the line of the field at a dotted path such as
// "variants[1].proxy.policy": the line of its key, or of the sequence entry.
// A missing field resolves to the line of the deepest key that exists.
func lineOf(n *yaml.Node, field string) int {
	line := n.Line
	for _, part := range strings.Split(field, ".") {
		key, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			key = part[:i]
			idx, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		k, v := mapEntry(n, key)
		if v == nil {
			return line
		}
		n, line = v, k.Line
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		}
	}
	return line
}

// mapEntry returns the key and value nodes of key in mapping n.
func mapEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// LoadWorkload reads a workload spec (YAML or JSON, which is YAML) from
// path, applies defaults and validates it.
func LoadWorkload(path string) (workloads.Spec, error) {
	data, err := readBounded(path, "workload")
	if err != nil {
		return workloads.Spec{}, err
	}
	return ParseWorkload(path, data)
}

// ParseWorkload decodes, defaults and validates a workload spec, YAML or
// JSON; name is used in error messages.
func ParseWorkload(name string, data []byte) (workloads.Spec, error) {
	var spec workloads.Spec
	var doc *yaml.Node
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		// JSON, as `lbbench run --generators` writes it: durations are
		// integer nanoseconds there, which YAML would not take.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			return workloads.Spec{}, &FieldError{File: name, Msg: err.Error()}
		}
		if dec.More() {
			return workloads.Spec{}, &FieldError{File: name, Msg: "data after the workload's JSON object"}
		}
	} else {
		var err error
		if doc, err = decodeNode(name, data); err != nil {
			return workloads.Spec{}, err
		}
		if doc == nil {
			return workloads.Spec{}, &FieldError{File: name, Msg: "empty workload"}
		}
		if err := checkNode(doc, reflect.TypeFor[workloads.Spec](), ""); err != nil {
			err.(*FieldError).File = name
			return workloads.Spec{}, err
		}
		if err := checkText(doc, ""); err != nil {
			err.(*FieldError).File = name
			return workloads.Spec{}, err
		}
		if err := doc.Decode(&spec); err != nil {
			return workloads.Spec{}, yamlError(name, err)
		}
		explicitNoWarmup(doc, &spec)
	}
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = name
			if doc != nil {
				fe.Line = lineOf(doc, fe.Field)
			}
			return workloads.Spec{}, fe
		}
		return workloads.Spec{}, &FieldError{File: name, Msg: err.Error()}
	}
	return spec, nil
}

// BuiltinWorkers reports whether v's workers are lbbench's own (the
// built-in worker), not a foreign server: neither v nor the scenario's
// workers name a target. It is what decides where an injected worker cost
// can be spent (Variant.WorkerCost) and whose CPU it adds to.
func (s Scenario) BuiltinWorkers(v Variant) bool {
	return v.Target == nil && s.Workers.Target == nil
}
