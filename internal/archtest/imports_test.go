package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lbbench/lbbench"

// pkg is one package of the module as go list sees it, without its tests.
type pkg struct {
	name          string   // package name; "main" for a program
	imports, deps []string // full import paths
}

// listModule runs go list over the module.
func listModule(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 4 {
			t.Fatalf("go list line %q", line)
		}
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		pkgs[strings.TrimPrefix(parts[0], module+"/")] = pkg{name: parts[1], imports: split(parts[2]), deps: split(parts[3])}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// own returns the module's packages among paths, relative to the module.
func own(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			out = append(out, rel)
		}
	}
	return out
}

// matches reports whether path is pattern, or under it when pattern ends
// in "/*".
func matches(path, pattern string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

func matchesAny(path string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(path, p) })
}

// TestLayers: the packages that read numbers (reports, model) depend on the
// results contract, never on the machinery that makes numbers; the contract
// and the spec packages depend on almost nothing.
func TestLayers(t *testing.T) {
	pkgs := listModule(t)
	machinery := []string{"harness", "targets/*", "engines", "docker", "topologies", "baseline", "cmd/*"}
	for _, tc := range []struct {
		pkg string
		// allowed lists the only module packages it may depend on (nil:
		// any but forbidden); forbidden those it must not depend on.
		allowed, forbidden []string
		// noVegeta forbids the load generator's library.
		noVegeta bool
	}{
		{pkg: "reports", forbidden: machinery, noVegeta: true},
		{pkg: "model", forbidden: machinery, noVegeta: true},
		{pkg: "results", allowed: []string{"scenario", "workloads", "internal/*"}, noVegeta: true},
		{pkg: "scenario", allowed: []string{"workloads", "internal/*"}, noVegeta: true},
		{pkg: "workloads", allowed: []string{"internal/*"}, noVegeta: true},
		{pkg: "balance", allowed: []string{}, noVegeta: true},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			p, ok := pkgs[tc.pkg]
			if !ok {
				t.Fatalf("no package %s", tc.pkg)
			}
			for _, d := range own(p.deps) {
				if tc.allowed != nil && !matchesAny(d, tc.allowed) {
					t.Errorf("%s depends on %s; it may depend only on %v", tc.pkg, d, tc.allowed)
				}
				if matchesAny(d, tc.forbidden) {
					t.Errorf("%s depends on %s", tc.pkg, d)
				}
			}
			if tc.noVegeta {
				for _, d := range p.deps {
					if strings.HasPrefix(d, "github.com/tsenart/vegeta") {
						t.Errorf("%s depends on %s", tc.pkg, d)
					}
				}
			}
		})
	}
}

// TestOnlyCmdUsesTheCLI: flags, signals and exit codes belong to programs
// (cmd/lbbench, and the screenshot tool); library packages take options
// and a context.
func TestOnlyCmdUsesTheCLI(t *testing.T) {
	for path, p := range listModule(t) {
		if p.name == "main" {
			continue
		}
		for _, imp := range p.imports {
			if strings.HasPrefix(imp, "github.com/spf13/cobra") || strings.HasPrefix(imp, "github.com/spf13/pflag") || imp == "os/signal" {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	}
}

// TestTheRulesCanFail keeps the checks above honest: they do see the
// dependencies that the machinery itself has.
func TestTheRulesCanFail(t *testing.T) {
	pkgs := listModule(t)
	h := own(pkgs["harness"].deps)
	if !slices.Contains(h, "targets/balancer") || !slices.Contains(h, "results") {
		t.Fatalf("harness's dependencies %v lack targets/balancer or results: go list is not read right", h)
	}
	if !matchesAny("targets/prefork", []string{"targets/*"}) || matchesAny("targetsx", []string{"targets/*"}) {
		t.Fatal("matchesAny")
	}
}
