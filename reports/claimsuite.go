package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/results"
)

// Claims-suite file names, written by WriteClaimsSuite.
const (
	claimsHTMLFile     = "claims.html"
	claimsMarkdownFile = "claims.md"
	claimsTextFile     = "claims.txt"
)

// SuiteEntry is one scenario of a claims suite: its results and its
// claims judged (job.JudgeSuite).
type SuiteEntry struct {
	results.Source
	Claims []claims.Result
	// Report is the path of the scenario's own report, relative to the
	// suite's directory ("" when unknown).
	Report string
	// Judged says at what level its claims were judged ("" when not
	// said): its share of the suite's, or the suite's one family.
	Judged string
}

// SuiteCounts counts the outcomes over every scenario of a suite.
func SuiteCounts(es []SuiteEntry) (holds, fails, inconclusive int) {
	for _, e := range es {
		h, f, u := claims.Counts(e.Claims)
		holds, fails, inconclusive = holds+h, fails+f, inconclusive+u
	}
	return
}

// WriteClaimsSuite writes one report of every scenario's claims into dir:
// claims.html (self-contained), claims.md, claims.txt and junit.xml (a
// test case per claim). It returns the paths written.
func WriteClaimsSuite(dir string, es []SuiteEntry) ([]string, error) {
	files := &fileSet{dir: dir}
	write := files.write
	steps := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{claimsTextFile, func(b *bytes.Buffer) error { return writeSuiteText(b, es) }},
		{claimsMarkdownFile, func(b *bytes.Buffer) error { return writeSuiteMarkdown(b, es) }},
		{claimsHTMLFile, func(b *bytes.Buffer) error { return writeSuiteHTML(b, es) }},
		{JUnitFile, func(b *bytes.Buffer) error { return writeSuiteJUnit(b, es) }},
	}
	for _, s := range steps {
		if err := write(s.name, s.render); err != nil {
			return files.written, err
		}
	}
	return files.written, nil
}

