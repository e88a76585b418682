package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/lbbench/lbbench/workloads"
)

// Claim is one expectation a scenario states: in words (Say) and as a check
// the report judges (Check). See ParseCheck for the check's grammar.
type Claim struct {
	// Say is the claim in words, as the documented experiment puts it.
	Say string `yaml:"say" json:"say"`
	// Check is the claim as an expression, for example
	// "p99(least_conn) < 0.8 * p99(reuseport)".
	Check string `yaml:"check" json:"check"`
}

// Term is metric(variant[, arg]) scaled by Factor.
type Term struct {
	Factor  float64
	Metric  string
	Variant string
	// Arg is the second argument, as written; Index it as an integer.
	Arg   string
	Index int
}

func (t Term) String() string {
	s := t.Metric + "(" + t.Variant
	if t.Arg != "" {
		s += ", " + t.Arg
	}
	s += ")"
	if t.Factor != 1 {
		s = strconv.FormatFloat(t.Factor, 'g', -1, 64) + " × " + s
	}
	return s
}

// Check is a parsed claim check: Left Op Right, where Right is a term, a
// number, a list of numbers or the model.
type Check struct {
	Left Term
	// Op is one of <, <=, >, >=, ==, ~ (~: an equivalence, with the model
	// or another variant's figure, within a margin).
	Op string
	// Exactly one of these is the right-hand side.
	Right  *Term
	Number *float64
	List   []float64
	Model  bool
	// Within, with Op "~" and a Right term, is the margin of an
	// equivalence claim: "p99(a) ~ p99(b) within 10%" claims the ratio
	// a/(F·b) lies between 1/(1+Within) and 1+Within.
	Within float64
	// Margin, with Model, is the absolute margin on the probability of a
	// model equivalence: "pmax(v, 4) ~ model within 0.03" claims the
	// measured probability lies within 0.03 of the model's exact one.
	Margin float64
}

// Holds reports whether l Op r.
func (c Check) Holds(l, r float64) bool {
	switch c.Op {
	case "<":
		return l < r
	case "<=":
		return l <= r
	case ">":
		return l > r
	case ">=":
		return l >= r
	case "==":
		return l == r
	}
	return false
}

// ParseCheck parses a claim check:
//
//	check := side op side | side op "[" number {"," number} "]"
//	       | term "~" "model" "within" number
//	       | term "~" side "within" number "%"
//	side  := [number ("*" | "×")] term | number [unit]
//	term  := metric "(" variant ["," arg] ")"
//	op    := "<" | "<=" | "≤" | ">" | ">=" | "≥" | "=="
//
// Latency numbers take a unit (ns, us, µs, ms, s). The model's margin is
// an absolute probability, above 0 and below 1 (within 0.03: three
// percentage points); another variant's is a percentage of its figure. It
// checks the syntax only; Validate checks the names against a scenario.
func ParseCheck(s string) (Check, error) {
	p := &checkParser{s: s}
	var c Check
	left, num, err := p.side()
	if err != nil {
		return c, err
	}
	if left == nil {
		return c, fmt.Errorf("must start with a metric, such as p99(variant), got %v", *num)
	}
	c.Left = *left
	if c.Op, err = p.op(); err != nil {
		return c, err
	}
	p.skip()
	switch {
	case c.Op == "~" && p.word("model"):
		c.Model = true
		if c.Margin, err = p.modelMargin(c.Left); err != nil {
			return c, err
		}
	case c.Op == "~":
		if c.Right, c.Number, err = p.side(); err != nil {
			return c, err
		}
		if c.Right == nil {
			return c, fmt.Errorf("~ compares with the model or another variant's figure: write \"%s ~ model within 0.03\" or \"%s ~ metric(variant) within 10%%\"", c.Left, c.Left)
		}
		p.skip()
		if !p.word("within") {
			return c, fmt.Errorf("an equivalence needs its margin: \"%s ~ %s within 10%%\"", c.Left, c.Right)
		}
		v, err := p.number()
		if err != nil {
			return c, err
		}
		p.skip()
		if !p.word("%") {
			return c, fmt.Errorf("the margin is a percentage: within %g%%", v)
		}
		if !(v > 0 && v <= 100) {
			return c, fmt.Errorf("the margin must be above 0%% and at most 100%%, got %g%%", v)
		}
		c.Within = v / 100
	case p.peek() == '[':
		p.i++
		for {
			v, err := p.number()
			if err != nil {
				return c, err
			}
			c.List = append(c.List, v)
			p.skip()
			if p.peek() == ',' {
				p.i++
				continue
			}
			if p.peek() == ']' {
				p.i++
				break
			}
			return c, fmt.Errorf("expected , or ] at %q", p.rest())
		}
	default:
		c.Right, c.Number, err = p.side()
		if err != nil {
			return c, err
		}
	}
	p.skip()
	if p.i < len(p.s) {
		return c, fmt.Errorf("unexpected %q at the end", p.rest())
	}
	return c, nil
}

