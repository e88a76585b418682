package setuptest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/testkit"
)

// realTools are the programs setup.sh runs that are not bash builtins. They
// are the only real programs on the script's PATH, so nginx, HAProxy,
// Chromium, wrk, java, xmllint, shellcheck, gunicorn and uvicorn always look missing
// unless a case stubs them in (and the HdrHistogram jar unless a case puts
// it in the Java library directory).
var realTools = []string{"find", "head", "id", "tee", "chmod", "rm", "env"}

// aptGetStub records each call's arguments, one call a line, to
// $STUB_APT_LOG, and on install notes whether the policy file was in place
// (and executable) and what DEBIAN_FRONTEND was. It fails the install when
// $STUB_APT_FAIL is set.
const aptGetStub = `#!/bin/sh
printf '%s\n' "$*" >>"$STUB_APT_LOG"
if [ "$1" = install ]; then
  if [ -x "$LBBENCH_POLICY_RC" ]; then
    echo "policy=present" >>"$STUB_APT_LOG"
  else
    echo "policy=absent" >>"$STUB_APT_LOG"
  fi
  echo "frontend=$DEBIAN_FRONTEND" >>"$STUB_APT_LOG"
  if [ -n "$STUB_APT_FAIL" ]; then
    echo "apt-get stub: failing as told" >&2
    exit 100
  fi
fi
exit 0
`

// sudoStub records that it ran and runs its arguments.
const sudoStub = `#!/bin/sh
echo "$1" >>"$STUB_SUDO_LOG"
exec "$@"
`

// idStub reports an ordinary user, so the script goes through sudo.
const idStub = `#!/bin/sh
echo 1000
`

const presentStub = "#!/bin/sh\nexit 0\n"

const preexistingPolicy = "#!/bin/sh\n# pre-existing policy, must survive\nexit 101\n"

