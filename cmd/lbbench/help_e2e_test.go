package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// commandPaths lists every command of the tree under c, hidden ones too,
// as the words that run it.
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		p := append(append([]string{}, prefix...), sub.Name())
		out = append(out, p)
		out = append(out, commandPaths(sub, p)...)
	}
	return out
}

// flagLine is a flag in help output: "-x, --name ARG  usage" or
// "--name ARG  usage"; group 2 is the argument name, empty for a
// boolean.
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([\w-]+)((?: \S+)*?)\s{2,}\S`)

// argName is what an argument name may look like: one word (a type name
// such as duration, or an upper-case placeholder such as FILE or
// ENGINE=IMAGE), never a phrase lifted out of the usage by its backticks.
var argName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.=:/-]*$`)

// pflagTypeNames are the argument names pflag shows for some types,
// which mean nothing to a user: such a flag names its argument in its usage
// (`KEY=VALUE`).
var pflagTypeNames = map[string]bool{"stringToString": true, "stringArray": true, "stringToInt": true, "stringToInt64": true}

// TestEveryCommandHelp runs "--help" and "-h" of every command of the real
// binary (hidden ones and those that pass their arguments through
// included): exit 0, a usage, and every flag's argument one sane word.
func TestEveryCommandHelp(t *testing.T) {
	t.Parallel() // measures nothing timing-sensitive
	paths := append([][]string{{}}, commandPaths(newRootCmd(), nil)...)
	if len(paths) < 15 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		for _, h := range []string{"--help", "-h"} {
			name := strings.Join(append([]string{"lbbench"}, p...), " ") + " " + h
			t.Run(name, func(t *testing.T) {
				r := lb(t, append(append([]string{}, p...), h)...)
				out := r.out
				if r.code != 0 {
					t.Fatalf("%s: exit %d\n%s", name, r.code, out)
				}
				if !strings.Contains(string(out), "Usage:") {
					t.Fatalf("%s printed no usage:\n%s", name, out)
				}
				flags := 0
				inFlags := false // in a "Flags:" or "Global Flags:" section
				for _, line := range strings.Split(string(out), "\n") {
					switch {
					case strings.HasSuffix(line, "Flags:"):
						inFlags = true
						continue
					case strings.TrimSpace(line) == "":
						inFlags = false
					}
					if !inFlags {
						continue
					}
					m := flagLine.FindStringSubmatch(line)
					if m == nil {
						continue
					}
					flags++
					if arg := strings.TrimSpace(m[2]); arg != "" && (!argName.MatchString(arg) || pflagTypeNames[arg]) {
						t.Errorf("%s: --%s shows its argument as %q: %s", name, m[1], arg, line)
					}
				}
				if flags == 0 {
					t.Errorf("%s listed no flag (not even --help):\n%s", name, out)
				}
			})
		}
	}
}

// TestVersion: --version names the version, the commit set at build time
// and the Go version.
func TestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a second lbbench")
	}
	t.Parallel() // a build and a line of output: nothing measured
	b := filepath.Join(t.TempDir(), "lbbench")
	build := exec.Command("go", "build", "-ldflags", "-X main.commit=0123abc -X main.version=v9.8.7", "-o", b, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(b, "--version").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	want := "lbbench v9.8.7, commit 0123abc, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
}

// TestVersionFromBuildInfo: without a commit set at build time, the VCS
// revision go build stamped is shown, marked dirty when the tree was.
func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "4cf383e0"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name, v, c string
		bi         *debug.BuildInfo
		want       string
	}{
		{"vcs dirty", "dev", "", bi, "lbbench dev, commit 4cf383e0-dirty, "},
		{"ldflags win", "dev", "abc", bi, "lbbench dev, commit abc, "},
		{"go install", "dev", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "lbbench v1.2.3, commit unknown, "},
		{"nothing", "dev", "", nil, "lbbench dev, commit unknown, "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := versionFrom(tc.v, tc.c, tc.bi, tc.bi != nil)
			if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
				t.Errorf("got %q, want %q...%s", got, tc.want, runtime.Version())
			}
		})
	}
}
