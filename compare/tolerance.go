package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/results"
)

// ParseTolerance parses "p99=10%", "p99=0.1", "10%" or "0.1"; an empty
// metric means every relative metric. A percentage is divided by 100; a
// bare number must be a fraction (at most 1), so "10" is an error rather
// than a 1000% tolerance.
func ParseTolerance(s string) (metric string, tol float64, err error) {
	value := s
	if i := strings.IndexByte(s, '='); i >= 0 {
		metric, value = strings.TrimSpace(s[:i]), s[i+1:]
		if _, ok := results.ComparisonMetric(metric); !ok {
			return "", 0, fmt.Errorf("unknown metric %q (known: %s)", metric, strings.Join(results.ComparisonMetrics(), ", "))
		}
	}
	value = strings.TrimSpace(value)
	pct := strings.HasSuffix(value, "%")
	tol, err = strconv.ParseFloat(strings.TrimSuffix(value, "%"), 64)
	if err != nil {
		return "", 0, fmt.Errorf("want a percentage such as 10%% or a fraction such as 0.1, got %q", value)
	}
	if pct {
		tol /= 100
	} else if tol > 1 {
		return "", 0, fmt.Errorf("%s is not a fraction; write %s%% for a percentage", value, value)
	}
	if !(tol > 0) || tol > 10 {
		return "", 0, fmt.Errorf("must be above 0 and at most 1000%%, got %s", value)
	}
	return metric, tol, nil
}

// Tolerances parses tolerance settings as ParseTolerance reads them, later
// ones overriding earlier ones; one without a metric sets every relative
// metric (every metric but results.MetricErrorRate), those compared only
// when asked for (throughput, cpu_per_request(ROLE)) included: it is kept
// under the key "" for them (Options.WithDefaults). None gives nil: the
// defaults.
func Tolerances(settings []string) (map[string]float64, error) {
	if len(settings) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	for _, t := range settings {
		metric, tol, err := ParseTolerance(t)
		if err != nil {
			return nil, fmt.Errorf("tolerance %q: %w", t, err)
		}
		if metric != "" {
			out[metric] = tol
			continue
		}
		out[""] = tol
		for _, m := range results.VerdictMetrics() {
			if m != results.MetricErrorRate {
				out[m] = tol
			}
		}
	}
	return out, nil
}
