package archtest

import (
	"fmt"
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

// thirdParty returns the paths among paths that are neither the module's
// nor the standard library's (whose first element has no dot).
func thirdParty(paths []string) []string {
	var out []string
	for _, p := range paths {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(p, module+"/") && p != module {
			out = append(out, p)
		}
	}
	return out
}

// matches reports whether path is pattern, or under it when pattern ends
// in "/*", or either when it ends in "/**".
func matches(path, pattern string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	if prefix, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

func matchesAny(path string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(path, p) })
}

// rule is one import rule over the module's packages. It applies to the
// packages matching pkg; deps says whether it is about every dependency
// (transitive) or the direct imports only.
type rule struct {
	name string
	pkg  string
	deps bool
	// allowed lists the only module packages it may import (nil: any
	// but forbidden); forbidden those it must not.
	allowed, forbidden []string
	// thirdParty lists the only third-party modules it may import
	// (prefixes; nil: any); noVegeta forbids the load generator's library.
	thirdParty []string
	noVegeta   bool
	// noCLI forbids cobra, pflag and os/signal.
	noCLI bool
	// programs makes pkg "**" match programs too (package main), which
	// it otherwise leaves out.
	programs bool
}

// machinery is what makes numbers: the readers of numbers must not
// depend on it.
var machinery = []string{"harness", "loadgen", "driver/**", "targets/*", "engines", "topologies", "baseline", "cmd/*"}

// rules are lbbench's layering rules (README, "Layout", and each package's
// doc.go). Add every new rule here; TestTheRulesCanFail shows each one
// catching a violation.
var rules = []rule{
	{name: "reports reads numbers, never makes them", pkg: "reports", deps: true, forbidden: machinery, noVegeta: true},
	{name: "reports renders; claims is the one reader of the model", pkg: "reports", forbidden: []string{"model", "stats"}},
	{name: "compare reads numbers, not the model, and does not render", pkg: "compare", deps: true, forbidden: append(slices.Clone(machinery), "model", "reports", "claims"), noVegeta: true},
	{name: "claims judges, does not render", pkg: "claims", deps: true, forbidden: append(slices.Clone(machinery), "reports"), noVegeta: true},
	{name: "stats imports nothing of lbbench", pkg: "stats", deps: true, allowed: []string{}, noVegeta: true},
	{name: "model writes results without the machinery", pkg: "model", deps: true, forbidden: machinery, noVegeta: true},
	{name: "results is the contract", pkg: "results", deps: true, allowed: []string{"scenario", "workloads", "internal/*"}, noVegeta: true},
	{name: "scenario is a spec", pkg: "scenario", deps: true, allowed: []string{"workloads", "internal/*"}, noVegeta: true},
	{name: "workloads is a spec", pkg: "workloads", deps: true, allowed: []string{"internal/*"}, noVegeta: true},
	{name: "balance is a leaf", pkg: "balance", deps: true, allowed: []string{}, noVegeta: true},
	{name: "harness knows interfaces, not targets, drivers or the generator, not even through another package", pkg: "harness", deps: true, forbidden: []string{"targets/*", "driver/**", "loadgen", "engines", "topologies"}},
	{name: "loadgen imports only workloads, results, internal and vegeta", pkg: "loadgen", allowed: []string{"workloads", "results", "internal/*"}, thirdParty: []string{"github.com/tsenart/vegeta/"}},
	{name: "drivers do not reach the readers of numbers", pkg: "driver/**", deps: true, forbidden: []string{"reports", "compare", "claims", "model", "cmd/*"}},
	{name: "a driver shares code through the driver kit, never with another driver", pkg: "driver/*", deps: true, forbidden: []string{"driver/*"}},
	{name: "only programs use the CLI", pkg: "**", noCLI: true},
	{name: "the test kit imports nothing of lbbench", pkg: "internal/testkit", deps: true, allowed: []string{}, noVegeta: true},
	{name: "only tests import the test kit", pkg: "**", programs: true, deps: true, forbidden: []string{"internal/testkit/**"}},
}

// applies reports whether r is about the package at path (p.name is
// "main" for programs, which "**" leaves out unless r.programs).
func (r rule) applies(path string, p pkg) bool {
	if r.pkg == "**" {
		return p.name != "main" || r.programs
	}
	return matches(path, r.pkg)
}

