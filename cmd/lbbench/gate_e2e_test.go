package main

// End-to-end tests of the performance gate as CI runs it: scripts/gate,
// whose exit status is the verdict, and the step of the perf workflow that
// calls it, rehearsed from .github/workflows/perf.yml itself. They run in
// a throwaway git repository of this tree (gateRepo), with a gate of
// seconds (testdata/gate-tiny.yaml) in place of the gate scenario's two
// minutes.

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
)

const (
	// tinyGate is the gate of seconds, from the repository's top.
	tinyGate = "cmd/lbbench/testdata/gate-tiny.yaml"
	// tinyGateFlags make it a gate: until decided, with up to 5 rounds
	// (an A/A that the first look leaves open gets two more), and a run
	// the generator fell behind in made again once, as the real gate.
	tinyGateFlags = "--until-decided --max-rounds 5 --retry-invalid 1"
	// workflowFile is the workflow rehearsed, from the repository's top.
	workflowFile = ".github/workflows/perf.yml"
)

// requireGateTools skips the test when git or bash is missing, or fails it
// when CI is set: nothing may skip there.
func requireGateTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI is set)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// gateRepository is a git repository of this tree, as a pull request's
// checkout is: a base commit, and the head commit after it. The head
// changes no Go file, so that both builds of lbbench come from the build
// cache after the first.
type gateRepository struct {
	dir  string // the work tree, at the head commit
	base string // the base commit's hash
}

// gateRepoOnce makes the throwaway repository once (gateRepo).
var gateRepoOnce = sync.OnceValues(func() (gateRepository, error) {
	return makeGateRepo(filepath.Join(filepath.Dir(bin), "gate-repo"))
})

// gateRepo returns the throwaway repository the tests of this file share,
// made by the first of them that asks: the files of this work tree that
// git knows or would add (tracked, or untracked and not ignored; a
// deleted file is left out), with their modes, committed as the base,
// then a commit that adds a file as the head. It lives beside the test
// binary's lbbench, removed with it after the tests.
func gateRepo(t *testing.T) gateRepository {
	t.Helper()
	repo, err := gateRepoOnce()
	if err != nil {
		t.Fatalf("the throwaway repository: %v", err)
	}
	return repo
}

func makeGateRepo(dir string) (gateRepository, error) {
	list, err := exec.Command("git", "-C", "../..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return gateRepository{}, fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join("../..", f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return gateRepository{}, err
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return gateRepository{}, err
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			return gateRepository{}, err
		}
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	steps := [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}}
	for _, args := range steps {
		if _, err := git(args...); err != nil {
			return gateRepository{}, err
		}
	}
	base, err := git("rev-parse", "HEAD")
	if err != nil {
		return gateRepository{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD.txt"), []byte("the pull request's head\n"), 0o644); err != nil {
		return gateRepository{}, err
	}
	for _, args := range [][]string{{"add", "HEAD.txt"}, {"commit", "-q", "-m", "head"}} {
		if _, err := git(args...); err != nil {
			return gateRepository{}, err
		}
	}
	return gateRepository{dir: dir, base: base}, nil
}

// TestGateExitStatus runs scripts/gate in a throwaway repository on a gate
// of seconds and checks that its exit status is the verdict, unchanged
// (0 for the tree against itself is TestGateWorkflowRehearsal's, through
// the workflow's own step): 1 when this build is 20% slower
// (--inject-slowdown 1.2), 3 when the budget lets a single round run (too
// few to decide), and 2 for an error: a base that is no commit, no BASE,
// a build that fails. The lbbench comparison's markdown goes to the
// file GITHUB_STEP_SUMMARY names.
func TestGateExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds lbbench in a throwaway repository and runs gates of seconds")
	}
	requireGateTools(t)
	repo := gateRepo(t)
	gate := filepath.Join(repo.dir, "scripts", "gate")
	for _, tc := range []struct {
		name string
		env  []string // after BASE, SCENARIO, GATE_FLAGS
		args []string
		want int
		// outcome is the overall verdict of verdicts.json ("" when the
		// gate stops before one); says, a line of the output.
		outcome compare.Outcome
		says    string
	}{
		{name: "regression: this build 20% slower", args: []string{"--inject-slowdown", "1.2"}, want: 1, outcome: compare.Fail, says: "verdict: FAIL"},
		{name: "inconclusive: one round within the budget", env: []string{"GATE_FLAGS=" + tinyGateFlags + " --budget 1s"}, want: 3, outcome: compare.Inconclusive,
			says: "rounds: 1 of at most 5: not decided after 1 rounds: another round"},
		{name: "error: a base that is no commit", env: []string{"BASE=no-such-ref"}, want: 2, says: `"no-such-ref" is not a commit`},
		{name: "error: no base", env: []string{"BASE="}, want: 2, says: "gate: BASE is required"},
		{name: "error: the build fails", env: []string{"GO=false"}, want: 2, says: "gate: building bin/lbbench failed (exit 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			summary := filepath.Join(t.TempDir(), "summary.md")
			env := append([]string{"BASE=" + repo.base, "SCENARIO=" + tinyGate, "GATE_FLAGS=" + tinyGateFlags, "OUT=" + out, "GO=go",
				"GITHUB_STEP_SUMMARY=" + summary}, tc.env...)
			r := invocation{exe: gate, args: tc.args, env: env, dir: repo.dir}.run(t)
			if r.code != tc.want || !strings.Contains(r.out, tc.says) {
				t.Fatalf("exit %d, want %d saying %q:\n%s", r.code, tc.want, tc.says, r.out)
			}
			waitNoGateProcs(t)
			if tc.outcome == "" {
				return
			}
			vs, err := compare.ReadVerdicts(filepath.Join(out, compare.VerdictsFileName))
			if err != nil || compare.Overall(vs) != tc.outcome {
				t.Errorf("verdicts %+v (%v), want %s overall", vs, err, tc.outcome)
			}
			if md, err := os.ReadFile(summary); err != nil || !strings.Contains(string(md), "### lbbench compare: gate-tiny: baseline "+repo.base) {
				t.Errorf("step summary (%v):\n%s", err, md)
			}
			if tc.outcome == compare.Inconclusive {
				res, err := results.ReadFile(filepath.Join(out, "results.json"))
				if err != nil || res.Stop == nil || res.Stop.Rounds != 1 || res.Stop.Decided {
					t.Errorf("stop %+v (%v), want undecided after 1 round", res.Stop, err)
				}
			}
		})
	}
}

