package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
)

// testVerdicts covers every outcome, a missing interval and a name that
// needs escaping.
func testVerdicts() []compare.Verdict {
	return []compare.Verdict{
		{Variant: "least_conn", Baseline: "reuseport", Metric: "p99", Outcome: compare.Pass, Ratio: 0.11, CILow: 0.1, CIHigh: 0.12, Tolerance: 0.1, P: 0.004, Detail: "p99 is 89% lower"},
		{Variant: "least_conn", Baseline: "reuseport", Metric: "throughput", Outcome: compare.Inconclusive, Ratio: 1.001, Tolerance: 0.05, Detail: "too few runs"},
		{Variant: "least_conn", Baseline: "reuseport", Metric: "p99.9", Outcome: compare.Fail, Ratio: 1.4, CILow: 1.2, CIHigh: 1.6, Tolerance: 0.1, P: 0.01, Detail: "p99.9 <b>40%</b> higher & worse"},
	}
}

// encodeInterval builds an interval as the recorder stores it.
func encodeInterval(t *testing.T, start time.Duration, vals ...time.Duration) results.Interval {
	t.Helper()
	h := results.NewHistogram()
	for _, v := range vals {
		h.RecordDuration(v)
	}
	b, err := h.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return results.Interval{Start: start, Length: time.Second, Requests: uint64(len(vals)),
		Latency: string(b[1 : len(b)-1]), P99: h.Quantile(0.99)}
}

// richResults is fakeResults with what a real run adds: times, intervals,
// proxy counters, errors and an environment.
func richResults(t *testing.T) *results.Results {
	t.Helper()
	r := fakeResults()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Started, r.Finished = t0, t0.Add(time.Minute)
	r.Schema = results.SchemaVersion
	r.Env = results.Env{Hostname: "bench1", Kernel: "6.1.0", OS: "linux", Arch: "amd64", CPUModel: "Test CPU", CPUs: 2,
		GoVersion: "go1.26", Version: "dev", Commit: "0123456789abcdef", Driver: "local", Pinning: "none"}
	for i := range r.Runs {
		run := &r.Runs[i]
		run.Rep = 1 + i/2
		run.Started = t0.Add(time.Duration(i) * 10 * time.Second)
		run.IntendedRate = run.AchievedRate
		base := time.Duration(1+i) * time.Millisecond
		for s := range 3 {
			run.Intervals = append(run.Intervals, encodeInterval(t, time.Duration(s)*time.Second, base, 2*base, time.Duration(3+s)*base))
		}
		if run.Variant == "least_conn" {
			run.Proxy = &results.ProxyStats{Policy: "least_conn", Decisions: run.Requests, ClientConns: 8, UpstreamConns: run.Requests,
				Backends: []results.BackendStats{{Addr: "127.0.0.1:1", Requests: 500, PeakActive: 1}, {Addr: "127.0.0.1:2", Requests: 500, PeakActive: 2, Errors: 1}}}
			run.Errors, run.ErrorKinds = 2, map[string]uint64{"timeout": 1, "502": 1}
		}
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (run with -update if intended):\n%s", name, got)
	}
}