// WriteSuiteText writes the suite's claims as plain text.
func WriteSuiteText(w io.Writer, es []SuiteEntry) error {
	var b bytes.Buffer
	if err := writeSuiteText(&b, es); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeSuiteText(b *bytes.Buffer, es []SuiteEntry) error {
	h, f, u := SuiteCounts(es)
	fmt.Fprintf(b, "claims suite: %d scenarios, %d claims hold, %d fail, %d inconclusive\n", len(es), h, f, u)
	for _, e := range es {
		s := e.Results.Scenario
		fmt.Fprintf(b, "\n== %s (%s)\n", s.Name, e.Path)
		if s.Description != "" {
			fmt.Fprintf(b, "   %s\n", s.Description)
		}
		if s.Workload.Deterministic() {
			fmt.Fprintf(b, "   %s\n", DeterministicString(s.Workload))
		}
		if !e.Results.Complete {
			fmt.Fprintf(b, "   INCOMPLETE: %d of %d runs (%s)\n", len(e.Results.Runs), len(e.Results.Order), e.Results.Error)
		}
		fmt.Fprintf(b, "   %s\n", suiteRounds(e))
		writeClaimsText(b, e.Claims)
	}
	return nil
}

func writeSuiteMarkdown(b *bytes.Buffer, es []SuiteEntry) error {
	h, f, u := SuiteCounts(es)
	fmt.Fprintf(b, "### lbbench claims suite\n\n**%d scenarios: %d claims hold, %d fail, %d inconclusive.**\n", len(es), h, f, u)
	for _, e := range es {
		s := e.Results.Scenario
		fmt.Fprintf(b, "\n#### %s\n\n%s\n", mdEscape(s.Name), mdEscape(s.Description))
		if s.Workload.Deterministic() {
			fmt.Fprintf(b, "\n%s. %s.\n", mdEscape(DeterministicString(s.Workload)), mdEscape(closedLoopNote))
		}
		fmt.Fprintf(b, "\n%s\n", mdEscape(upperFirst(suiteRounds(e))))
		writeClaimsMarkdown(b, e.Claims)
	}
	return nil
}

// suiteRounds says how many rounds a scenario of the suite made: with
// the most its run allowed and why it stopped when it ran until decided
// (results.Stop), else against the scenario's repeat.
func suiteRounds(e SuiteEntry) string {
	r := e.Results
	var out string
	if st := r.Stop; st != nil {
		out = fmt.Sprintf("rounds: %d of at most %d, until decided: %s", st.Rounds, st.MaxRounds, st.Reason)
	} else {
		made := 0
		for _, run := range r.Runs {
			made = max(made, run.Rep)
		}
		out = fmt.Sprintf("rounds: %d of %d (the scenario's repeat)", made, r.Scenario.Repeat)
	}
	if e.Judged != "" {
		out += "; claims judged " + e.Judged
	}
	return out
}

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func writeSuiteJUnit(b *bytes.Buffer, es []SuiteEntry) error {
	doc := junitSuites{Name: "lbbench claims"}
	var total time.Duration
	for _, e := range es {
		// A claim is judged on the scenario's whole results: its time and
		// the suite's are the measured time of every run.
		t := runTimes(e.Results.Runs, nil).Total
		total += t
		name := e.Results.Scenario.Name
		suite := junitSuite{Name: "lbbench." + name, Time: junitTime(t)}
		suite.addClaims(name, e.Claims, t)
		suite.Tests = len(suite.Cases)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
	doc.Time = junitTime(total)
	return encodeJUnit(b, doc)
}

var suiteTmpl = template.Must(template.New("suite").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lbbench claims suite</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;margin:.5rem 0}td,th{border-bottom:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
.n{text-align:right;font-variant-numeric:tabular-nums}.scroll{overflow-x:auto}
.v-fail{color:#b00020;font-weight:700}.v-pass{color:#1b6e20;font-weight:600}.v-inconclusive{color:#8a5a00;font-weight:600}
.note{color:#444}.banner{padding:.4rem .6rem;background:#f3f3f3;border-left:4px solid #888}
code{font-size:90%}
</style></head><body>
<h1>lbbench claims suite</h1>
<p class="banner">{{.Scenarios}} scenarios: {{.Holds}} claims hold, {{.Fails}} fail, {{.Inconclusive}} inconclusive.</p>
<p class="note">Each scenario states what the documented experiment expects, in words and as a check. Exact counts hold when true on every valid run; a ratio between variants holds when the whole 95% confidence interval of the ratio of per-run medians lies on the claimed side, fails when it lies wholly on the other side, and is inconclusive otherwise; a bound holds when every valid run meets it; a model claim (<code>~ model within D</code>) holds when the interval of the runs' mean distance from the exact figure of <code>lbbench model balls</code> lies inside &plusmn;D, and fails when it lies wholly beyond one margin. A claim that fails stays failing here: the evidence shows what was measured. A scenario made until decided (<code>run --until-decided</code>) went on round after round until its comparison and its statistical claims were decided at a look, or its rounds or budget ran out; its claims are judged at the share of the level its last look had.</p>
{{range .Entries}}<section>
<h2>{{.Name}}</h2>
<p>{{.Description}}{{with .Report}} (<a href="{{.}}">full report</a>){{end}}</p>
{{with .Closed}}<p class="banner">{{.}}</p>{{end}}
<p class="note">{{.Rounds}}</p>
<div class="scroll"><table>
<thead><tr><th>claim</th><th>check</th><th>outcome</th><th>evidence</th></tr></thead>
<tbody>{{range .Claims}}<tr><td>{{.Say}}</td><td><code>{{.Check}}</code></td><td class="v-{{.Class}}">{{.Outcome}}</td><td>{{.Evidence}}</td></tr>{{end}}</tbody>
</table></div>
{{range .Claims}}{{with .MaxLoad}}<h3>Largest load per burst: measured and model</h3>
<p class="note">{{.Bursts}} bursts of {{.Tasks}} simultaneous new connections over {{.Workers}} workers; the model column is the exact distribution for random dispatch (<code>lbbench model balls --tasks {{.Tasks}} --workers {{.Workers}}</code>).</p>
<div class="scroll"><table>
<thead><tr><th class="n">largest load</th><th class="n">bursts</th><th class="n">measured</th><th class="n">model (exact)</th></tr></thead>
<tbody>{{range .Rows}}<tr><td class="n">{{.K}}</td><td class="n">{{.MeasuredN}}</td><td class="n">{{printf "%.3f" .Measured}}</td><td class="n">{{printf "%.3f" .Exact}}</td></tr>{{end}}
<tr><td class="n">mean</td><td></td><td class="n">{{printf "%.2f" .MeasuredMean}}</td><td class="n">{{printf "%.2f" .ExactMean}}</td></tr></tbody>
</table></div>{{end}}{{end}}
</section>{{end}}
</body></html>
`))

func writeSuiteHTML(b *bytes.Buffer, es []SuiteEntry) error {
	type entry struct {
		Name, Description, Report, Closed, Rounds string
		Claims                                    []claimView
	}
	h, f, u := SuiteCounts(es)
	page := struct {
		Scenarios, Holds, Fails, Inconclusive int
		Entries                               []entry
	}{Scenarios: len(es), Holds: h, Fails: f, Inconclusive: u}
	for _, e := range es {
		s := e.Results.Scenario
		en := entry{Name: s.Name, Description: s.Description, Report: e.Report, Rounds: upperFirst(suiteRounds(e))}
		if s.Workload.Deterministic() {
			en.Closed = DeterministicString(s.Workload) + ". " + closedLoopNote + "."
		}
		en.Claims, _ = buildClaims(e.Claims)
		page.Entries = append(page.Entries, en)
	}
	return suiteTmpl.Execute(b, page)
}