// waitNoGateProcs waits up to 5 s for the processes t started (testEnv)
// to be gone, whatever their program (the repository's bin/lbbench, the
// baseline's build, a worker), and fails t when some are left.
func waitNoGateProcs(t *testing.T) {
	t.Helper()
	mine := func(p testkit.Proc) bool {
		name := testkit.Getenv(testkit.Environ(p.PID), testEnv)
		return name == t.Name() || strings.HasPrefix(name, t.Name()+"/")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		procs := testkit.LiveProcs(mine)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind:\n%s", strings.Join(testkit.Strings(procs), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// workflow is what the tests read of a GitHub workflow.
type workflow struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []workflowStep    `yaml:"steps"`
	} `yaml:"jobs"`
}

// workflowStep is one step of a job.
type workflowStep struct {
	ID    string            `yaml:"id"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	With  map[string]any    `yaml:"with"`
}

// gateJob reads the perf workflow and returns its job's environment, the
// step that runs scripts/gate and the step that uploads the artifact.
func gateJob(t *testing.T) (env map[string]string, gate, upload workflowStep) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", workflowFile))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	found := 0
	for name, job := range w.Jobs {
		for _, s := range job.Steps {
			switch {
			case strings.Contains(s.Run, "scripts/gate"):
				env, gate = job.Env, s
				found++
			case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
				upload = s
			}
		}
		if found > 1 {
			t.Fatalf("%s: job %s: more than one step runs scripts/gate", workflowFile, name)
		}
	}
	if found == 0 || upload.Uses == "" {
		t.Fatalf("%s: no step runs scripts/gate, or none uploads an artifact", workflowFile)
	}
	return env, gate, upload
}

// expression is a GitHub expression, ${{ ... }}.
var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expand replaces the expressions of s with their values in ctx, failing
// t on one it does not know.
func expand(t *testing.T, s string, ctx map[string]string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(e string) string {
		name := expression.FindStringSubmatch(e)[1]
		v, ok := ctx[name]
		if !ok {
			t.Fatalf("%s: the test knows no value of %s", workflowFile, e)
		}
		return v
	})
}

// stepEnv is the environment a step of the job runs with, beyond the
// runner's: the job's, then the step's, their expressions given by ctx.
func stepEnv(t *testing.T, job map[string]string, step workflowStep, ctx map[string]string) []string {
	t.Helper()
	var env []string
	for _, m := range []map[string]string{job, step.Env} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := expand(t, m[k], ctx)
			env = append(env, k+"="+v)
			ctx["env."+k] = v
		}
	}
	return env
}

// runStep runs a step's script with bash as the runner does (a step's
// "shell: bash" runs "bash --noprofile --norc -eo pipefail", without
// shell "bash -e") in dir, with env added to the test's environment.
func runStep(t *testing.T, step workflowStep, dir string, env []string) outcome {
	t.Helper()
	script := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(script, []byte(step.Run), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string
	switch step.Shell {
	case "bash":
		args = []string{"--noprofile", "--norc", "-eo", "pipefail", script}
	case "":
		args = []string{"-e", script}
	default:
		t.Fatalf("%s: step %q runs in %q; the test runs bash only", workflowFile, step.ID, step.Shell)
	}
	return invocation{exe: "bash", args: args, env: env, dir: dir}.run(t)
}

// TestGateWorkflowRehearsal runs the perf workflow's gate step, as written
// in .github/workflows/perf.yml, in a throwaway repository whose head
// commit follows the base, with the environment the workflow gives it
// (the base commit's hash for the pull request's, a file for the job
// summary) and a gate of seconds (SCENARIO and GATE_FLAGS, which
// scripts/gate takes from the environment). The tree against its base
// must pass: scripts/gate exits 0 (the job summary gives its status) and
// so does the step, which writes the answer and lbbench's verdict table
// into the job summary; every path the upload step names must then
// exist. This is the gate's exit 0 of TestGateExitStatus's four.
func TestGateWorkflowRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds lbbench in a throwaway repository and runs a gate of seconds")
	}
	requireGateTools(t)
	repo := gateRepo(t)
	jobEnv, gate, upload := gateJob(t)
	summary := filepath.Join(t.TempDir(), "summary.md")
	ctx := map[string]string{"github.event.pull_request.base.sha": repo.base}
	env := append(stepEnv(t, jobEnv, gate, ctx), "GITHUB_STEP_SUMMARY="+summary, "SCENARIO="+tinyGate, "GATE_FLAGS="+tinyGateFlags)
	r := runStep(t, gate, repo.dir, env)
	waitNoGateProcs(t)
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job summary:\n%s", md)
	// The tree against its own base passes: scripts/gate exited 0 (the
	// summary says so), and so did the step, with no annotation.
	if r.code != 0 {
		t.Fatalf("the step exited %d, want 0 (a pass):\n%s", r.code, r.out)
	}
	if answer, _, _ := strings.Cut(string(md), "\n"); answer != "### Performance gate: pass: no regression against the base commit" || strings.Contains(r.stdout, "::warning ") {
		t.Errorf("job summary's answer %q, want a pass (the step's output:\n%s)", answer, r.out)
	}
	for _, want := range []string{"Base " + repo.base[:12] + "; exit status 0 ", "Rounds: ", "### lbbench compare: gate-tiny: baseline " + repo.base} {
		if !strings.Contains(string(md), want) {
			t.Errorf("job summary lacks %q", want)
		}
	}

	paths, _ := upload.With["path"].(string)
	if strings.TrimSpace(paths) == "" {
		t.Fatalf("%s: the upload step names no path", workflowFile)
	}
	for line := range strings.Lines(paths) {
		p := strings.TrimSpace(expand(t, line, ctx))
		if p == "" || strings.HasPrefix(p, "!") {
			continue
		}
		if m, err := filepath.Glob(filepath.Join(repo.dir, p)); err != nil || len(m) == 0 {
			t.Errorf("the upload step's %s matches nothing after the gate (%v)", p, err)
		}
	}
}

// gateStub stands in for scripts/gate: it prints a stop line and a verdict
// line as lbbench does, appends a table to the job summary, and exits
// with $STUB_STATUS.
const gateStub = `#!/bin/sh
echo "rounds: 3 of at most 6: stub"
echo "verdict: STUB"
echo "### lbbench compare: stub table" >>"$GITHUB_STEP_SUMMARY"
exit "$STUB_STATUS"
`

// TestGateWorkflowActsOnTheStatus runs the perf workflow's gate step with
// a stub in place of scripts/gate and checks what the job makes of each
// exit status: pass and inconclusive (with a warning) pass the job, a
// regression and an error (with an error annotation) fail it; the answer
// heads the job summary, before lbbench's table.
func TestGateWorkflowActsOnTheStatus(t *testing.T) {
	t.Parallel()
	requireGateTools(t)
	jobEnv, gate, _ := gateJob(t)
	for _, tc := range []struct {
		status, want int
		answer       string
		annotation   string
	}{
		{0, 0, "pass: no regression against the base commit", ""},
		{1, 1, "regression: slower or costlier than the base commit", "::error title=Performance regression::"},
		{2, 2, "error (exit 2): the gate could not judge", "::error title=Performance gate error::"},
		{3, 0, "inconclusive: not decided within the gate's rounds (passed)", "::warning title=Performance gate inconclusive::"},
		{5, 5, "error (exit 5): the gate could not judge", "::error title=Performance gate error::"},
	} {
		t.Run(fmt.Sprint("exit ", tc.status), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "scripts", "gate"), []byte(gateStub), 0o755); err != nil {
				t.Fatal(err)
			}
			summary := filepath.Join(t.TempDir(), "summary.md")
			ctx := map[string]string{"github.event.pull_request.base.sha": strings.Repeat("ab", 20)}
			env := append(stepEnv(t, jobEnv, gate, ctx), "GITHUB_STEP_SUMMARY="+summary, fmt.Sprint("STUB_STATUS=", tc.status))
			r := runStep(t, gate, dir, env)
			if r.code != tc.want {
				t.Errorf("the step exited %d, want %d:\n%s", r.code, tc.want, r.out)
			}
			annotated := strings.Contains(r.stdout, "::error ") || strings.Contains(r.stdout, "::warning ")
			if (tc.annotation != "" && !strings.Contains(r.stdout, tc.annotation)) || (tc.annotation == "" && annotated) {
				t.Errorf("annotation: want %q in the output:\n%s", tc.annotation, r.out)
			}
			md, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(md), "\n")
			if lines[0] != "### Performance gate: "+tc.answer ||
				!strings.Contains(string(md), "\nRounds: 3 of at most 6: stub\n") ||
				!strings.Contains(string(md), "\n### lbbench compare: stub table\n") {
				t.Errorf("job summary:\n%s", md)
			}
		})
	}
}
