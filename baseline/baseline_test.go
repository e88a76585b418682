package baseline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/scenario"
)

func TestTwins(t *testing.T) {
	s := scenario.Scenario{Variants: []scenario.Variant{{Name: "rp", Topology: scenario.ReusePort}, {Name: "lc", Topology: scenario.Proxy}}}
	got := Twins(s)
	want := []struct{ name, build string }{{"rp", ""}, {"rp@base", BuildName}, {"lc", ""}, {"lc@base", BuildName}}
	if len(got.Variants) != len(want) {
		t.Fatalf("variants %+v", got.Variants)
	}
	for i, w := range want {
		if v := got.Variants[i]; v.Name != w.name || v.Build != w.build || v.Topology != s.Variants[i/2].Topology {
			t.Errorf("variant %d = %+v, want %s build %q", i, v, w.name, w.build)
		}
	}
	if len(s.Variants) != 2 {
		t.Error("Twins changed its argument")
	}
}

func TestBuildRefusesAnUnknownRef(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var log bytes.Buffer
	_, _, err := Build(context.Background(), dir, "no-such-ref", &log)
	if !errors.Is(err, ErrNotACommit) || !strings.Contains(err.Error(), `"no-such-ref" is not a commit of`) {
		t.Fatalf("Build = %v, want ErrNotACommit naming the ref", err)
	}
	if _, _, err := Build(context.Background(), os.TempDir(), "HEAD", &log); err == nil || errors.Is(err, ErrNotACommit) ||
		!strings.Contains(err.Error(), "not in a git repository") {
		t.Errorf("outside a repository: %v", err)
	}
}
