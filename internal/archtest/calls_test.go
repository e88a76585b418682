package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A report is computed once and formatted many times (docs/architecture.md,
// "Compute once, render many"): job.Report builds one reports.Doc, and the
// formats of package reports only format it. These rules check the calls
// in the module's source (tests excluded) that make that true: reports
// calls none of the judging functions of compare and claims, and each
// judging function is called from one place.

// reportsMayCall are the only functions of compare and claims package
// reports may call: counting outcomes, reading and writing verdicts, and
// the interval of one variant's runs in its summary (a spread, not a
// verdict). Their types, constants and methods it uses freely.
var reportsMayCall = map[string][]string{
	"claims":  {"Counts"},
	"compare": {"CountOutcomes", "Overall", "ReadVerdicts", "WriteVerdicts", "RunsInterval"},
}

// once is a function that must be called from exactly one function of the
// module, in; in == "" means from none outside its own package. own also
// forbids calls from inside its own package.
type once struct {
	fn, in string
	own    bool
}

// judgedOnce are the functions that compute a report, judge claims or
// judge a comparison, each called from one builder: per report written,
// summaries, claims and bursts are computed once (job.Report), and a
// signature change of a judging function has one caller to follow.
var judgedOnce = []once{
	{fn: "reports.Summarize", in: "job.Report", own: true},
	{fn: "claims.Judge"},
	{fn: "claims.JudgeWith", in: "job.Report"},
	{fn: "claims.BurstComparisons", in: "job.Report"},
	{fn: "claims.Family"},
	{fn: "claims.Suite", in: "job.JudgeSuite"},
	{fn: "claims.UndecidedAt", in: "job.Options.undecidedAt"},
	{fn: "compare.Compare", in: "job.verdicts"},
	{fn: "compare.Calibrate", in: "job.calibrate"},
	{fn: "compare.CalibratePaired", in: "job.calibrate"},
}

// source is the module's non-test Go files, parsed, by package path
// relative to the module.
type source map[string][]*ast.File

// parseModule parses every non-test Go file of the module's packages.
func parseModule(t *testing.T) source {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	fset := token.NewFileSet()
	src := source{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("go list line %q", line)
		}
		rel := strings.TrimPrefix(parts[0], module+"/")
		for _, name := range strings.Split(parts[2], ",") {
			if name == "" {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(parts[1], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			src[rel] = append(src[rel], f)
		}
	}
	if len(src["reports"]) == 0 || len(src["job"]) == 0 {
		t.Fatalf("found no source of reports or job in %d packages", len(src))
	}
	return src
}

// funcs returns the top-level functions (no methods) declared in pkg.
func (s source) funcs(pkg string) map[string]bool {
	out := map[string]bool{}
	for _, f := range s[pkg] {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out[fd.Name.Name] = true
			}
		}
	}
	return out
}

// use is one reference to a function of the module: fn ("claims.Judge")
// used in the function in ("job.Report"; "job.<package>" outside any).
type use struct{ fn, in string }

// uses returns every reference from pkg's files to a top-level function
// of another of the module's packages (pkg.Name), and pkg's calls of its
// own functions, by the name of the declaration they are in.
func (s source) uses(pkg string) []use {
	own := s.funcs(pkg)
	base := path.Base(pkg)
	declared := map[string]map[string]bool{} // s.funcs, by package, as needed
	isFunc := func(rel, name string) bool {
		if declared[rel] == nil {
			declared[rel] = s.funcs(rel)
		}
		return declared[rel][name]
	}
	var out []use
	for _, f := range s[pkg] {
		imports := map[string]string{} // local name: package relative to the module
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok {
				continue
			}
			name := path.Base(rel)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = rel
		}
		for _, d := range f.Decls {
			in := base + ".<package>"
			if fd, ok := d.(*ast.FuncDecl); ok {
				in = base + "." + fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) == 1 {
					in = base + "." + recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
				}
			}
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok {
						if rel, ok := imports[id.Name]; ok && isFunc(rel, n.Sel.Name) {
							out = append(out, use{fn: path.Base(rel) + "." + n.Sel.Name, in: in})
						}
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && own[id.Name] {
						out = append(out, use{fn: base + "." + id.Name, in: in})
					}
				}
				return true
			})
		}
	}
	return out
}

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvName(e.X)
	}
	return "?"
}

