package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFuzzTargetsListed: make fuzz fuzzes exactly the fuzz targets of the
// tree. The Makefile's FUZZ_TARGETS (package:Target) must name every
// func FuzzX(*testing.F) of every _test.go file, once, and nothing else,
// so that no target runs only on its seeds.
func TestFuzzTargetsListed(t *testing.T) {
	listed := makefileFuzzTargets(t, filepath.Join("..", "..", "Makefile"))
	missing, extra := fuzzListDiff(treeFuzzTargets(t, filepath.Join("..", "..")), listed)
	for _, m := range missing {
		t.Errorf("%s is a fuzz target the Makefile's FUZZ_TARGETS does not list: make fuzz never fuzzes it", m)
	}
	for _, e := range extra {
		t.Errorf("FUZZ_TARGETS lists %s, which is not a fuzz target of the tree (or is listed twice)", e)
	}
	if len(listed) < 26 {
		t.Errorf("FUZZ_TARGETS lists %d targets; the tree had 26 when this test was written", len(listed))
	}
}

// TestFuzzListDiffCanFail: a target left out of the list, one listed that
// is gone, and one listed twice are all reported.
func TestFuzzListDiffCanFail(t *testing.T) {
	missing, extra := fuzzListDiff([]string{"a:FuzzX", "b:FuzzY"}, []string{"b:FuzzY", "b:FuzzY", "c:FuzzGone"})
	if !slices.Equal(missing, []string{"a:FuzzX"}) || !slices.Equal(extra, []string{"b:FuzzY", "c:FuzzGone"}) {
		t.Errorf("missing %v, extra %v", missing, extra)
	}
}

// fuzzListDiff returns the targets of tree not in listed, and the entries
// of listed that are not in tree or repeat an earlier one, each sorted.
func fuzzListDiff(tree, listed []string) (missing, extra []string) {
	seen := map[string]bool{}
	for _, l := range listed {
		if seen[l] || !slices.Contains(tree, l) {
			extra = append(extra, l)
		}
		seen[l] = true
	}
	for _, tt := range tree {
		if !seen[tt] {
			missing = append(missing, tt)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// treeFuzzTargets returns package:Target for every fuzz function of the
// module's test files (package as its directory relative to root).
func treeFuzzTargets(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && takesTestingF(fn) {
				out = append(out, filepath.ToSlash(dir)+":"+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// takesTestingF reports whether fn's only parameter is a *testing.F.
func takesTestingF(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F" && isIdent(sel.X, "testing")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// makefileFuzzTargets reads the FUZZ_TARGETS list of the Makefile: the
// words after "FUZZ_TARGETS =" up to the first line that does not end in
// a backslash.
func makefileFuzzTargets(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\nFUZZ_TARGETS =")
	if !ok {
		t.Fatalf("%s has no FUZZ_TARGETS", path)
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		cont := strings.HasSuffix(line, "\\")
		out = append(out, strings.Fields(strings.TrimSuffix(line, "\\"))...)
		if !cont {
			break
		}
	}
	return out
}
