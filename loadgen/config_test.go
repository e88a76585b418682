package loadgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackConfigRefuses: each way of giving targets twice or not at
// all, a bad URL, format, header or --max-body is refused, saying what to
// do, before anything is read.
func TestAttackConfigRefuses(t *testing.T) {
	const base = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name string
		c    AttackConfig
		want string
	}{
		{"targets format as format", AttackConfig{Target: base, Format: TargetsJSON}, "--format json: --format is the results' format; the targets' format (vegeta's -format json) is --targets-format json"},
		{"unknown format", AttackConfig{Target: base, Format: "gob"}, `--format "gob": want lbbench, vegeta, vegeta-json or vegeta-csv`},
		{"header", AttackConfig{Target: base, Headers: []string{"A: 1", "nocolon"}}, `--header "nocolon": want "NAME: VALUE"`},
		{"header name", AttackConfig{Target: base, Headers: []string{" : v"}}, `--header " : v": want "NAME: VALUE"`},
		{"max-body low", AttackConfig{Target: base + "/x", Format: FormatVegeta, MaxBody: -2}, "--max-body -2: want 0 to 1048576 bytes (-1: 1048576)"},
		{"max-body high", AttackConfig{Target: base + "/x", Format: FormatVegeta, MaxBody: MaxBodyCap + 1}, "--max-body 1048577: want 0 to"},
		{"max-body lbbench", AttackConfig{Target: base + "/x", Format: FormatLbbench, MaxBody: 5}, "--max-body keeps bodies in vegeta's results: give --format vegeta, vegeta-json or vegeta-csv"},
		{"max-body all, default format", AttackConfig{Target: base + "/x", MaxBody: -1}, "--max-body keeps bodies"},
		{"target and targets", AttackConfig{Target: base, Targets: "t.txt"}, "give --target or --targets, not both"},
		{"target and stdin", AttackConfig{Target: base, StdinHasData: true}, "--target given and standard input is a pipe or file: give targets one way"},
		{"no target", AttackConfig{}, `no target: give --target URL, --targets FILE, or targets on standard input ("GET http://127.0.0.1:8080/work?ms=1")`},
		{"not http", AttackConfig{Target: "ftp://x"}, `--target "ftp://x" is not an http:// or https:// URL`},
		{"no host", AttackConfig{Target: "http:///x"}, `--target "http:///x" is not an http:// or https:// URL`},
		{"body for classes", AttackConfig{Target: base + "/", Body: "b"}, "--body is the body of literal targets; the workload's classes (--target with a base URL) have none"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, _, rerr := tc.c.Resolve(); rerr == nil || err == nil || rerr.Error() != err.Error() {
			t.Errorf("%s: Resolve: %v, Validate: %v", tc.name, rerr, err)
		}
	}
	for _, c := range []AttackConfig{
		{Target: "http://127.0.0.1:1"},
		{Target: "https://h/p?q=1", Format: FormatVegetaCSV, MaxBody: -1, Body: "b", Headers: []string{"A: 1"}},
		{Target: "http://127.0.0.1:1", StdinHasData: true, SpecOnStdin: true}, // a driver's generator
		{Targets: "t.txt", Format: FormatVegetaJSON, MaxBody: MaxBodyCap},
		{StdinHasData: true, Format: FormatVegeta},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v refused: %v", c, err)
		}
	}
}

// TestAttackConfigResolve: a base URL sends the workload's classes (with
// the extra headers), a URL with a path or query is one literal target,
// and targets come from a file or standard input, with the body and the
// headers given.
func TestAttackConfigResolve(t *testing.T) {
	dir := t.TempDir()
	body, targets := filepath.Join(dir, "body"), filepath.Join(dir, "targets.txt")
	os.WriteFile(body, []byte("hello"), 0o644)
	os.WriteFile(targets, []byte("GET http://127.0.0.1:9/a\n\nPOST http://127.0.0.1:9/b\n"), 0o644)

	entry, o, err := AttackConfig{Target: "http://127.0.0.1:9/", Headers: []string{"X-A: 1"}, Insecure: true, Name: "n"}.Resolve()
	if err != nil || entry != "http://127.0.0.1:9/" || len(o.Targets) != 0 || o.Header.Get("X-A") != "1" || !o.Insecure || o.Name != "n" {
		t.Errorf("base URL: %q, %+v, %v", entry, o, err)
	}

	entry, o, err = AttackConfig{Target: "https://h/p?q=1", Headers: []string{"X-A: 1"}, Body: body, Format: FormatVegeta, MaxBody: -1}.Resolve()
	if err != nil || entry != "https://h:443" || len(o.Targets) != 1 || o.Header != nil || o.MaxBody != MaxBodyCap {
		t.Fatalf("literal URL: %q, %+v, %v", entry, o, err)
	}
	if g := o.Targets[0]; g.Method != "GET" || g.URL != "https://h/p?q=1" || g.Header.Get("X-A") != "1" || string(g.Body) != "hello" {
		t.Errorf("literal URL's target %+v", g)
	}

	for _, c := range []AttackConfig{
		{Targets: targets},
		{Targets: "-", Stdin: strings.NewReader("GET http://127.0.0.1:9/a\n\nPOST http://127.0.0.1:9/b\n")},
		{StdinHasData: true, Stdin: strings.NewReader("GET http://127.0.0.1:9/a\n\nPOST http://127.0.0.1:9/b\n")},
	} {
		c.Body, c.Headers = body, []string{"X-B: 2"}
		entry, o, err := c.Resolve()
		if err != nil || entry != "http://127.0.0.1:9" || len(o.Targets) != 2 || o.Targets[1].Method != "POST" ||
			string(o.Targets[1].Body) != "hello" || o.Targets[0].Header.Get("X-B") != "2" || o.Header != nil {
			t.Errorf("%+v: %q, %+v, %v", c, entry, o.Targets, err)
		}
	}

	for _, tc := range []struct {
		c    AttackConfig
		want string
	}{
		{AttackConfig{Targets: filepath.Join(dir, "none")}, "--targets: open "},
		{AttackConfig{Target: "http://h/x", Body: filepath.Join(dir, "none")}, "--body: "},
		{AttackConfig{Targets: "-", Stdin: strings.NewReader("# none\n")}, "standard input: loadgen: targets: "},
		{AttackConfig{Targets: targets, TargetsFormat: "xml"}, targets + `: loadgen: targets format "xml"`},
		{AttackConfig{Targets: "-", Stdin: strings.NewReader("GET http://a:1/\nGET http://b:1/\n")}, "loadgen: targets go to http://a:1 and http://b:1"},
	} {
		if _, _, err := tc.c.Resolve(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestResultsEncoder: each of vegeta's formats has its encoder; lbbench's
// own has none (the measurement is written whole at the end).
func TestResultsEncoder(t *testing.T) {
	for _, f := range []string{FormatVegeta, FormatVegetaJSON, FormatVegetaCSV} {
		if ResultsEncoder(f, &bytes.Buffer{}) == nil {
			t.Errorf("%s: no encoder", f)
		}
	}
	for _, f := range []string{FormatLbbench, "", "gob"} {
		if ResultsEncoder(f, &bytes.Buffer{}) != nil {
			t.Errorf("%q: an encoder", f)
		}
	}
}
