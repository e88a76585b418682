package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// xmllintValidate runs xmllint --schema testdata/junit.xsd on doc and
// returns its combined output and whether it validated.
func xmllintValidate(t *testing.T, doc []byte) (string, bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xmllint", "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("xmllint: %v", err)
	}
	return string(out), err == nil
}

// TestJUnitValidates: the junit.xml lbbench writes validates, with
// xmllint, against the project's schema of the Jenkins xunit junit-10.xsd
// rules (testdata/junit.xsd), and the schema rejects what lbbench used to
// write (skipped on <testsuites>, no time).
func TestJUnitValidates(t *testing.T) {
	_, err := exec.LookPath("xmllint")
	needTool(t, "xmllint (libxml2-utils)", err == nil)
	for name, vs := range map[string][]compare.Verdict{"verdicts": testVerdicts(), "none": nil} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			times := junitTimes{Total: 90 * time.Second, ByVariant: map[string]time.Duration{"least_conn": 1234567 * time.Millisecond}}
			if err := writeJUnit(&buf, "s & <t>", vs, times); err != nil {
				t.Fatal(err)
			}
			out, ok := xmllintValidate(t, buf.Bytes())
			if !ok || !strings.Contains(out, "validates") {
				t.Fatalf("xmllint: %s\n%s", out, buf.String())
			}
			t.Logf("xmllint: %s", strings.TrimSpace(out))
		})
	}
	// With claims, and the claims suite's JUnit.
	claims := []claims.Result{{Say: "lc beats rp", Check: "p99(lc) < p99(rp)", Outcome: claims.Holds, Evidence: "5ms < 6ms"},
		{Say: "even & fair", Check: "skew <= 1.1", Outcome: claims.Fails, Evidence: "skew 1.4"},
		{Say: "bursts", Check: "model", Outcome: claims.Undecided, Evidence: "too few bursts"}}
	var withClaims, suite bytes.Buffer
	if err := writeJUnitWithClaims(&withClaims, "s", testVerdicts(), claims, junitTimes{Total: time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := richResults(t)
	if err := writeSuiteJUnit(&suite, []SuiteEntry{{Source: results.Source{Results: r}, Claims: claims}, {Source: results.Source{Results: r}, Claims: claims[:1]}}); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"with claims": withClaims.Bytes(), "claims suite": suite.Bytes()} {
		if out, ok := xmllintValidate(t, doc); !ok {
			t.Errorf("%s: xmllint: %s\n%s", name, out, doc)
		}
	}
	for name, doc := range map[string]string{
		"skipped on testsuites": `<testsuites name="lbbench" time="1.000" tests="1" failures="0" skipped="1"><testsuite name="s" tests="1" failures="0" errors="0" time="1.000"/></testsuites>`,
		"no time":               `<testsuites name="lbbench" tests="1" failures="0"><testsuite name="s" tests="1" failures="0" errors="0"/></testsuites>`,
		"no errors on suite":    `<testsuites time="1"><testsuite name="s" tests="1" failures="0" time="1"/></testsuites>`,
		"time not seconds":      `<testsuites time="1s"><testsuite name="s" tests="1" failures="0" errors="0" time="1"/></testsuites>`,
	} {
		t.Run("rejects "+name, func(t *testing.T) {
			if out, ok := xmllintValidate(t, []byte(doc)); ok {
				t.Errorf("the schema accepted %s: %s", doc, out)
			}
		})
	}
}