func TestExportGolden(t *testing.T) {
	r := richResults(t)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"summary.md.golden", func(b *bytes.Buffer) error { return writeMarkdown(b, docOf(t, r, testVerdicts())) }},
		{"summary-noverdicts.md.golden", func(b *bytes.Buffer) error { return writeMarkdown(b, docOf(t, fakeResults(), nil)) }},
		{"summary.csv.golden", func(b *bytes.Buffer) error { return writeCSV(b, docOf(t, r, nil)) }},
		{"junit.xml.golden", func(b *bytes.Buffer) error {
			return writeJUnit(b, r.Scenario.Name, testVerdicts(), junitTimes{Total: 62500 * time.Millisecond, ByVariant: map[string]time.Duration{"least_conn": 41234567 * time.Microsecond}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestCSVParses(t *testing.T) {
	var buf bytes.Buffer
	r := richResults(t)
	if err := writeCSV(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(r.Scenario.Variants) + len(r.Runs); len(rows) != want {
		t.Fatalf("%d rows, want header + %d variants + %d runs", len(rows), len(r.Scenario.Variants), len(r.Runs))
	}
	if !slices.Equal(rows[0], csvHeader) {
		t.Errorf("header %v", rows[0])
	}
	// The reuseport variant row merges only its valid run: 1000 requests.
	if rows[1][0] != "variant" || rows[1][1] != "reuseport" || rows[1][5] != "1" || rows[1][6] != "1000" {
		t.Errorf("reuseport row %v", rows[1])
	}
	if last := rows[len(rows)-1]; last[5] != "0" || !strings.Contains(last[19], "send lag") {
		t.Errorf("invalid run row %v", last)
	}
}

func TestJUnitParses(t *testing.T) {
	var buf bytes.Buffer
	if err := writeJUnit(&buf, "s", testVerdicts(), junitTimes{}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if doc.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || len(s.Cases) != 3 {
		t.Fatalf("tests %d, failures %d, skipped %d, cases %d", doc.Tests, s.Failures, s.Skipped, len(s.Cases))
	}
	if c := s.Cases[2]; c.Failure == nil || c.ClassName != "lbbench.s.least_conn" || c.Name != "p99.9" || !strings.Contains(c.Failure.Text, "<b>") {
		t.Errorf("failed case %+v", c)
	}
}

// histograms of several shapes, in microseconds.
func testHistograms() map[string]*results.Histogram {
	rng := rand.New(rand.NewPCG(1, 2))
	out := map[string]*results.Histogram{}
	add := func(name string, n int, f func() time.Duration) {
		h := results.NewHistogram()
		for range n {
			h.RecordDuration(f())
		}
		out[name] = h
	}
	add("empty", 0, nil)
	add("one value", 1, func() time.Duration { return 3 * time.Millisecond })
	add("uniform 1000", 1000, func() time.Duration { return time.Duration(rng.IntN(20000)) * time.Microsecond })
	add("exponential 10000", 10000, func() time.Duration { return time.Duration(rng.ExpFloat64() * 2e6) })
	add("bimodal 5000", 5000, func() time.Duration {
		if rng.IntN(10) == 0 {
			return 40*time.Millisecond + time.Duration(rng.IntN(1000))*time.Microsecond
		}
		return time.Duration(rng.ExpFloat64() * 2e6)
	})
	add("heavy tail 2000", 2000, func() time.Duration { return time.Duration(1e6 / math.Pow(rng.Float64()+1e-6, 0.7)) })
	return out
}

func TestHgrmRoundTrip(t *testing.T) {
	for name, h := range testHistograms() {
		t.Run(name, func(t *testing.T) {
			for _, ratio := range []float64{0, 1, 1000, 1e6} {
				var buf bytes.Buffer
				if err := writeHistogramHgrm(&buf, h, ratio); err != nil {
					t.Fatal(err)
				}
				d, err := parseHgrm(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatalf("ratio %g: %v\n%s", ratio, err, buf.String())
				}
				unit := ratio
				if unit == 0 {
					unit = DefaultUnitRatio
				}
				checkHgrm(t, h, d, unit)
			}
		})
	}
}

// checkHgrm compares a parsed distribution with its histogram: the footer,
// every row's cumulative count, and the headline percentiles.
func checkHgrm(t *testing.T, h *results.Histogram, d *parsedHgrm, unit float64) {
	t.Helper()
	// Values are printed with three decimals of the unit.
	tol := 0.0005 + 1e-9
	if d.TotalCount != h.TotalCount() {
		t.Errorf("footer count %d, histogram %d", d.TotalCount, h.TotalCount())
	}
	if math.Abs(d.Max-float64(h.Max())/unit) > tol {
		t.Errorf("footer max %g, histogram %g", d.Max, float64(h.Max())/unit)
	}
	if h.TotalCount() == 0 {
		if len(d.Rows) != 0 {
			t.Errorf("%d rows for an empty histogram", len(d.Rows))
		}
		return
	}
	if last := d.Rows[len(d.Rows)-1]; last.Percentile != 1 || last.TotalCount != h.TotalCount() {
		t.Errorf("last row %+v, want percentile 1 and count %d", last, h.TotalCount())
	}
	// Every row: the count of recorded values in buckets up to the row's value
	// is the row's count.
	bars := h.Distribution()
	for _, row := range d.Rows {
		v := int64(math.Round(row.Value * unit))
		var n int64
		for _, b := range bars {
			if b.From > v {
				break
			}
			n += b.Count
		}
		if unit <= 1000 && n != row.TotalCount {
			t.Errorf("row %+v: %d values at or below %d µs", row, n, v)
		}
	}
	// Every row is HdrHistogram's percentile iteration: its value is the
	// highest equivalent value of the first recorded value whose
	// cumulative count reaches the row's percentile, and its count is that
	// cumulative count (never below the percentile).
	n := float64(h.TotalCount())
	for _, row := range d.Rows {
		if row.Percentile == 1 {
			continue
		}
		var cum, before int64
		var at int64 = -1
		for _, b := range bars {
			if b.Count == 0 {
				continue
			}
			before = cum
			cum += b.Count
			// The file's percentile is rounded to 12 decimals.
			if float64(cum)/n >= row.Percentile-1e-12 {
				at = b.To
				break
			}
		}
		if math.Abs(row.Value-float64(at)/unit) > tol || row.TotalCount != cum {
			t.Errorf("row %+v: the first value reaching it is %g with count %d", row, float64(at)/unit, cum)
		}
		if float64(row.TotalCount)/n < row.Percentile-1e-12 || (before > 0 && float64(before)/n >= row.Percentile+1e-12) {
			t.Errorf("row %+v: count does not first reach the percentile there", row)
		}
	}
	// Reading a headline percentile from the file never gives a value
	// below the histogram's own.
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
		got, ok := d.ValueAt(p)
		want := float64(h.ValueAtQuantile(100*p)) / unit
		if !ok || got < want-tol {
			t.Errorf("p%g: file %g, histogram %g", 100*p, got, want)
		}
	}
}

func TestHgrmBadRatio(t *testing.T) {
	for _, r := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := writeHistogramHgrm(&bytes.Buffer{}, results.NewHistogram(), r); err == nil {
			t.Errorf("ratio %g accepted", r)
		}
	}
}

func TestParseHgrmErrors(t *testing.T) {
	for name, text := range map[string]string{
		"two fields":      "1.0 0.5\n",
		"not a number":    "x 0.5 3 2.0\n",
		"percentile > 1":  "1.0 1.5 3 2.0\n",
		"decreasing":      "2.0 0.5 3 2.0\n1.0 0.4 2 1.6\n",
		"negative count":  "1.0 0.5 -3 2.0\n",
		"bad footer mean": "#[Mean = x, StdDeviation = 1]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseHgrm(strings.NewReader(text)); err == nil {
				t.Errorf("accepted %q", text)
			}
		})
	}
}

func FuzzParseHgrm(f *testing.F) {
	for _, h := range testHistograms() {
		var buf bytes.Buffer
		writeHistogramHgrm(&buf, h, 0)
		f.Add(buf.Bytes())
	}
	f.Add([]byte("1 0.5 3\n#[Max = 2, Total count = 3]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseHgrm(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 1; i < len(d.Rows); i++ {
			if d.Rows[i].Percentile < d.Rows[i-1].Percentile || d.Rows[i].TotalCount < d.Rows[i-1].TotalCount {
				t.Fatalf("rows not monotone: %+v", d.Rows)
			}
		}
	})
}

