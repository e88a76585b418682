package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// hdrJar is Debian's libhdrhistogram-java, installed by scripts/setup.sh.
const hdrJar = "/usr/share/java/hdrhistogram.jar"

// needTool skips (or, under CI, fails) a test whose external tool is
// missing.
func needTool(t *testing.T, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing (scripts/setup.sh installs it)", what)
	}
	t.Skipf("%s is missing; run scripts/setup.sh", what)
}

// javaProcessor runs HdrHistogram's HistogramLogProcessor on the log text
// with the extra arguments and returns its standard output: the
// percentile distribution of all the log's intervals added up.
func javaProcessor(t *testing.T, log []byte, args ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.hlog")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", append([]string{"-cp", hdrJar, "org.HdrHistogram.HistogramLogProcessor", "-i", path}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("HistogramLogProcessor: %v\n%s", err, stderr.String())
	}
	return out
}

func needJava(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM per histogram")
	}
	_, errJava := exec.LookPath("java")
	needTool(t, "java (default-jre-headless)", errJava == nil)
	_, errJar := os.Stat(hdrJar)
	needTool(t, hdrJar+" (libhdrhistogram-java)", errJar == nil)
}

// splitRun makes a run whose intervals hold h's values, spread over three
// one-second intervals in turn, as the generator records them.
func splitRun(t *testing.T, h *results.Histogram) results.Run {
	t.Helper()
	parts := []*results.Histogram{results.NewHistogram(), results.NewHistogram(), results.NewHistogram()}
	k := 0
	for _, b := range h.Distribution() {
		for range b.Count {
			if err := parts[k%3].RecordValue(b.To); err != nil {
				t.Fatal(err)
			}
			k++
		}
	}
	run := results.Run{ID: "r1", Variant: "v", Rep: 1, Started: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)}
	for i, p := range parts {
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		run.Intervals = append(run.Intervals, results.Interval{Start: time.Duration(i) * time.Second, Length: time.Second,
			Requests: uint64(p.TotalCount()), Latency: string(b[1 : len(b)-1])})
	}
	return run
}

// TestHlogJavaDefaults: Java's HistogramLogProcessor, with its default
// unit ratio, reads lbbench's .hlog as milliseconds, and prints exactly
// what writeHistogramHgrm prints for the same (nanosecond) histogram.
func TestHlogJavaDefaults(t *testing.T) {
	needJava(t)
	for name, h := range testHistograms() {
		if h.TotalCount() == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			run := splitRun(t, h)
			var log bytes.Buffer
			if err := writeIntervalLog(&log, run, scenario.Scenario{}); err != nil {
				t.Fatal(err)
			}
			java := javaProcessor(t, log.Bytes())
			// The processor first restates the log's start time (its own
			// line, not part of the distribution): it must be ours, to the
			// millisecond.
			first, rest, _ := bytes.Cut(java, []byte("\n"))
			if want := "#[StartTime: 1767323045.678 (seconds since epoch), Fri Jan 02 03:04:05 UTC 2026]"; string(first) != want {
				t.Fatalf("Java's first line %q, want %q", first, want)
			}
			java = rest
			sum, err := Nanos(h)
			if err != nil {
				t.Fatal(err)
			}
			var ours bytes.Buffer
			if err := writeHgrm(&ours, sum, 1e6); err != nil {
				t.Fatal(err)
			}
			if diff := lineDiff(java, ours.Bytes()); diff != "" {
				t.Fatalf("Java's HistogramLogProcessor and writeHistogramHgrm differ:\n%s", diff)
			}
			// Default ratio = milliseconds: Java's p100 row is lbbench's max
			// in ms, within the histograms' precision.
			d, err := parseHgrm(bytes.NewReader(java))
			if err != nil {
				t.Fatal(err)
			}
			wantMs := float64(h.Max()) / 1000
			if d.Max < wantMs || d.Max > wantMs*1.002+0.001 {
				t.Errorf("Java reads max %.3f, want %.3f ms", d.Max, wantMs)
			}
		})
	}
}

// TestHgrmMatchesJava: the .hgrm lbbench exports (microseconds, divided by
// DefaultUnitRatio) is byte for byte what HistogramLogProcessor prints for
// the same microsecond histogram told the same ratio.
func TestHgrmMatchesJava(t *testing.T) {
	needJava(t)
	for name, h := range testHistograms() {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			lw := hdrhistogram.NewHistogramLogWriter(&log)
			if err := lw.OutputLogFormatVersion(); err != nil {
				t.Fatal(err)
			}
			lw.OutputLegend()
			if h.TotalCount() > 0 {
				h.SetStartTimeMs(1000)
				h.SetEndTimeMs(2000)
				if err := lw.OutputIntervalHistogram(h.Histogram); err != nil {
					t.Fatal(err)
				}
			}
			java := javaProcessor(t, log.Bytes(), "-outputValueUnitRatio", "1000")
			if first, rest, _ := bytes.Cut(java, []byte("\n")); h.TotalCount() > 0 {
				// The processor's restatement of the log's start time.
				if !bytes.HasPrefix(first, []byte("#[StartTime: 1.000 ")) {
					t.Fatalf("Java's first line %q, want the start time", first)
				}
				java = rest
			}
			var ours bytes.Buffer
			if err := writeHistogramHgrm(&ours, h, 0); err != nil {
				t.Fatal(err)
			}
			if h.TotalCount() == 0 {
				// Java prints nothing without a histogram; ours is the
				// header and footer of an empty distribution.
				if len(bytes.TrimSpace(java)) != 0 {
					t.Errorf("Java printed %q for an empty log", java)
				}
				return
			}
			if diff := lineDiff(java, ours.Bytes()); diff != "" {
				t.Fatalf("Java's HistogramLogProcessor and writeHistogramHgrm differ:\n%s", diff)
			}
		})
	}
}

// lineDiff lists the lines where java and ours differ, or "".
func lineDiff(java, ours []byte) string {
	a := strings.Split(string(java), "\n")
	b := strings.Split(string(ours), "\n")
	var out strings.Builder
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			out.WriteString("line " + itoa(i+1) + ":\n  java: " + x + "\n  ours: " + y + "\n")
		}
	}
	return out.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestJavaFixed: javaFixed rounds as Java's String.format does. The wants
// are what OpenJDK 17 printed for String.format(Locale.US,
// "%.3f|%.2f|%.12f", x, x, x); Go's own %f differs on several (1.2345,
// 1.005, 0.125, 123456789.0125 round half even on the binary value).
func TestJavaFixed(t *testing.T) {
	for x, want := range map[float64]string{
		1.2345:         "1.235|1.23|1.234500000000",
		1.005:          "1.005|1.01|1.005000000000",
		0.125:          "0.125|0.13|0.125000000000",
		2.5e-4:         "0.000|0.00|0.000250000000",
		0.0005:         "0.001|0.00|0.000500000000",
		999.9995:       "1000.000|1000.00|999.999500000000",
		1e-7:           "0.000|0.00|0.000000100000",
		123456789.0125: "123456789.013|123456789.01|123456789.012500000000",
		0.55:           "0.550|0.55|0.550000000000",
		1 / (1 - 0.99): "100.000|100.00|100.000000000000",
		0:              "0.000|0.00|0.000000000000",
	} {
		if got := javaFixed(x, 3) + "|" + javaFixed(x, 2) + "|" + javaFixed(x, 12); got != want {
			t.Errorf("javaFixed(%v) = %s, Java prints %s", x, got, want)
		}
	}
}
