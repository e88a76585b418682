package reports

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Outcome is a verdict's answer.
type Outcome string

// The three outcomes of a comparison (see measurement.md).
const (
	// Pass: the confidence interval lies inside the tolerance.
	Pass Outcome = "pass"
	// Fail: significant, and the interval lies beyond the tolerance.
	Fail Outcome = "fail"
	// Inconclusive: neither; more runs are needed.
	Inconclusive Outcome = "inconclusive"
)

// Verdict is the answer for one candidate variant and one metric compared
// with a baseline. It is the minimal shape reports render; the comparison
// that produces verdicts lives elsewhere.
type Verdict struct {
	// Variant is the candidate; Baseline what it was compared with.
	Variant  string `json:"variant"`
	Baseline string `json:"baseline,omitempty"`
	// Metric names the figure compared: "p50", "p99", "p99.9",
	// "throughput", "error_rate".
	Metric string `json:"metric"`
	// Outcome is pass, fail or inconclusive.
	Outcome Outcome `json:"outcome"`
	// Ratio is candidate/baseline of the per-run medians; CILow and CIHigh
	// bound its 95% confidence interval. Zero when unknown.
	Ratio  float64 `json:"ratio,omitempty"`
	CILow  float64 `json:"ci_low,omitempty"`
	CIHigh float64 `json:"ci_high,omitempty"`
	// Tolerance is the accepted relative change (0.1 for 10%).
	Tolerance float64 `json:"tolerance,omitempty"`
	// P is the corrected p-value of the test, when one was run.
	P float64 `json:"p,omitempty"`
	// Detail says why, in a sentence.
	Detail string `json:"detail,omitempty"`
}

// VerdictFile is the JSON layout of a verdicts file ("verdicts.json"
// beside results.json).
type VerdictFile struct {
	Verdicts []Verdict `json:"verdicts"`
}

// VerdictsFileName is the name reports look for beside a results file.
const VerdictsFileName = "verdicts.json"

// ReadVerdicts reads a verdicts file. A missing file is not an error: it
// returns no verdicts.
func ReadVerdicts(path string) ([]Verdict, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reports: read verdicts: %w", err)
	}
	return ParseVerdicts(path, data)
}

// ParseVerdicts decodes a verdicts file's content; name labels errors.
func ParseVerdicts(name string, data []byte) ([]Verdict, error) {
	var f VerdictFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reports: decode verdicts %s: %w", name, err)
	}
	for i, v := range f.Verdicts {
		switch v.Outcome {
		case Pass, Fail, Inconclusive:
		default:
			return nil, fmt.Errorf("reports: %s: verdicts[%d].outcome: want pass, fail or inconclusive, got %q", name, i, v.Outcome)
		}
		if v.Variant == "" || v.Metric == "" {
			return nil, fmt.Errorf("reports: %s: verdicts[%d]: variant and metric are required", name, i)
		}
	}
	return f.Verdicts, nil
}

// CountOutcomes returns how many verdicts passed, failed and were
// inconclusive.
func CountOutcomes(vs []Verdict) (pass, fail, inconclusive int) {
	for _, v := range vs {
		switch v.Outcome {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			inconclusive++
		}
	}
	return pass, fail, inconclusive
}

// The JUnit XML shapes, as CI systems (GitHub, GitLab, Jenkins) read them.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes verdicts as JUnit XML: one test suite per scenario name,
// one test case per variant × metric. A failed verdict is a <failure>, an
// inconclusive one <skipped>, so CI shows regressions as failed tests and
// undecided comparisons as skipped ones.
func WriteJUnit(w io.Writer, scenario string, vs []Verdict) error {
	suite := junitSuite{Name: "lbbench." + scenario}
	for _, v := range vs {
		c := junitCase{Name: v.Metric, ClassName: "lbbench." + scenario + "." + v.Variant, SystemOut: verdictSentence(v)}
		switch v.Outcome {
		case Fail:
			c.Failure = &junitMessage{Message: "regression: " + verdictSentence(v), Type: "regression", Text: v.Detail}
			suite.Failures++
		case Pass:
		default:
			c.Skipped = &junitMessage{Message: "inconclusive: " + verdictSentence(v), Text: v.Detail}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "lbbench", Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// verdictSentence says a verdict in one line: "p99 of least_conn vs
// reuseport: ratio 0.62 [0.55, 0.70], tolerance 10%".
func verdictSentence(v Verdict) string {
	s := v.Metric + " of " + v.Variant
	if v.Baseline != "" {
		s += " vs " + v.Baseline
	}
	if v.Ratio != 0 {
		s += ": ratio " + ratioString(v.Ratio)
		if v.CILow != 0 || v.CIHigh != 0 {
			s += " [" + ratioString(v.CILow) + ", " + ratioString(v.CIHigh) + "]"
		}
	}
	if v.Tolerance != 0 {
		s += ", tolerance " + strconv.FormatFloat(100*v.Tolerance, 'g', 4, 64) + "%"
	}
	return s
}

func ratioString(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
