package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/topologies"
)

func TestScenarioFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = scenario.Parse(name, data, topologies.Catalog())
			if strings.HasSuffix(name, ".good.yaml") {
				if err != nil {
					t.Fatalf("good fixture: %v", err)
				}
				return
			}
			first, _, _ := strings.Cut(string(data), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("bad fixture without a '# want: ' first line")
			}
			if err == nil {
				t.Fatalf("no error, want %q", want)
			}
			var fe *scenario.FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FieldError", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, want)
			}
		})
	}
}

func TestEmbeddedScenariosValid(t *testing.T) {
	for _, name := range scenarios.Names() {
		data, err := scenarios.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario.Parse(name+".yaml", data, topologies.Catalog()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOrderBalanced(t *testing.T) {
	data, _ := scenarios.Get(scenarios.Default)
	s, err := scenario.Parse("default.yaml", data, topologies.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	s.Repeat = 6
	order := s.Order()
	distinct := map[string]bool{}
	for _, perm := range order {
		seen := make([]bool, len(s.Variants))
		key := ""
		for _, v := range perm {
			seen[v] = true
			key += string(rune('a' + v))
		}
		for v, ok := range seen {
			if !ok {
				t.Fatalf("repetition %v misses variant %d", perm, v)
			}
		}
		distinct[key] = true
	}
	if len(distinct) < 2 {
		t.Errorf("6 repetitions all in the same order %v: not randomized", order[0])
	}
	again := s.Order()
	for r := range order {
		for i := range order[r] {
			if order[r][i] != again[r][i] {
				t.Fatalf("order not reproducible from the seed")
			}
		}
	}
}