// modelMargin reads the margin of a model equivalence, "within" and an
// absolute probability in (0, 1), after "~ model".
func (p *checkParser) modelMargin(left Term) (float64, error) {
	p.skip()
	if !p.word("within") {
		return 0, fmt.Errorf("an agreement with the model needs its margin, an absolute probability: \"%s ~ model within 0.03\" (the measured probability within 0.03 of the model's)", left)
	}
	v, err := p.number()
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.word("%") {
		return 0, fmt.Errorf("the model's margin is an absolute probability, not a percentage: within %g, not within %g%%", v/100, v)
	}
	if !(v > 0 && v < 1) {
		return 0, fmt.Errorf("the model's margin is a probability above 0 and below 1, got %g", v)
	}
	return v, nil
}

type checkParser struct {
	s string
	i int
}

func (p *checkParser) rest() string { return p.s[p.i:] }

func (p *checkParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *checkParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *checkParser) word(w string) bool {
	if strings.HasPrefix(p.rest(), w) {
		p.i += len(w)
		return true
	}
	return false
}

func (p *checkParser) op() (string, error) {
	p.skip()
	for _, o := range []struct{ in, out string }{{"<=", "<="}, {"≤", "<="}, {">=", ">="}, {"≥", ">="}, {"==", "=="}, {"<", "<"}, {">", ">"}, {"~", "~"}} {
		if p.word(o.in) {
			return o.out, nil
		}
	}
	return "", fmt.Errorf("expected a comparison (<, <=, >, >=, ==, ~) at %q", p.rest())
}

// number reads a number with an optional duration unit (returned in
// nanoseconds).
func (p *checkParser) number() (float64, error) {
	p.skip()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.' || p.s[p.i] == '_' ||
		(p.i == start && p.s[p.i] == '-')) {
		p.i++
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(p.s[start:p.i], "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("expected a number at %q", p.s[start:])
	}
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}} {
		if strings.HasPrefix(p.rest(), u.name) {
			next := p.i + len(u.name)
			if next == len(p.s) || !isIdent(rune(p.s[next])) {
				p.i = next
				return v * float64(u.d), nil
			}
		}
	}
	return v, nil
}