// checkReportsCalls returns every call of package reports into compare or
// claims that reportsMayCall does not allow.
func checkReportsCalls(s source) []string {
	var out []string
	for _, u := range s.uses("reports") {
		pkg, name, _ := strings.Cut(u.fn, ".")
		allowed, ruled := reportsMayCall[pkg]
		if ruled && !slices.Contains(allowed, name) {
			out = append(out, fmt.Sprintf("%s calls %s: reports formats what job judged (it may call only %v of %s)", u.in, u.fn, allowed, pkg))
		}
	}
	slices.Sort(out)
	return out
}

// checkOnce returns every breach of judgedOnce: a judging function used
// from another place than its builder, or not from it.
func checkOnce(s source) []string {
	var all []use
	for pkg := range s {
		all = append(all, s.uses(pkg)...)
	}
	var out []string
	for _, o := range judgedOnce {
		home, _, _ := strings.Cut(o.fn, ".")
		var at []string
		for _, u := range all {
			if u.fn != o.fn {
				continue
			}
			if from, _, _ := strings.Cut(u.in, "."); from == home && !o.own {
				continue // the package's own use of it
			}
			at = append(at, u.in)
		}
		slices.Sort(at)
		switch {
		case o.in == "" && len(at) > 0:
			out = append(out, fmt.Sprintf("%s is used in %v: nothing outside its package may call it", o.fn, at))
		case o.in != "" && (len(at) != 1 || at[0] != o.in):
			out = append(out, fmt.Sprintf("%s is used in %v: it must be called once, in %s, the one builder", o.fn, at, o.in))
		}
	}
	return out
}

// TestReportsOnlyFormats: package reports calls no judging function of
// compare or claims.
func TestReportsOnlyFormats(t *testing.T) {
	for _, v := range checkReportsCalls(parseModule(t)) {
		t.Error(v)
	}
}

// TestJudgedOnce: reports.Summarize, claims.Judge and
// claims.BurstComparisons are called once per report, by job.Report, and
// every judging function of compare and claims from one builder in job.
func TestJudgedOnce(t *testing.T) {
	for _, v := range checkOnce(parseModule(t)) {
		t.Error(v)
	}
}

// TestTheCallRulesCanFail plants, in the module's source, a renderer that
// judges claims and summarises, and a second builder: both rules report
// every planted call.
func TestTheCallRulesCanFail(t *testing.T) {
	s := parseModule(t)
	if got := s.uses("job"); !slices.Contains(got, use{fn: "claims.JudgeWith", in: "job.Report"}) {
		t.Fatalf("job's uses %v lack claims.JudgeWith in job.Report: the source is not read right", got)
	}
	plant := func(pkg, src string) source {
		f, err := parser.ParseFile(token.NewFileSet(), pkg+"/planted.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out := source{}
		for k, v := range s {
			out[k] = slices.Clone(v)
		}
		out[pkg] = append(out[pkg], f)
		return out
	}
	renderer := plant("reports", `package reports
import (
	"github.com/lbbench/lbbench/claims"
	cmp "github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)
func writeAgain(r *results.Results) {
	_ = claims.Judge(r)
	_, _ = cmp.Compare(nil, cmp.Options{})
	_, _ = Summarize(r)
	_ = claims.Counts(nil)
}
`)
	got := checkReportsCalls(renderer)
	for _, want := range []string{"reports.writeAgain calls claims.Judge", "reports.writeAgain calls compare.Compare"} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, want) }) {
			t.Errorf("planted %q, the rule reported %q", want, got)
		}
	}
	if slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, "claims.Counts") }) {
		t.Errorf("the rule refused an allowed call: %q", got)
	}
	got = checkOnce(renderer)
	for _, want := range []string{"claims.Judge is used in [reports.writeAgain]: nothing outside", "reports.Summarize is used in [job.Report reports.writeAgain]", "compare.Compare is used in [job.verdicts reports.writeAgain]"} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, want) }) {
			t.Errorf("planted %q, the rule reported %q", want, got)
		}
	}
	twice := plant("job", `package job
import (
	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/results"
)
func (o Options) judgeAgain(r *results.Results) int { return claims.Failed(claims.JudgeWith(r, claims.Options{})) }
var again = claims.BurstComparisons
`)
	got = checkOnce(twice)
	for _, want := range []string{"claims.JudgeWith is used in [job.Options.judgeAgain job.Report]", "claims.BurstComparisons is used in [job.<package> job.Report]"} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, want) }) {
			t.Errorf("planted %q, the rule reported %q", want, got)
		}
	}
}
