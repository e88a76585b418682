package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/internal/resultstest"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

func TestClaimsInReports(t *testing.T) {
	r := resultstest.ClaimResults(4,
		scenario.Claim{Say: "fast is even", Check: "skew(fast) <= 1.1"},
		scenario.Claim{Say: "slow is even", Check: "skew(slow) <= 1.1"})
	var text, md, junit bytes.Buffer
	if err := WriteText(&text, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeJUnitWithClaims(&junit, "claims", nil, claims.Judge(r), runTimes(r.Runs, nil)); err != nil {
		t.Fatal(err)
	}
	html, err := renderHTML(t, r)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "junit": junit.String(), "html": html} {
		for _, want := range []string{"slow is even", "skew(slow) &lt;= 1.1", "9.00"} {
			w := want
			if name == "text" || name == "markdown" {
				w = strings.ReplaceAll(w, "&lt;", "<")
			}
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q", name, w)
			}
		}
	}
	if !strings.Contains(junit.String(), `<failure message="claim fails: skew(slow) &lt;= 1.1"`) {
		t.Errorf("junit: no failure for the failing claim:\n%s", junit.String())
	}
	if !strings.Contains(html, `class="v-fail">fails<`) || !strings.Contains(html, `class="v-pass">holds<`) {
		t.Errorf("html: outcomes not marked")
	}
}

func renderHTML(t *testing.T, r *results.Results) (string, error) {
	var b bytes.Buffer
	err := writeHTML(&b, docOf(t, r, nil))
	return b.String(), err
}

// TestCombineKeepsClosedLoopApart: a closed-loop result is not shown side
// by side with an open-loop one, and combined results carry no claims.
func TestCombineKeepsClosedLoopApart(t *testing.T) {
	open := resultstest.ClaimResults(1, scenario.Claim{Say: "x", Check: "skew(fast) <= 1.1"})
	closed := resultstest.BurstResults(10, 1, "maxload(fast) == 2")
	if _, err := results.Combine([]results.Source{{Label: "a", Path: "a", Results: open}, {Label: "b", Path: "b", Results: closed}}); err == nil ||
		!strings.Contains(err.Error(), "closed-loop") {
		t.Errorf("combining closed and open loop: %v", err)
	}
	other := resultstest.ClaimResults(1, scenario.Claim{Say: "y", Check: "skew(slow) <= 1.1"})
	c, err := results.Combine([]results.Source{{Label: "a", Path: "a", Results: open}, {Label: "b", Path: "b", Results: other}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scenario.Claims) != 0 || len(claims.Judge(c)) != 0 {
		t.Errorf("combined results carry claims %v", c.Scenario.Claims)
	}
}

// TestBurstsInReports: a run with bursts shows its largest-load
// distribution beside the model's in the text, markdown and HTML reports,
// claim or no claim.
func TestBurstsInReports(t *testing.T) {
	r := resultstest.BurstResults(500, 3, "maxload(fast) <= 16")
	r.Scenario.Claims = nil
	bs := claims.BurstComparisons(r)
	if len(bs) != 1 || bs[0].Variant != "fast" || bs[0].Bursts != 500 || len(bs[0].Exact) != 17 {
		t.Fatalf("burst comparisons %+v", bs)
	}
	var total float64
	for _, p := range bs[0].Exact {
		total += p
	}
	if total < 0.999999 || total > 1.000001 {
		t.Errorf("model distribution sums to %g", total)
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	html, err := renderHTML(t, r)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html} {
		if !strings.Contains(out, "4.20") || !strings.Contains(strings.ToLower(out), "largest load per burst") {
			t.Errorf("%s report lacks the burst distribution beside the model's mean 4.20", name)
		}
	}
}

// TestClaimsSuiteRounds: the claims suite's text, markdown and HTML say
// how many rounds each scenario made: against its repeat, or, made until
// decided, of the most allowed and why it stopped.
func TestClaimsSuiteRounds(t *testing.T) {
	fixed := resultstest.ClaimResults(4, scenario.Claim{Say: "x", Check: "skew(fast) <= 1.1"})
	looked := resultstest.ClaimResults(5, scenario.Claim{Say: "y", Check: "p99(fast) < 0.2 * p99(slow)"})
	looked.Scenario.Name = "looked"
	looked.Stop = &results.Stop{Rounds: 5, MaxRounds: 8, Decided: true, Reason: "every statistical claim decided after 5 rounds (look 3 of at most 6)"}
	es := []SuiteEntry{
		{Source: results.Source{Path: "a/results.json", Results: fixed}, Claims: claims.Judge(fixed)},
		{Source: results.Source{Path: "b/results.json", Results: looked}, Claims: claims.Judge(looked)},
	}
	var text, md, html bytes.Buffer
	for _, w := range []struct {
		b *bytes.Buffer
		f func(*bytes.Buffer, []SuiteEntry) error
	}{{&text, writeSuiteText}, {&md, writeSuiteMarkdown}, {&html, writeSuiteHTML}} {
		if err := w.f(w.b, es); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]struct {
		out        string
		fixed, ran string
	}{
		"text":     {text.String(), "   rounds: 4 of 4 (the scenario's repeat)\n", "   rounds: 5 of at most 8, until decided: every statistical claim decided after 5 rounds (look 3 of at most 6)\n"},
		"markdown": {md.String(), "\nRounds: 4 of 4 (the scenario's repeat)\n", "\nRounds: 5 of at most 8, until decided: every statistical claim decided after 5 rounds (look 3 of at most 6)\n"},
		"html":     {html.String(), `<p class="note">Rounds: 4 of 4 (the scenario&#39;s repeat)</p>`, `<p class="note">Rounds: 5 of at most 8, until decided: every statistical claim decided after 5 rounds (look 3 of at most 6)</p>`},
	} {
		if !strings.Contains(c.out, c.fixed) || !strings.Contains(c.out, c.ran) {
			t.Errorf("%s lacks the rounds %q and %q:\n%s", name, c.fixed, c.ran, c.out)
		}
	}
}
