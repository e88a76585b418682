package results

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestReadsResultsWrittenBeforeTheSplit: testdata/schema1-before-split.json
// was written by lbbench before results left harness (model sim of the
// default scenario, with proxy counters). It still reads, and writing it
// back gives the same JSON document: the format did not change, so its
// schema number did not either (lbbench writes version 2 now, whose
// difference is wait, and reads version 1 as it was).
func TestReadsResultsWrittenBeforeTheSplit(t *testing.T) {
	const path = "testdata/schema1-before-split.json"
	r, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != 1 || len(r.Runs) == 0 || r.Runs[0].Latency == nil {
		t.Fatalf("read schema %d, %d runs", r.Schema, len(r.Runs))
	}
	proxies := 0
	for _, run := range r.Runs {
		if run.Proxy != nil && len(run.Proxy.Backends) > 0 {
			proxies++
		}
	}
	if proxies == 0 {
		t.Fatal("no run with proxy counters: the file does not exercise them")
	}
	again, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(orig, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("writing the old file back changes it:\n old %.400s\n new %.400s", orig, again)
	}
}
