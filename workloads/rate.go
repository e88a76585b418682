package workloads

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Rate is a request rate, per second. It is written as a number of
// requests per second (960, 0.5) or, as vegeta writes it, a count per
// duration ("50/1s", "1/100ms", "30/m"), in scenario files as on the
// command line. It encodes as the number per second.
type Rate float64

// PerSec returns the rate per second.
func (r Rate) PerSec() float64 { return float64(r) }

// ParseRate reads a rate: a number of requests per second or a count per
// duration. It refuses zero, negative and non-finite rates, and vegeta's
// "0" and "infinity" (its closed-loop max-rate attack) with a hint.
func ParseRate(s string) (Rate, error) {
	freq, per, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	switch strings.ToLower(strings.TrimSpace(freq)) {
	case "infinity", "inf", "0":
		return 0, fmt.Errorf("%q: vegeta's max-rate attack (rate 0 or infinity) is closed loop, not a rate; give one such as 50/1s, or a closed workload", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(freq), 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a rate: give requests per second (960) or a count per duration (50/1s, 1/100ms)", s)
	}
	d := time.Second
	if hasPer {
		per = strings.TrimSpace(per)
		switch per {
		case "ns", "us", "µs", "ms", "s", "m", "h":
			per = "1" + per
		}
		d, err = time.ParseDuration(per)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a rate: the part after / must be a positive duration such as 1s or 100ms", s)
		}
	}
	r := n / d.Seconds()
	if !(r > 0) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("%q is not a rate: it comes to %g per second", s, r)
	}
	return Rate(r), nil
}

// String writes the rate per second, as a number.
func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'g', -1, 64) }

// UnmarshalYAML takes a number (per second) or a string such as "50/1s".
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a rate is a number per second (960) or a count per duration (50/1s)", n.Line)
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			var v float64
			if err := n.Decode(&v); err != nil {
				return err
			}
			f = v
		}
		*r = Rate(f)
		return nil
	}
	v, err := ParseRate(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*r = v
	return nil
}

// UnmarshalJSON takes a number (per second) or a string such as "50/1s".
func (r *Rate) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*r = Rate(f)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a rate is a number per second or a string such as \"50/1s\", got %s", b)
	}
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}
