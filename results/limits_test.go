package results

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// limitCase edits a genuine results file into one over a limit.
type limitCase struct {
	name string
	edit func(doc map[string]any)
	want string
}

func runsOf(doc map[string]any) []any { return doc["runs"].([]any) }

func run0(doc map[string]any) map[string]any { return runsOf(doc)[0].(map[string]any) }

// classesLike returns n copies of run 0's first class, named c0, c1, ...
func classesLike(doc map[string]any, n int) []any {
	c := run0(doc)["classes"].([]any)[0].(map[string]any)
	out := make([]any, n)
	for i := range out {
		m := map[string]any{}
		for k, v := range c {
			m[k] = v
		}
		m["name"] = fmt.Sprintf("c%d", i)
		out[i] = m
	}
	return out
}

// TestResultsLimits: a results file over any of the scenario's limits (the
// issue's 100,000 classes, 200,000 intervals), with a run ID twice, or
// with more histograms than MaxHistograms, is refused with what is wrong,
// and refusing it allocates no more than a few times the file: no
// histogram of it is decoded.
func TestResultsLimits(t *testing.T) {
	data, err := os.ReadFile("testdata/schema1-before-split.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []limitCase{
		{"100000 classes", func(d map[string]any) {
			cs := make([]any, 100000)
			for i := range cs {
				cs[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "requests": 1}
			}
			run0(d)["classes"] = cs
		}, "runs[0] (001-least_conn_no_keepalive-r1) has 100000 classes; a workload has at most 256"},
		{"257 classes", func(d map[string]any) { run0(d)["classes"] = classesLike(d, 257) }, "has 257 classes; a workload has at most 256"},
		{"two classes of a name", func(d map[string]any) {
			cs := classesLike(d, 2)
			cs[1].(map[string]any)["name"] = "c0"
			run0(d)["classes"] = cs
		}, `has two classes named "c0"`},
		{"200000 intervals", func(d map[string]any) {
			iv := make([]any, 200000)
			for i := range iv {
				iv[i] = map[string]any{}
			}
			run0(d)["intervals"] = iv
		}, "has 200000 intervals; a run of at most 24h0m0s has at most 86401"},
		{"duplicate run IDs", func(d map[string]any) {
			runsOf(d)[1].(map[string]any)["id"] = run0(d)["id"]
		}, `runs[0] and runs[1] are both run "001-least_conn_no_keepalive-r1"`},
		{"257 variants", func(d map[string]any) {
			sc := d["scenario"].(map[string]any)
			v := sc["variants"].([]any)
			for len(v) < 257 {
				v = append(v, v[0])
			}
			sc["variants"] = v
		}, "its scenario has 257 variants; a scenario has at most 256"},
		{"too many histograms", func(d map[string]any) {
			// 40 runs of 210 classes: 8400 class histograms, under every
			// other limit.
			var runs []any
			for i := 0; i < 40; i++ {
				r := map[string]any{}
				for k, v := range run0(d) {
					r[k] = v
				}
				r["id"] = fmt.Sprintf("run-%d", i)
				r["classes"] = classesLike(d, 210)
				runs = append(runs, r)
			}
			d["runs"] = runs
		}, "histograms besides its intervals; lbbench reads at most 8192"},
		{"escaped histogram", func(d map[string]any) { run0(d)["latency"] = "\x00" }, "not a V2 compressed histogram"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			c.edit(doc)
			file, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "escaped histogram" {
				// A histogram spelt with a JSON escape, which would
				// escape the count of histograms.
				file = []byte(strings.Replace(string(file), `"\u0000"`, `"\u0048ISTFAAAAAAAA"`, 1))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = Decode("results.json", file)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%d-byte file: error %v, want one containing %q", len(file), err, c.want)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte file refused after %d bytes allocated (%.1f×): %v", len(file), alloc, float64(alloc)/float64(len(file)), err)
			if alloc > 8*uint64(len(file))+1<<20 {
				t.Errorf("allocated %d bytes refusing a %d-byte file, want at most 8× and 1 MiB", alloc, len(file))
			}
		})
	}
}
