package scenario_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// seeds adds every fixture, every embedded scenario and hostile values.
func seeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	claims, _ := filepath.Glob("../scenarios/claims/*.yaml")
	for _, p := range append(files, claims...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, name := range scenarios.Names() {
		if data, err := scenarios.Get(name); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"name: x\nworkers: {count: 2}\nworkload: {arrival: {rate: .nan}, classes: [{name: a, weight: 1}]}\nvariants: [{name: r, topology: reuseport}]",
		"name: x\nworkers: {count: 2}\nworkload: {arrival: {rate: 1e308}, duration: 1e9h, classes: [{name: a, weight: .inf}]}\nvariants: [{name: r, topology: reuseport}]",
		"name: x\nworkers: {count: 9223372036854775807}\nworkload: {arrival: {rate: 1}, classes: [{name: a, weight: 1}]}\nvariants: [{name: r, topology: proxy}]",
		"name: x\nrepeat: 2147483647\nworkers: {count: 2}\nworkload: {arrival: {kind: burst, size: 9223372036854775807, every: 1ns}, classes: [{name: a, weight: 1}]}\nvariants: [{name: r, topology: reuseport}]",
		"name: x\nworkers: {count: 2}\nworkload: {arrival: {kind: steps, steps: [{rate: 1, duration: 2562047h}, {rate: 1, duration: 2562047h}]}, classes: [{name: a, weight: 1}]}\nvariants: [{name: r, topology: reuseport}]",
		"a: &a [*a, *a]\nb: &b [*a, *a]\nc: [*b, *b]",
		"---\n---\n",
		// Text that corrupts requests or what is shown (issue 29).
		"name: \"a\\u202Eb\"\nworkers: {count: 2}\nworkload: {arrival: {rate: 1}, classes: [{name: a, weight: 1, path: \"/w\\r\\nX: 1\"}]}\nvariants: [{name: r, topology: reuseport}]",
		"name: x\nworkers: {count: 2}\nworkload: {warmup: 0s, arrival: {rate: 1}, classes: [{name: a, weight: 1}]}\nvariants: [{name: r, topology: reuseport}]",
	} {
		f.Add([]byte(s))
	}
}

// finite reports whether every float reachable from v is finite.
func finite(v any) bool { return field.Finite(v, "") == nil }

// FuzzParse: Parse never panics; it refuses with a *FieldError, or returns
// a scenario that validates again, has only finite numbers and safe names,
// and stays within the bounds.
func FuzzParse(f *testing.F) {
	seeds(f)
	cat := topologies.Catalog()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data, cat)
		if err != nil {
			var fe *scenario.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FieldError: %v", err, err)
			}
			return
		}
		if err := s.Validate(cat); err != nil {
			t.Fatalf("parsed scenario does not validate: %v", err)
		}
		if !finite(s) {
			t.Fatalf("parsed scenario holds a non-finite number: %+v", s)
		}
		if s.Workers.Count > scenario.MaxWorkers || s.Repeat > scenario.MaxRepeat || len(s.Variants) > scenario.MaxVariants {
			t.Fatalf("bounds exceeded: %d workers, repeat %d, %d variants", s.Workers.Count, s.Repeat, len(s.Variants))
		}
		for _, v := range s.Variants {
			if field.Name("", v.Name) != nil {
				t.Fatalf("unsafe variant name %q", v.Name)
			}
			w := s.WorkloadFor(v, 0)
			if n := w.Arrival.MeanRate(w.Duration) * (w.WarmupTime() + w.Duration).Seconds(); n > workloads.MaxArrivals || math.IsNaN(n) {
				t.Fatalf("variant %s: %g arrivals per run", v.Name, n)
			}
		}
		if n := len(s.Schedule(0)); n != s.Repeat*len(s.Variants) {
			t.Fatalf("schedule has %d runs, want %d rounds of %d", n, s.Repeat, len(s.Variants))
		}
	})
}

// FuzzParseWorkload: the workload spec reader (YAML or JSON) never panics
// and returns a spec that validates, or a *FieldError.
func FuzzParseWorkload(f *testing.F) {
	seeds(f)
	f.Add([]byte(`{"arrival": {"kind": "poisson", "rate": 100}, "duration": 1000000000, "classes": [{"name": "a", "path": "/", "weight": 1, "service": {"dist": "fixed"}}]}`))
	f.Add([]byte(`{"arrival": {"kind": "poisson", "rate": 1e999}}`))
	f.Add([]byte("arrival: {rate: -.inf}\nclasses: [{name: a, weight: 1}]"))
	f.Add([]byte("duration: 10\narrival: {rate: 10}\nclasses: [{name: a, weight: 1}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := scenario.ParseWorkload("fuzz.yaml", data)
		if err != nil {
			var fe *scenario.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FieldError: %v", err, err)
			}
			return
		}
		if err := spec.Validate(); err != nil {
			t.Fatalf("parsed spec does not validate: %v", err)
		}
		if !finite(spec) {
			t.Fatalf("parsed spec holds a non-finite number: %+v", spec)
		}
		if !reflect.DeepEqual(spec, spec.WithDefaults()) {
			t.Fatalf("parsed spec is not defaulted")
		}
	})
}