func TestIntervalLogRoundTrip(t *testing.T) {
	r := richResults(t)
	run := r.Runs[1]
	var buf bytes.Buffer
	if err := writeIntervalLog(&buf, run, r.Scenario); err != nil {
		t.Fatal(err)
	}
	lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(buf.Bytes()))
	var got []*hdrhistogram.Histogram
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if h == nil {
			break
		}
		got = append(got, h)
	}
	if len(got) != len(run.Intervals) {
		t.Fatalf("%d histograms read back, wrote %d:\n%s", len(got), len(run.Intervals), buf.String())
	}
	for i, iv := range run.Intervals {
		want, err := iv.Histogram()
		if err != nil {
			t.Fatal(err)
		}
		wantNs, err := Nanos(want)
		if err != nil {
			t.Fatal(err)
		}
		if !got[i].Equals(wantNs) {
			t.Errorf("interval %d differs after the round trip", i)
		}
		// Nanoseconds: every percentile is lbbench's microseconds × 1000,
		// within the histograms' precision.
		for _, q := range []float64{50, 99, 100} {
			us, ns := float64(want.ValueAtQuantile(q)), float64(got[i].ValueAtQuantile(q))
			if ns < us*1000 || ns > us*1000*1.002+1000 {
				t.Errorf("interval %d: p%g %g ns in the log, %g µs recorded", i, q, ns, us)
			}
		}
		if wantStart := run.Started.Add(r.Scenario.Workload.WarmupTime()).Add(iv.Start).UnixMilli(); got[i].StartTimeMs() != wantStart {
			t.Errorf("interval %d starts at %d ms, want %d", i, got[i].StartTimeMs(), wantStart)
		}
	}
	if !strings.Contains(buf.String(), "#[StartTime: ") || !strings.Contains(buf.String(), "#[BaseTime: ") {
		t.Errorf("log lacks its start and base time:\n%s", buf.String())
	}
}