func scriptPath(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	p := filepath.Join(filepath.Dir(file), "..", "setup.sh")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("setup.sh: %v", err)
	}
	return p
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// toolsDir makes a directory of symlinks to the real tools the script needs.
func toolsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tools")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range realTools {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not found: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestSetup(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	script := scriptPath(t)
	tools := toolsDir(t)

	const (
		update     = "update -qq"
		installAll = "install -y -qq --no-install-recommends nginx haproxy chromium wrk libhdrhistogram-java default-jre-headless libxml2-utils shellcheck gunicorn uvicorn etcd-server docker-registry containernetworking-plugins"
	)
	// Everything setup.sh looks for on PATH, as installed programs.
	allOnPath := []string{"nginx", "haproxy", "chromium", "wrk", "java", "xmllint", "shellcheck", "gunicorn", "uvicorn", "etcd", "docker-registry"}

	tests := []struct {
		name       string
		policy     bool     // policy-rc.d exists before the run
		freshLists bool     // apt lists were refreshed less than a day ago
		aptFail    bool     // apt-get install fails
		nonRoot    bool     // id -u reports an ordinary user
		onPath     []string // programs stubbed onto PATH as already installed
		inSbin     []string // programs stubbed into the sbin dir
		cni        bool     // the CNI bridge plugin is in the CNI directory
		jar        bool     // hdrhistogram.jar is in the Java library dir
		wantFail   bool
		wantApt    []string // apt-get log lines, in order; nil: never called
		wantSudo   bool
	}{
		{
			name:    "policy present",
			policy:  true,
			wantApt: []string{update, installAll, "policy=present", "frontend=noninteractive"},
		},
		{
			name:    "policy absent",
			wantApt: []string{update, installAll, "policy=present", "frontend=noninteractive"},
		},
		{
			name:     "install fails with policy absent",
			aptFail:  true,
			wantFail: true,
			wantApt:  []string{update, installAll, "policy=present", "frontend=noninteractive"},
		},
		{
			name:     "install fails with policy present",
			policy:   true,
			aptFail:  true,
			wantFail: true,
			wantApt:  []string{update, installAll, "policy=present", "frontend=noninteractive"},
		},
		{
			name:   "nothing missing",
			onPath: allOnPath,
			jar:    true,
			cni:    true,
		},
		{
			name:   "nothing missing, proxies only in sbin",
			onPath: allOnPath[2:],
			inSbin: []string{"nginx", "haproxy"},
			jar:    true,
			cni:    true,
		},
		{
			name:       "only wrk missing, fresh lists",
			policy:     true,
			freshLists: true,
			onPath:     []string{"nginx", "chromium", "java", "xmllint", "shellcheck", "gunicorn", "uvicorn", "etcd", "docker-registry"},
			inSbin:     []string{"haproxy"},
			jar:        true,
			cni:        true,
			wantApt:    []string{"install -y -qq --no-install-recommends wrk", "policy=present", "frontend=noninteractive"},
		},
		{
			name:       "only the jar missing: java alone is not enough",
			freshLists: true,
			onPath:     allOnPath,
			cni:        true,
			wantApt:    []string{"install -y -qq --no-install-recommends libhdrhistogram-java", "policy=present", "frontend=noninteractive"},
		},
		{
			name:       "only the test cluster's etcd, registry and CNI plugins missing",
			freshLists: true,
			onPath:     allOnPath[:len(allOnPath)-2],
			jar:        true,
			wantApt:    []string{"install -y -qq --no-install-recommends etcd-server docker-registry containernetworking-plugins", "policy=present", "frontend=noninteractive"},
		},
		{
			name:       "the JRE, xmllint, shellcheck and the Python servers missing",
			policy:     true,
			freshLists: true,
			onPath:     []string{"nginx", "haproxy", "chromium", "wrk", "etcd", "docker-registry"},
			jar:        true,
			cni:        true,
			wantApt:    []string{"install -y -qq --no-install-recommends default-jre-headless libxml2-utils shellcheck gunicorn uvicorn", "policy=present", "frontend=noninteractive"},
		},
		{
			name:     "not root, policy present, install fails",
			nonRoot:  true,
			policy:   true,
			aptFail:  true,
			wantFail: true,
			wantApt:  []string{update, installAll, "policy=present", "frontend=noninteractive"},
			wantSudo: true,
		},
		{
			name:     "not root goes through sudo",
			nonRoot:  true,
			wantApt:  []string{update, installAll, "policy=present", "frontend=noninteractive"},
			wantSudo: true,
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			stubs := filepath.Join(tmp, "stubs")
			sbin := filepath.Join(tmp, "sbin")
			lists := filepath.Join(tmp, "lists")
			javaLibs := filepath.Join(tmp, "java")
			cniBin := filepath.Join(tmp, "cni")
			for _, d := range []string{stubs, sbin, lists, javaLibs, cniBin} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			policy := filepath.Join(sbin, "policy-rc.d")
			aptLog := filepath.Join(tmp, "apt.log")
			sudoLog := filepath.Join(tmp, "sudo.log")

			writeExec(t, filepath.Join(stubs, "apt-get"), aptGetStub)
			writeExec(t, filepath.Join(stubs, "sudo"), sudoStub)
			if tc.nonRoot {
				writeExec(t, filepath.Join(stubs, "id"), idStub)
			}
			for _, p := range tc.onPath {
				writeExec(t, filepath.Join(stubs, p), presentStub)
			}
			for _, p := range tc.inSbin {
				writeExec(t, filepath.Join(sbin, p), presentStub)
			}
			if tc.policy {
				writeExec(t, policy, preexistingPolicy)
			}
			if tc.jar {
				if err := os.WriteFile(filepath.Join(javaLibs, "hdrhistogram.jar"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cni {
				writeExec(t, filepath.Join(cniBin, "bridge"), presentStub)
			}
			if tc.freshLists {
				if err := os.WriteFile(filepath.Join(lists, "deb.debian.org_debian_dists_stable_main_binary-amd64_Packages"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			cmd := exec.Command(bash, script)
			cmd.Dir = tmp
			cmd.Env = []string{
				"PATH=" + stubs + string(os.PathListSeparator) + tools,
				"HOME=" + tmp,
				"LBBENCH_SBIN=" + sbin,
				"LBBENCH_POLICY_RC=" + policy,
				"LBBENCH_APT_LISTS=" + lists,
				"LBBENCH_JAVA_LIBS=" + javaLibs,
				"LBBENCH_CNI_BIN=" + cniBin,
				"STUB_APT_LOG=" + aptLog,
				"STUB_SUDO_LOG=" + sudoLog,
			}
			if tc.aptFail {
				cmd.Env = append(cmd.Env, "STUB_APT_FAIL=1")
			}
			out, err := cmd.CombinedOutput()
			t.Logf("setup.sh output:\n%s", out)

			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatalf("running setup.sh: %v", err)
			}
			code := testkit.ExitStatus(err)
			wantCode := 0
			if tc.wantFail {
				wantCode = 100 // the apt-get stub's status
			}
			if code != wantCode {
				t.Errorf("setup.sh exited %d, want %d", code, wantCode)
			}
			gotDone := strings.Contains(string(out), "setup: done")
			if wantDone := tc.wantApt != nil && !tc.wantFail; gotDone != wantDone {
				t.Errorf("output says done: %v, want %v", gotDone, wantDone)
			}

			if got := readLines(t, aptLog); !slices.Equal(got, tc.wantApt) {
				t.Errorf("apt-get calls:\n got %q\nwant %q", got, tc.wantApt)
			}

			if tc.policy {
				b, err := os.ReadFile(policy)
				if err != nil {
					t.Fatalf("pre-existing policy-rc.d: %v", err)
				}
				if string(b) != preexistingPolicy {
					t.Errorf("pre-existing policy-rc.d changed to %q", b)
				}
			} else if _, err := os.Lstat(policy); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("policy-rc.d made by setup.sh left behind (stat: %v)", err)
			}

			sudoCalls := readLines(t, sudoLog)
			if tc.wantSudo && len(sudoCalls) == 0 {
				t.Errorf("sudo never ran")
			}
			if !tc.wantSudo && len(sudoCalls) != 0 {
				t.Errorf("sudo ran as root: %q", sudoCalls)
			}
			if tc.wantSudo && !tc.policy && !slices.Contains(sudoCalls, "rm") {
				t.Errorf("sudo calls %q: policy-rc.d not removed through sudo", sudoCalls)
			}
			// apt-get runs as "sudo env DEBIAN_FRONTEND=noninteractive
			// apt-get", since sudo may drop the environment.
			if tc.wantSudo && tc.wantApt != nil && !slices.Contains(sudoCalls, "env") {
				t.Errorf("sudo calls %q: apt-get not run through sudo env", sudoCalls)
			}
		})
	}
}
