package scenario

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A struct standing for a field another part of lbbench adds later: the
// generic walk must cover it without any change to the checks.
type futureSection struct {
	AcceptWhen string         `yaml:"accept_when"`
	Ratio      float64        `yaml:"ratio"`
	Grace      durationHolder `yaml:",inline"`
	Items      []futureItem   `yaml:"items"`
}

// durationHolder is inlined: its keys belong to the enclosing mapping.
type durationHolder struct {
	Grace Validity `yaml:"grace"`
}

type futureItem struct {
	Share float64 `yaml:"share"`
}

func TestCheckNodeIsGeneric(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"accept_whne: x", `accept_whne: unknown key "accept_whne" (did you mean accept_when?); valid keys here: accept_when, grace, items, ratio`},
		{"ratio: .nan", "ratio: must be a finite number, got .nan"},
		{"ratio: -.inf", "ratio: must be a finite number, got -.inf"},
		{"items: [{share: 1}, {share: .Inf}]", "items[1].share: must be a finite number, got .Inf"},
		{"items: [{shrae: 1}]", `items[0].shrae: unknown key "shrae" (did you mean share?)`},
		{"grace: {max_send_lag_p99: 5}", "grace.max_send_lag_p99: a duration needs a unit: write 5s"},
		{"zzzzzzzz: 1", `zzzzzzzz: unknown key "zzzzzzzz"; valid keys here:`},
	}
	for _, c := range cases {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(c.doc), &root); err != nil {
			t.Fatal(err)
		}
		err := checkNode(root.Content[0], reflect.TypeFor[futureSection](), "")
		if err == nil {
			t.Errorf("%s: no error, want %q", c.doc, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n  got  %v\n  want %s", c.doc, err, c.want)
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("accept_when: idle\nratio: 0.5\ngrace: {max_send_lag_p99: 5ms}\nitems: [{share: 2}]"), &root); err != nil {
		t.Fatal(err)
	}
	if err := checkNode(root.Content[0], reflect.TypeFor[futureSection](), ""); err != nil {
		t.Errorf("valid document refused: %v", err)
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"count", "concurrency", "mode", "slow", "target"}
	for in, want := range map[string]string{"cuont": "count", "concurency": "concurrency", "mdoe": "mode", "Slow": "slow", "xyzzy": ""} {
		if got := nearest(in, keys); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
