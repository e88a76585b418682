package worker

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// parseService returns the service time a raw URL query asks for with
// us=<whole microseconds> or ms=<milliseconds, may be fractional>, or def
// when it gives neither. Other parameters are ignored. It does not allocate
// unless the query is bad or escaped.
func parseService(rawQuery string, def time.Duration) (time.Duration, error) {
	d, seen := def, ""
	for rawQuery != "" {
		var kv string
		kv, rawQuery, _ = strings.Cut(rawQuery, "&")
		key, val, _ := strings.Cut(kv, "=")
		if key != "us" && key != "ms" {
			continue
		}
		if seen != "" {
			return 0, fmt.Errorf("worker: give one service time, got %s= and %s=", seen, key)
		}
		seen = key
		if strings.ContainsAny(val, "%+") {
			v, err := url.QueryUnescape(val)
			if err != nil {
				return 0, fmt.Errorf("worker: bad %s=%q: %w", key, val, err)
			}
			val = v
		}
		var ok bool
		if key == "us" {
			d, ok = parseMicros(val)
		} else {
			d, ok = parseMillis(val)
		}
		if !ok {
			return 0, fmt.Errorf("worker: bad %s=%q: want a number of %s between 0 and %v",
				key, val, unitName[key], MaxService)
		}
	}
	return d, nil
}

var unitName = map[string]string{"us": "whole microseconds", "ms": "milliseconds"}

func parseMicros(s string) (time.Duration, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > int64(MaxService/time.Microsecond) {
		return 0, false
	}
	return time.Duration(n) * time.Microsecond, true
}

func parseMillis(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(s, 64)
	// The comparisons are false for NaN, so NaN is rejected too.
	if err != nil || !(f >= 0 && f <= float64(MaxService/time.Millisecond)) {
		return 0, false
	}
	return time.Duration(math.Round(f * float64(time.Millisecond))), true
}
