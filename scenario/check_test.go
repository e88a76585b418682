package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/workloads"
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

// textBase is a valid scenario; textCases put bad text into it.
const textBase = `name: %s
description: %s
workers: {count: 2}
workload:
  arrival: {kind: constant, rate: 100}
  classes:
    - {name: a, path: %s, weight: 1, service: {value: 1ms}, headers: {X-A: %s}}
variants:
  - {name: rp, topology: reuseport}
`

// TestTextRefused: control characters and bidirectional controls are
// refused at parse time with file:line: field; newlines and tabs only in
// the multiline fields.
func TestTextRefused(t *testing.T) {
	ok := []string{`t`, `d`, `/work`, `v`}
	cases := []struct {
		at   int
		text string
		want string
	}{
		{2, `"/work\r\nX-Evil: 1"`, `x.yaml:7: workload.classes[0].path: "/work\r\nX-Evil: 1" holds the control character U+000D`},
		{2, `"/work\u0000"`, `x.yaml:7: workload.classes[0].path: "/work\x00" holds the control character U+0000`},
		{3, `"v\nX-Evil: 1"`, `x.yaml:7: workload.classes[0].headers.X-A: "v\nX-Evil: 1" holds the control character U+000A`},
		{0, `"ok\u202Egnp.exe"`, `x.yaml:1: name: "ok\u202egnp.exe" holds the bidirectional control U+202E`},
		{0, `"a\u2067b"`, `x.yaml:1: name: "a\u2067b" holds the bidirectional control U+2067`},
		{1, `"a\u200Fb"`, `x.yaml:2: description: "a\u200fb" holds the bidirectional control U+200F`},
		{1, `"bell\u0007"`, `x.yaml:2: description: "bell\a" holds the control character U+0007`},
		{1, `"\u009B2J"`, `x.yaml:2: description: "\u009b2J" holds the control character U+009B`},
	}
	for _, c := range cases {
		parts := slices.Clone(ok)
		parts[c.at] = c.text
		doc := fmt.Sprintf(textBase, parts[0], parts[1], parts[2], parts[3])
		_, err := Parse("x.yaml", []byte(doc), Catalog{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n  got  %v\n  want %s", c.text, err, c.want)
		}
	}
	// Lines and tabs in a description are text.
	parts := slices.Clone(ok)
	parts[1] = `"two\nlines\tand a tab"`
	if _, err := Parse("x.yaml", []byte(fmt.Sprintf(textBase, parts[0], parts[1], parts[2], parts[3])), Catalog{}); err != nil {
		t.Errorf("multiline description refused: %v", err)
	}
}

// TestWarmupZeroMeansNone: "warmup: 0s" is none, an absent warmup the
// default, a negative one none; the same in a workload file.
func TestWarmupZeroMeansNone(t *testing.T) {
	for _, c := range []struct {
		line string
		want time.Duration
	}{
		{"  warmup: 0s\n", 0},
		{"", workloads.DefaultWarmup},
		{"  warmup: ~\n", workloads.DefaultWarmup},
		{"  warmup: -1s\n", 0},
		{"  warmup: 500ms\n", 500 * time.Millisecond},
	} {
		doc := strings.Replace(fmt.Sprintf(textBase, "t", "d", "/work", "v"), "workload:\n", "workload:\n"+c.line, 1)
		s, err := Parse("x.yaml", []byte(doc), Catalog{})
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if got := s.Workload.WarmupTime(); got != c.want {
			t.Errorf("scenario with %q: warm-up %s, want %s", c.line, got, c.want)
		}
		wl := "arrival: {kind: constant, rate: 100}\n" + strings.TrimPrefix(c.line, "  ") + "classes: [{name: a, weight: 1, service: {value: 1ms}}]\n"
		spec, err := ParseWorkload("w.yaml", []byte(wl))
		if err != nil {
			t.Fatalf("workload %q: %v", wl, err)
		}
		if got := spec.WarmupTime(); got != c.want {
			t.Errorf("workload with %q: warm-up %s, want %s", c.line, got, c.want)
		}
	}
}
