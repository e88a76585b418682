package scenario_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

func TestParseCheck(t *testing.T) {
	c, err := scenario.ParseCheck("p99(least_conn) < 0.8 × p99(reuseport)")
	if err != nil {
		t.Fatal(err)
	}
	if c.Left.Metric != "p99" || c.Left.Variant != "least_conn" || c.Left.Factor != 1 || c.Op != "<" ||
		c.Right == nil || c.Right.Variant != "reuseport" || c.Right.Factor != 0.8 {
		t.Errorf("ratio parsed as %+v (right %+v)", c, c.Right)
	}
	c, err = scenario.ParseCheck("skew(l7_round_robin) ≤ 1.1")
	if err != nil || c.Op != "<=" || c.Number == nil || *c.Number != 1.1 || c.Right != nil {
		t.Errorf("bound parsed as %+v, %v", c, err)
	}
	c, err = scenario.ParseCheck("p99.9(a) >= 50ms")
	if err != nil || c.Left.Metric != "p99.9" || c.Op != ">=" || *c.Number != float64(50*time.Millisecond) {
		t.Errorf("duration bound parsed as %+v, %v", c, err)
	}
	c, err = scenario.ParseCheck("workers(rr) == [1000, 1000, 1_000]")
	if err != nil || len(c.List) != 3 || c.List[2] != 1000 {
		t.Errorf("list parsed as %+v, %v", c, err)
	}
	c, err = scenario.ParseCheck("worker(pools, 3) == class(pools, event)")
	if err != nil || c.Left.Index != 3 || c.Right.Arg != "event" {
		t.Errorf("arguments parsed as %+v, %v", c, err)
	}
	c, err = scenario.ParseCheck("pmax(reuseport, 4) ~ model within 0.03")
	if err != nil || !c.Model || c.Left.Index != 4 || c.Margin != 0.03 || c.Within != 0 {
		t.Errorf("model parsed as %+v, %v", c, err)
	}
	for in, want := range map[string]string{
		"":                    "expected metric",
		"p99(a) = p99(b)":     "expected a comparison",
		"p99(a < 1":           "expected )",
		"p99 < 1":             "expected ( after p99",
		"p99(a) < 1 extra":    "unexpected",
		"5 < p99(a)":          "must start with a metric",
		"workers(a) == [1, 2": "expected , or ]",
		"pmax(a, 4) ~ p99(b)": "an equivalence needs its margin",
		// The model's margin is an absolute probability, and required.
		"pmax(a, 4) ~ model":              `needs its margin, an absolute probability: "pmax(a, 4) ~ model within 0.03"`,
		"pmax(a, 4) ~ model within":       "expected a number",
		"pmax(a, 4) ~ model within 3%":    "not a percentage: within 0.03, not within 3%",
		"pmax(a, 4) ~ model within 0":     "above 0 and below 1",
		"pmax(a, 4) ~ model within 1":     "above 0 and below 1",
		"pmax(a, 4) ~ model within -0.1":  "above 0 and below 1",
		"pmax(a, 4) ~ model within .03 x": "unexpected",
		"pmax(a, 4) ~ 0.79":               "~ model within 0.03",
		"p99(a) < 0.8 * p99(b) + 1":       "unexpected",
	} {
		if _, err := scenario.ParseCheck(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCheck(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// TestClaimsSuiteValid: every scenario of the claims suite parses, states
// at least one claim, and every claim names a known metric and variant.
func TestClaimsSuiteValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "claims", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("%d claims scenarios, want at least 6", len(files))
	}
	for _, f := range files {
		s, err := scenario.Load(f, topologies.Catalog())
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(s.Claims) == 0 {
			t.Errorf("%s states no claim", f)
		}
	}
}

// TestClosedLoopRatios: on a closed-loop workload a latency ratio is
// refused (response time hides queueing), while a throughput ratio, the
// saturation comparison clients sending back to back make, is accepted.
func TestClosedLoopRatios(t *testing.T) {
	const closed = `name: sat
workers: {count: 2}
workload:
  closed: {order: parallel}
  classes:
    - {name: noop, weight: 1, service: {value: 0s}}
  clients:
    named:
      - {name: a, requests: 10}
      - {name: b, requests: 10}
variants:
  - {name: x, topology: l7}
  - {name: y, topology: l4}
claims:
  - {say: s, check: "%s"}
`
	for check, wantErr := range map[string]string{
		"throughput(x) >= 1.0 * throughput(y)": "",
		"p99(x) < 1.0 * p99(y)":                "hides queueing",
	} {
		_, err := scenario.Parse("sat.yaml", []byte(strings.Replace(closed, "%s", check, 1)), topologies.Catalog())
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s on a closed loop: %v, want accepted", check, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s on a closed loop: %v, want an error containing %q", check, err, wantErr)
		}
	}
}