func TestRunTimes(t *testing.T) {
	runs := []results.Run{{Variant: "a", Measurement: results.Measurement{Duration: 10 * time.Second}}, {Variant: "b", Measurement: results.Measurement{Duration: 12 * time.Second}},
		{Variant: "a", Measurement: results.Measurement{Duration: 11 * time.Second}}, {Variant: "c", Measurement: results.Measurement{Duration: time.Second}}}
	got := runTimes(runs, []compare.Verdict{{Variant: "b", Baseline: "a", Metric: "p99"}, {Variant: "c", Baseline: "c", Metric: "p99"}})
	if got.Total != 34*time.Second || got.ByVariant["b"] != 33*time.Second || got.ByVariant["c"] != time.Second {
		t.Errorf("runTimes = %+v, want total 34s, b 33s (its runs and a's), c 1s", got)
	}
}

func TestParseVerdicts(t *testing.T) {
	for name, tc := range map[string]struct {
		json string
		want int
		err  string
	}{
		"ok":              {`{"verdicts":[{"variant":"a","metric":"p99","outcome":"fail"}]}`, 1, ""},
		"empty":           {`{"verdicts":[]}`, 0, ""},
		"unknown outcome": {`{"verdicts":[{"variant":"a","metric":"p99","outcome":"maybe"}]}`, 0, "verdicts[0].outcome"},
		"no metric":       {`{"verdicts":[{"variant":"a","outcome":"pass"}]}`, 0, "verdicts[0]: variant and metric"},
		"not json":        {`[`, 0, "decode verdicts"},
	} {
		t.Run(name, func(t *testing.T) {
			vs, err := compare.ParseVerdicts("v.json", []byte(tc.json))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(vs) != tc.want {
				t.Fatalf("%d verdicts, %v", len(vs), err)
			}
		})
	}
	if vs, err := compare.ReadVerdicts(filepath.Join(t.TempDir(), "missing.json")); err != nil || vs != nil {
		t.Errorf("missing file: %v, %v", vs, err)
	}
}

