package worker

import "strings"

// queryMode returns the mode a request asks for with mode=spin or
// mode=sleep in its query (a class of CPU-bound requests among sleeping
// ones), or def when it asks for none.
func queryMode(rawQuery, def string) string {
	for rawQuery != "" {
		var kv string
		kv, rawQuery, _ = strings.Cut(rawQuery, "&")
		if v, ok := strings.CutPrefix(kv, "mode="); ok && (v == ModeSpin || v == ModeSleep) {
			return v
		}
	}
	return def
}
