package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// encodedHeaderOnly is a base64 V2 compressed histogram with the given
// geometry and no counts: a few dozen bytes that declare any range.
func encodedHeaderOnly(t testing.TB, digits int32, lowest, highest int64) string {
	t.Helper()
	var inner bytes.Buffer
	for _, v := range []any{uint32(contentsCookie), int32(0), int32(0), digits, lowest, highest, math.Float64bits(1)} {
		if err := binary.Write(&inner, binary.BigEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(inner.Bytes())
	w.Close()
	var out bytes.Buffer
	binary.Write(&out, binary.BigEndian, uint32(compressedCookie|0x10)) // as HdrHistogram writes it: "HISTF..."
	binary.Write(&out, binary.BigEndian, int32(z.Len()))
	out.Write(z.Bytes())
	return base64.StdEncoding.EncodeToString(out.Bytes())
}

func TestHistogramGeometryBounded(t *testing.T) {
	// What lbbench writes decodes.
	h := NewHistogram()
	h.RecordValue(1234)
	good, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(good, &back); err != nil || back.TotalCount() != 1 {
		t.Fatalf("lbbench's own histogram: %v (count %d)", err, back.TotalCount())
	}
	if err := json.Unmarshal([]byte(`"`+encodedHeaderOnly(t, HistDigits, HistLowest, HistHighest)+`"`), &back); err != nil {
		t.Fatalf("lbbench's geometry refused: %v", err)
	}
	for _, c := range []struct {
		digits          int32
		lowest, highest int64
		want            string
	}{
		{5, 1, math.MaxInt64, "significant digits"},
		{3, 1, math.MaxInt64, "declares the range 1 to 9223372036854775807"},
		{0, 1, HistHighest, "significant digits"},
		{-1, 1, HistHighest, "significant digits"},
		{3, 0, HistHighest, "declares the range"},
		{3, -5, HistHighest, "declares the range"},
		{3, HistHighest, HistHighest, "declares the range"},
	} {
		s := encodedHeaderOnly(t, c.digits, c.lowest, c.highest)
		err := json.Unmarshal([]byte(`"`+s+`"`), &back)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("digits %d range %d..%d: error %v, want one containing %q", c.digits, c.lowest, c.highest, err, c.want)
		}
	}
	for _, s := range []string{"", "AAAA", "HISTFAAA", "!!!!", "HISTFAAAACx4nJNpmSzMwMDAxQABzFCaEUzKT2D/AgEMNgI2"} {
		if err := json.Unmarshal([]byte(`"`+s+`"`), &back); err == nil {
			t.Errorf("%q decoded, want an error", s)
		}
	}
}

// evilResults is the compat fixture with every histogram replaced by one
// that declares 1 to MaxInt64 at 5 digits, repeated in more runs to reach
// about 157 KB, the size of the file in issue 17 (about 25 GB to decode).
func evilResults(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/schema1-before-split.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	evil := encodedHeaderOnly(t, 5, 1, math.MaxInt64)
	var replace func(v any) any
	replace = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = replace(e)
			}
		case []any:
			for i, e := range x {
				x[i] = replace(e)
			}
		case string:
			if strings.HasPrefix(x, "HISTF") {
				return evil
			}
		}
		return v
	}
	runs := doc["runs"].([]any)
	var more []any
	for len(more) < 46 {
		for _, r := range runs {
			c := map[string]any{}
			for k, v := range r.(map[string]any) {
				c[k] = v
			}
			c["id"] = fmt.Sprintf("%03d-%v", len(more), c["variant"])
			more = append(more, c)
		}
	}
	doc["runs"] = replace(more)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHugeHistogramResultsRefusedWithBoundedMemory(t *testing.T) {
	data := evilResults(t)
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("file: %d bytes, %d histograms", len(data), strings.Count(string(data), `"HISTF`))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadFile(path)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "significant digits") {
		t.Fatalf("huge-histogram results read: %v, want a refusal naming the digits", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused after allocating %d bytes (%.1f× the file): %v", alloc, float64(alloc)/float64(len(data)), err)
	// Reading allocates a few copies of the file (the bytes, the decoder's
	// values); never anything like the counts arrays declared.
	if limit := uint64(64 * len(data)); alloc > limit {
		t.Errorf("allocated %d bytes reading a %d-byte file, want at most %d", alloc, len(data), limit)
	}
}

// Memory for reading a genuine results file is proportional to its size.
func TestReadMemoryProportionalToSize(t *testing.T) {
	const path = "testdata/schema1-before-split.json"
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("read %d bytes with %d bytes allocated (%.0f×)", st.Size(), alloc, float64(alloc)/float64(st.Size()))
	// Each histogram decodes to at most about 180 KB and takes at least
	// about 60 bytes of the file: 3000× bounds any file.
	if alloc > 3000*uint64(st.Size()) {
		t.Errorf("allocated %d bytes for a %d-byte file", alloc, st.Size())
	}
}

func TestReadFileRefusesInconsistentResults(t *testing.T) {
	data, err := os.ReadFile("testdata/schema1-before-split.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(doc map[string]any)) []byte {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"null", []byte("null"), "holds null"},
		{"empty object", []byte("{}"), `has no "schema" field: not an lbbench results file (lbbench writes "schema": 2`},
		{"another tool's JSON", []byte(`{"latencies": {"p99": 1}}`), `has no "schema" field`},
		{"schema 0", edit(func(d map[string]any) { d["schema"] = 0 }), "has schema 0; results files have schema 1 to 2"},
		{"schema -1", edit(func(d map[string]any) { d["schema"] = -1 }), "has schema -1"},
		{"schema 99", edit(func(d map[string]any) { d["schema"] = 99 }), "has schema 99; this lbbench reads up to 2 (upgrade lbbench)"},
		{"no runs", edit(func(d map[string]any) { d["runs"] = []any{} }), "holds no runs and no reason why"},
		{"null runs", edit(func(d map[string]any) { d["runs"] = nil }), "holds no runs"},
		{"no variants", edit(func(d map[string]any) { d["scenario"].(map[string]any)["variants"] = nil }), "its scenario has no variants"},
		{"unknown variant", edit(func(d map[string]any) {
			d["runs"].([]any)[1].(map[string]any)["variant"] = "ghost"
		}), `runs[1] (`},
		{"not JSON", []byte("{\"schema\": 1,"), "decode results"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// An interrupted scenario that stopped before its first run says why,
	// and reads.
	path := filepath.Join(dir, "interrupted.json")
	os.WriteFile(path, edit(func(d map[string]any) { d["runs"] = []any{}; d["error"] = "interrupted" }), 0o644)
	if _, err := ReadFile(path); err != nil {
		t.Errorf("interrupted scenario with no runs: %v", err)
	}
}
