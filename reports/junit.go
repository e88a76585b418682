package reports

import (
	"encoding/xml"
	"fmt"
	"io"
)

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
	return WriteJUnitWithClaims(w, scenario, vs, nil)
}

// WriteJUnitWithClaims is WriteJUnit with the scenario's claims too: one
// test case per claim (class lbbench.SCENARIO.claims), a failed claim a
// <failure>, an inconclusive one <skipped>, each with its evidence.
func WriteJUnitWithClaims(w io.Writer, scenario string, vs []Verdict, cs []ClaimResult) error {
	suite := junitSuite{Name: "lbbench." + scenario}
	for _, c := range cs {
		jc := junitCase{Name: c.Say, ClassName: "lbbench." + scenario + ".claims", SystemOut: c.Check + ": " + c.Evidence}
		switch c.Outcome {
		case Fails:
			jc.Failure = &junitMessage{Message: "claim fails: " + c.Check, Type: "claim", Text: c.Evidence}
			suite.Failures++
		case Holds:
		default:
			jc.Skipped = &junitMessage{Message: "claim inconclusive: " + c.Check, Text: c.Evidence}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, jc)
	}
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