func isIdent(r rune) bool {
	return r == '_' || r == '.' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (p *checkParser) ident() string {
	p.skip()
	start := p.i
	for p.i < len(p.s) && isIdent(rune(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

// side reads [number *] term, or a lone number.
func (p *checkParser) side() (*Term, *float64, error) {
	p.skip()
	factor := 1.0
	if c := p.peek(); c >= '0' && c <= '9' || c == '.' || c == '-' {
		v, err := p.number()
		if err != nil {
			return nil, nil, err
		}
		p.skip()
		if !p.word("*") && !p.word("×") {
			return nil, &v, nil
		}
		factor = v
	}
	t := Term{Factor: factor, Index: -1}
	t.Metric = p.ident()
	if t.Metric == "" {
		return nil, nil, fmt.Errorf("expected metric(variant) at %q", p.rest())
	}
	p.skip()
	if !p.word("(") {
		return nil, nil, fmt.Errorf("expected ( after %s: write %s(variant)", t.Metric, t.Metric)
	}
	t.Variant = p.ident()
	p.skip()
	if p.word(",") {
		t.Arg = p.ident()
		if n, err := strconv.Atoi(t.Arg); err == nil {
			t.Index = n
		}
		p.skip()
	}
	if !p.word(")") {
		return nil, nil, fmt.Errorf("expected ) at %q", p.rest())
	}
	return &t, nil, nil
}

// validateClaims checks every claim against s: the syntax, the metrics and
// variants it names, and that it fits the workload (no ratio of latencies
// on a closed-loop run, burst metrics only on bursts).
func (s Scenario) validateClaims(metrics []MetricDef) error {
	for i, c := range s.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		if strings.TrimSpace(c.Say) == "" {
			return &FieldError{Field: f + ".say", Msg: "is required: the claim in words"}
		}
		chk, err := ParseCheck(c.Check)
		if err != nil {
			return &FieldError{Field: f + ".check", Msg: fmt.Sprintf("%q: %v", c.Check, err)}
		}
		if err := s.validateCheck(chk, metrics); err != nil {
			return &FieldError{Field: f + ".check", Msg: fmt.Sprintf("%q: %v", c.Check, err)}
		}
	}
	return nil
}

// lookupMetric returns the metric called name among metrics.
func lookupMetric(metrics []MetricDef, name string) (MetricDef, bool) {
	i := slices.IndexFunc(metrics, func(m MetricDef) bool { return m.Name == name })
	if i < 0 {
		return MetricDef{}, false
	}
	return metrics[i], true
}

func metricNames(metrics []MetricDef) string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

func (s Scenario) validateCheck(c Check, metrics []MetricDef) error {
	terms := []Term{c.Left}
	if c.Right != nil {
		terms = append(terms, *c.Right)
	}
	var kinds []string
	for _, t := range terms {
		m, ok := lookupMetric(metrics, t.Metric)
		if !ok {
			return fmt.Errorf("unknown metric %q (known: %s)", t.Metric, metricNames(metrics))
		}
		kinds = append(kinds, m.Kind)
		if err := s.validateTerm(t, m); err != nil {
			return err
		}
	}
	if len(kinds) == 2 && kinds[0] != kinds[1] {
		return fmt.Errorf("compares a %s metric with a %s one", kinds[0], kinds[1])
	}
	switch kinds[0] {
	case KindModel:
		if !c.Model {
			return fmt.Errorf("%s is judged against the model: write \"%s ~ model within 0.03\"", c.Left.Metric, c.Left)
		}
	case KindExact:
		return s.validateExact(c)
	case KindStat:
		return s.validateStat(c)
	}
	return nil
}

// validateTerm checks one term: its variant, its second argument, and that
// what it names exists in s.
func (s Scenario) validateTerm(t Term, m MetricDef) error {
	if !slices.ContainsFunc(s.Variants, func(v Variant) bool { return v.Name == t.Variant }) {
		return fmt.Errorf("unknown variant %q", t.Variant)
	}
	switch m.Arg {
	case "":
		if t.Arg != "" {
			return fmt.Errorf("%s takes only a variant, got a second argument %q", t.Metric, t.Arg)
		}
	case ArgIndex:
		if t.Index < 0 {
			return fmt.Errorf("%s needs an integer second argument, %s(variant, N), got %q", t.Metric, t.Metric, t.Arg)
		}
	case ArgDuration:
		if d, err := time.ParseDuration(t.Arg); err != nil || d <= 0 {
			return fmt.Errorf("%s needs a positive duration as second argument, %s(variant, 20ms), got %q", t.Metric, t.Metric, t.Arg)
		}
	case ArgName:
		if t.Arg == "" {
			return fmt.Errorf("%s needs a name as second argument, %s(variant, NAME)", t.Metric, t.Metric)
		}
		if len(m.Choices) > 0 && !slices.Contains(m.Choices, t.Arg) {
			return fmt.Errorf("%s's second argument must be one of %s, got %q", t.Metric, strings.Join(m.Choices, ", "), t.Arg)
		}
	}
	switch t.Metric {
	case "worker", "worker_share":
		if t.Index >= s.Workers.Count {
			return fmt.Errorf("worker %d does not exist (workers.count is %d)", t.Index, s.Workers.Count)
		}
	case "class":
		if !slices.ContainsFunc(s.Workload.Classes, func(cl workloads.Class) bool { return cl.Name == t.Arg }) {
			return fmt.Errorf("unknown class %q", t.Arg)
		}
	case "client":
		if !slices.ContainsFunc(s.Workload.Clients.Named, func(n workloads.NamedClient) bool { return n.Name == t.Arg }) {
			return fmt.Errorf("unknown named client %q", t.Arg)
		}
	case "maxload", "pmax":
		if s.Workload.Bursts == nil {
			return fmt.Errorf("%s needs a burst workload (workload.bursts)", t.Metric)
		}
		if t.Metric == "pmax" && (t.Index < 1 || t.Index > s.Workload.Bursts.Size) {
			return fmt.Errorf("pmax(variant, K) needs 1 <= K <= bursts.size (%d), got %d", s.Workload.Bursts.Size, t.Index)
		}
	}
	if t.Factor <= 0 {
		return fmt.Errorf("the factor must be > 0, got %g", t.Factor)
	}
	return nil
}

// validateExact checks the form of a check of counts.
func (s Scenario) validateExact(c Check) error {
	if c.Model {
		return fmt.Errorf("only pmax compares with the model")
	}
	if c.Within > 0 {
		return fmt.Errorf("%s is exact: an equivalence (~ within) is for statistical metrics", c.Left.Metric)
	}
	if c.Left.Metric == "workers" {
		if c.List == nil || c.Op != "==" {
			return fmt.Errorf("workers(variant) compares with a list of %d counts: workers(v) == [n0, n1, ...]", s.Workers.Count)
		}
		if len(c.List) != s.Workers.Count {
			return fmt.Errorf("the list has %d counts, but there are %d workers", len(c.List), s.Workers.Count)
		}
	} else if c.List != nil {
		return fmt.Errorf("only workers(variant) compares with a list")
	}
	if c.Right != nil && c.Right.Metric == "workers" {
		return fmt.Errorf("workers(variant) compares with a list, on the left")
	}
	return nil
}

// validateStat checks the form of a statistical check: a bound, or a
// ratio of one metric of two variants that the workload can rank.
func (s Scenario) validateStat(c Check) error {
	if c.Model || c.List != nil {
		return fmt.Errorf("%s compares with a number or another variant's %s", c.Left.Metric, c.Left.Metric)
	}
	if c.Op == "==" {
		return fmt.Errorf("%s varies from run to run: use <, <=, > or >=, not ==", c.Left.Metric)
	}
	if c.Right == nil {
		return nil
	}
	if c.Within > 0 && (c.Left.Metric == "slow" || c.Left.Metric == "slow_share") {
		return fmt.Errorf("counts of events are compared at a factor (<, >), not by equivalence")
	}
	if c.Right.Metric != c.Left.Metric {
		return fmt.Errorf("a ratio compares one metric of two variants, got %s and %s", c.Left.Metric, c.Right.Metric)
	}
	if c.Right.Variant == c.Left.Variant {
		return fmt.Errorf("a ratio compares two different variants")
	}
	if c.Left.Factor != 1 {
		return fmt.Errorf("put the factor on the right: %s(%s) %s F × %s(%s)", c.Left.Metric, c.Left.Variant, c.Op, c.Right.Metric, c.Right.Variant)
	}
	if !s.SaturationRatio(c) && (s.Workload.Deterministic() || s.variantClosed(c.Left.Variant) || s.variantClosed(c.Right.Variant)) {
		return fmt.Errorf("a ratio of %s on a closed-loop run: closed-loop latency is response time and hides queueing (coordinated omission), so it cannot rank variants; use an open-loop workload", c.Left.Metric)
	}
	return nil
}

// SaturationRatio reports whether c is a ratio that ranks variants on a
// closed loop: of throughput or CPU, in a workload without bursts.
// Throughput is the one ratio of performance a closed loop ranks: clients
// sending back to back measure what each variant sustains (saturation,
// wrk's measurement); CPU time per request is a cost, which a closed loop
// measures as well as an open one. Both vary from run to run, so more
// rounds decide them.
func (s Scenario) SaturationRatio(c Check) bool {
	return c.Right != nil && slices.Contains([]string{"throughput", "cpu_per_request", "cpu"}, c.Left.Metric) && s.Workload.Bursts == nil
}

// variantClosed reports whether variant name runs a deterministic
// (closed-loop or burst) workload.
func (s Scenario) variantClosed(name string) bool {
	for _, v := range s.Variants {
		if v.Name == name {
			return s.WorkloadFor(v, 0).Deterministic()
		}
	}
	return false
}