// check returns r's violations among pkgs.
func (r rule) check(pkgs map[string]pkg) []string {
	var out []string
	for path, p := range pkgs {
		if !r.applies(path, p) {
			continue
		}
		list := p.imports
		if r.deps {
			list = p.deps
		}
		for _, d := range own(list) {
			if r.allowed != nil && !matchesAny(d, r.allowed) {
				out = append(out, fmt.Sprintf("%s depends on %s; it may depend only on %v", path, d, r.allowed))
			}
			if matchesAny(d, r.forbidden) {
				out = append(out, fmt.Sprintf("%s depends on %s", path, d))
			}
		}
		for _, d := range thirdParty(list) {
			switch {
			case r.noVegeta && strings.HasPrefix(d, "github.com/tsenart/vegeta"):
				out = append(out, fmt.Sprintf("%s depends on %s, the load generator's library", path, d))
			case r.thirdParty != nil && !slices.ContainsFunc(r.thirdParty, func(pre string) bool { return strings.HasPrefix(d, pre) }):
				out = append(out, fmt.Sprintf("%s depends on %s; of third-party modules it may use only %v", path, d, r.thirdParty))
			}
		}
		if r.noCLI {
			for _, imp := range p.imports {
				if strings.HasPrefix(imp, "github.com/spf13/cobra") || strings.HasPrefix(imp, "github.com/spf13/pflag") || imp == "os/signal" {
					out = append(out, fmt.Sprintf("%s imports %s", path, imp))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestRules checks every rule on the module.
func TestRules(t *testing.T) {
	pkgs := listModule(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			found := false
			for path, p := range pkgs {
				found = found || r.applies(path, p)
			}
			if !found {
				t.Fatalf("no package matches %q: the rule checks nothing", r.pkg)
			}
			for _, v := range r.check(pkgs) {
				t.Error(v)
			}
		})
	}
}

// TestTheRulesCanFail keeps the rules honest: each one, run on the
// module's packages with one violation planted, reports it; and go list
// is read right (harness's own dependencies are where they should be).
func TestTheRulesCanFail(t *testing.T) {
	pkgs := listModule(t)
	if h := own(pkgs["harness"].imports); !slices.Contains(h, "results") || !slices.Contains(h, "scenario") {
		t.Fatalf("harness's imports %v lack results or scenario: go list is not read right", h)
	}
	// violations lists one import r must refuse for each of its
	// constraints.
	violations := func(r rule) []string {
		var bad []string
		if r.noCLI {
			bad = append(bad, "github.com/spf13/cobra")
		}
		if r.noVegeta {
			bad = append(bad, "github.com/tsenart/vegeta/v12/lib")
		}
		if r.thirdParty != nil {
			bad = append(bad, "example.com/forbidden")
		}
		if r.allowed != nil {
			bad = append(bad, module+"/not-allowed")
		}
		for _, f := range r.forbidden {
			p := strings.TrimSuffix(strings.TrimSuffix(f, "/**"), "/*")
			if strings.HasSuffix(f, "/*") {
				p += "/x"
			}
			bad = append(bad, module+"/"+p)
		}
		return bad
	}
	// plant returns a copy of pkgs in which one package r applies to
	// imports bad.
	plant := func(r rule, bad string) map[string]pkg {
		out := map[string]pkg{}
		planted := false
		for path, p := range pkgs {
			if !planted && r.applies(path, p) {
				p.imports = append(slices.Clone(p.imports), bad)
				p.deps = append(slices.Clone(p.deps), bad)
				planted = true
			}
			out[path] = p
		}
		return out
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			bads := violations(r)
			if len(bads) == 0 {
				t.Fatal("the rule has no constraint")
			}
			for _, bad := range bads {
				got := r.check(plant(r, bad))
				if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, strings.TrimPrefix(bad, module+"/")) }) {
					t.Errorf("planted %s, the rule reported %q", bad, got)
				}
			}
		})
	}
	if !matches("targets/prefork", "targets/*") || matches("targetsx", "targets/*") || !matches("driver", "driver/**") || !matches("driver/local", "driver/**") {
		t.Fatal("matches")
	}
}