func FuzzParseVerdicts(f *testing.F) {
	f.Add([]byte(`{"verdicts":[{"variant":"a","metric":"p99","outcome":"pass","ratio":1.2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := compare.ParseVerdicts("fuzz", data)
		if err != nil {
			return
		}
		// Whatever parses renders.
		if err := writeJUnit(&bytes.Buffer{}, "fuzz", vs, junitTimes{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMarkdownEscapes(t *testing.T) {
	r := fakeResults()
	r.Scenario.Name = "<script>alert(1)</script> | *x*"
	r.Scenario.Variants[0].Name = "a|b_c"
	for i := range r.Runs {
		if r.Runs[i].Variant == "reuseport" {
			r.Runs[i].Variant = "a|b_c"
		}
	}
	var buf bytes.Buffer
	if err := writeMarkdown(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "<script>") || !strings.Contains(out, "&lt;script&gt;") {
		t.Errorf("HTML not escaped:\n%s", out)
	}
	if !strings.Contains(out, `| a\|b\_c |`) {
		t.Errorf("table cell not escaped:\n%s", out)
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	r := richResults(t)
	files, err := WriteDir(dir, docOf(t, r, testVerdicts()))
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range files {
		p, _ := filepath.Rel(dir, f)
		rel = append(rel, p)
	}
	want := []string{"report.html", "summary.md", "summary.csv", "junit.xml",
		"hgrm/reuseport.hgrm", "hgrm/reuseport.all.hgrm", "hgrm/least_conn.hgrm", "hgrm/least_conn.all.hgrm",
		"hlog/001-reuseport-r1.hlog", "hlog/002-least_conn-r1.hlog", "hlog/003-least_conn-r2.hlog", "hlog/004-reuseport-r2.hlog"}
	if !slices.Equal(rel, want) {
		t.Errorf("wrote %v\nwant  %v", rel, want)
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Without verdicts there is no junit.xml; without intervals no hlog.
	dir2 := t.TempDir()
	if _, err := WriteDir(dir2, docOf(t, fakeResults(), nil)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"junit.xml", "hlog"} {
		if _, err := os.Stat(filepath.Join(dir2, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written without verdicts or intervals: %v", f, err)
		}
	}
}

func TestFileNamer(t *testing.T) {
	n := fileNamer{}
	got := []string{n.name("a/b"), n.name("a_b"), n.name("a/b"), n.name(""), n.name("../x"), n.name("a/b\x00c d")}
	want := []string{"a_b", "a_b-2", "a_b", "_", "___x", "a_b.c_d"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

func TestCombine(t *testing.T) {
	a, b := fakeResults(), fakeResults()
	b.Scenario.Name = "other"
	r, err := results.Combine([]results.Source{{Label: "base", Results: a}, {Label: "cand", Results: b}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range r.Scenario.Variants {
		names = append(names, v.Name)
	}
	if want := []string{"base/reuseport", "base/least_conn", "cand/reuseport", "cand/least_conn"}; !slices.Equal(names, want) {
		t.Errorf("variants %v, want %v", names, want)
	}
	if len(r.Runs) != 8 || r.Runs[4].ID != "cand/001-reuseport-r1" || r.Scenario.Name != "golden + other" {
		t.Errorf("%d runs, run 4 %q, name %q", len(r.Runs), r.Runs[4].ID, r.Scenario.Name)
	}
	sums, err := Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	if sums[2].Requests != 1000 || sums[3].Requests != 2000 {
		t.Errorf("combined summaries: %d, %d requests", sums[2].Requests, sums[3].Requests)
	}
	// Distinct names stay as they are.
	b.Scenario.Variants[0].Name, b.Scenario.Variants[1].Name = "x", "y"
	for i := range b.Runs {
		b.Runs[i].Variant = map[string]string{"reuseport": "x", "least_conn": "y"}[b.Runs[i].Variant]
	}
	r, err = results.Combine([]results.Source{{Label: "base", Results: a}, {Label: "cand", Results: b}})
	if err != nil || r.Scenario.Variants[2].Name != "x" {
		t.Errorf("%v, %+v", err, r.Scenario.Variants)
	}
}

// Text a spreadsheet would run as a formula is escaped with a leading
// quote (OWASP's CSV injection advice); numeric cells, negative ones
// included, stay numbers.
func TestCSVEscapesFormulas(t *testing.T) {
	r := richResults(t)
	hostile := "=HYPERLINK(\"http://evil.example/\",\"click\")"
	r.Scenario.Variants[0].Name = hostile
	for i := range r.Runs {
		if r.Runs[i].Variant == "reuseport" {
			r.Runs[i].Variant = hostile
			r.Runs[i].ID = "@SUM(1+1)"
		}
	}
	r.Runs[len(r.Runs)-1].Invalid = []string{"-2+3+cmd|' /C calc'!A0"}
	r.Runs[0].IntendedRate = -1.5 // not a real rate: a negative number must stay a number
	var buf bytes.Buffer
	if err := writeCSV(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var sawVariant, sawID, sawInvalid, sawNegative bool
	for _, row := range rows[1:] {
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+@\t\r", rune(cell[0])) {
				t.Errorf("cell %q (column %s) would run as a formula", cell, csvHeader[i])
			}
			if _, err := strconv.ParseFloat(cell, 64); cell != "" && cell[0] == '-' && err != nil {
				t.Errorf("cell %q (column %s) starts with '-' and is not a number", cell, csvHeader[i])
			}
		}
		sawVariant = sawVariant || row[1] == "'"+hostile
		sawID = sawID || row[2] == "'@SUM(1+1)"
		sawInvalid = sawInvalid || row[19] == "'-2+3+cmd|' /C calc'!A0"
		sawNegative = sawNegative || row[9] == "-1.50"
	}
	if !sawVariant || !sawID || !sawInvalid || !sawNegative {
		t.Errorf("escaped variant %v, run id %v, invalid reason %v; negative number kept %v\n%s", sawVariant, sawID, sawInvalid, sawNegative, buf.String())
	}
}

// TestJUnitTimesAddUp: the cases of compare's junit.xml add up to its
// suite's time, each verdict's case is its share of its pair's measured
// time, and report, reading the verdicts back beside results that hold
// only the candidate's runs, writes the same times.
func TestJUnitTimesAddUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pairs := []compare.Pair{
		{Variant: "least_conn", Baseline: "reuseport", Base: resultstest.Runs(rng, "reuseport", 4, 1, 0.05), Cand: resultstest.Runs(rng, "least_conn", 4, 1, 0.05)},
		{Variant: "p2c", Baseline: "reuseport", Base: resultstest.Runs(rng, "reuseport", 4, 1, 0.05), Cand: resultstest.Runs(rng, "p2c", 4, 1, 0.05)},
	}
	var want time.Duration
	for _, p := range pairs {
		for _, r := range append(slices.Clone(p.Base), p.Cand...) {
			want += r.Duration
		}
	}
	dir := t.TempDir()
	c := judged(t, Comparison{Pairs: pairs, Scenario: "s", Title: "t", Dir: dir})
	vs := c.Verdicts
	if err := c.Write(&strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) (suite float64, cases []float64) {
		var doc junitSuites
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		suite, _ = strconv.ParseFloat(doc.Suites[0].Time, 64)
		for _, c := range doc.Suites[0].Cases {
			f, _ := strconv.ParseFloat(c.Time, 64)
			cases = append(cases, f)
		}
		return suite, cases
	}
	b, err := os.ReadFile(filepath.Join(dir, JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	suite, cases := read(b)
	sum := 0.0
	for _, c := range cases {
		sum += c
	}
	if math.Abs(sum-suite) > 1e-6 || math.Abs(suite-want.Seconds()) > 0.001*float64(len(cases)) {
		t.Errorf("cases add up to %.3f s, suite %.3f s, runs compared %.3f s; want all three equal", sum, suite, want.Seconds())
	}
	// report: the verdicts read back, beside the candidate's runs only.
	back, err := compare.ReadVerdicts(filepath.Join(dir, compare.VerdictsFileName))
	if err != nil || len(back) != len(vs) {
		t.Fatalf("read back %d verdicts (%v)", len(back), err)
	}
	var again bytes.Buffer
	if err := writeJUnit(&again, "s", back, runTimes(pairs[0].Cand, back)); err != nil {
		t.Fatal(err)
	}
	if s2, c2 := read(again.Bytes()); s2 != suite || !slices.Equal(c2, cases) {
		t.Errorf("report's times: suite %.3f cases %v; compare's: suite %.3f cases %v", s2, c2, suite, cases)
	}
}
