package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// The JUnit XML shapes, as CI systems read them: the Jenkins xunit
// plugin's junit-10.xsd (testsuites carries name, time, tests, failures
// and errors only; testsuite needs name, tests, failures and errors),
// GitHub's test-report actions and GitLab (which read the time attributes
// of testsuites, testsuite and testcase, and failure, error and skipped
// elements).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Time     string       `xml:"time,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitTimes are the durations writeJUnit states: how long the runs a
// comparison rests on were measured.
type junitTimes struct {
	// Total is the measured time of every run compared (the suite's and
	// the document's time).
	Total time.Duration
	// ByVariant is, per candidate variant, the measured time of the runs
	// its verdicts compare (its own and its baseline's): each of its test
	// cases' time.
	ByVariant map[string]time.Duration
}

// runTimes returns the junitTimes of verdicts drawn from runs: per verdict
// variant, the measured time of its runs and of its baseline's.
func runTimes(runs []results.Run, vs []compare.Verdict) junitTimes {
	per := map[string]time.Duration{}
	var t junitTimes
	for _, r := range runs {
		per[r.Variant] += r.Duration
		t.Total += r.Duration
	}
	t.ByVariant = map[string]time.Duration{}
	for _, v := range vs {
		d := per[v.Variant]
		if v.Baseline != v.Variant {
			d += per[v.Baseline]
		}
		t.ByVariant[v.Variant] = d
	}
	return t
}

// verdictCaseTimes returns each verdict's test case time: its pair's
// measured time (Verdict.RunTime; t.ByVariant for verdicts written before
// it was recorded) shared equally by the pair's verdicts, to the
// millisecond JUnit shows, so that the cases add up to the suite's time.
func verdictCaseTimes(vs []compare.Verdict, t junitTimes) []time.Duration {
	type key struct{ variant, baseline string }
	n := map[key]int{}
	for _, v := range vs {
		n[key{v.Variant, v.Baseline}]++
	}
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		d := v.RunTime
		if d == 0 {
			d = t.ByVariant[v.Variant]
		}
		out[i] = (d / time.Duration(n[key{v.Variant, v.Baseline}])).Round(time.Millisecond)
	}
	return out
}

// addClaims adds a test case per claim (class lbbench.SCENARIO.claims): a
// failed claim a <failure>, an inconclusive one <skipped>, each with its
// evidence and time t (its share of the whole results' time: a claim is
// judged on all of them).
func (suite *junitSuite) addClaims(scenario string, cs []claims.Result, t time.Duration) {
	for _, c := range cs {
		jc := junitCase{Name: c.Say, ClassName: "lbbench." + scenario + ".claims", Time: junitTime(t), SystemOut: c.Check + ": " + c.Evidence}
		switch c.Outcome {
		case claims.Fails:
			jc.Failure = &junitMessage{Message: "claim fails: " + c.Check, Type: "claim", Text: c.Evidence}
			suite.Failures++
		case claims.Holds:
		default:
			jc.Skipped = &junitMessage{Message: "claim inconclusive: " + c.Check, Text: c.Evidence}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, jc)
	}
}

// junitTime writes d in seconds with milliseconds, as Surefire does.
func junitTime(d time.Duration) string {
	return strconv.FormatFloat(max(d, 0).Seconds(), 'f', 3, 64)
}

// writeJUnit writes verdicts as JUnit XML: one test suite per scenario name,
// one test case per variant × metric. A failed verdict is a <failure>, an
// inconclusive one <skipped>, so CI shows regressions as failed tests and
// undecided comparisons as skipped ones. Times are the measured time of
// the runs compared, in seconds (see writeJUnitWithClaims).
func writeJUnit(w io.Writer, scenario string, vs []compare.Verdict, t junitTimes) error {
	return writeJUnitWithClaims(w, scenario, vs, nil, t)
}

// writeJUnitWithClaims is writeJUnit with the scenario's claims too: one
// test case per claim (class lbbench.SCENARIO.claims), a failed claim a
// <failure>, an inconclusive one <skipped>, each with its evidence. A
// claim is judged on the whole results: the claims share t.Total. A
// verdict's case time is its share of its pair's measured time; the
// suite's time is the sum of its cases'.
func writeJUnitWithClaims(w io.Writer, scenario string, vs []compare.Verdict, cs []claims.Result, t junitTimes) error {
	suite := junitSuite{Name: "lbbench." + scenario}
	var total time.Duration
	if len(cs) > 0 {
		each := (t.Total / time.Duration(len(cs))).Round(time.Millisecond)
		suite.addClaims(scenario, cs, each)
		total += each * time.Duration(len(cs))
	}
	caseTimes := verdictCaseTimes(vs, t)
	for i, v := range vs {
		total += caseTimes[i]
		c := junitCase{Name: v.Metric, ClassName: "lbbench." + scenario + "." + v.Variant,
			Time: junitTime(caseTimes[i]), SystemOut: verdictSentence(v)}
		switch v.Outcome {
		case compare.Fail:
			c.Failure = &junitMessage{Message: "regression: " + verdictSentence(v), Type: "regression", Text: v.Detail}
			suite.Failures++
		case compare.Pass:
		default:
			c.Skipped = &junitMessage{Message: "inconclusive: " + verdictSentence(v), Text: v.Detail}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	suite.Time = junitTime(total)
	doc := junitSuites{Name: "lbbench", Time: suite.Time, Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	return encodeJUnit(w, doc)
}

// encodeJUnit writes doc with its XML header.
func encodeJUnit(w io.Writer, doc junitSuites) error {
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
