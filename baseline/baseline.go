// Package baseline builds another version of lbbench from a git ref and
// pairs every variant of a scenario with a twin that runs it: what
// "lbbench run --baseline REF" uses to compare this build with an earlier
// one, both measured in the same interleaved, randomized run order.
package baseline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lbbench/lbbench/scenario"
)

// BuildName names the baseline build among the variants (Variant.Build):
// variant X runs this binary, variant X@base the binary Build made.
const BuildName = "base"

// ErrNotACommit is wrapped by Build's error when ref names no commit of the
// repository: the user's mistake, not a failure of the build.
var ErrNotACommit = errors.New("not a commit")

// Twins returns s with every variant followed by its twin that runs the
// baseline build, named NAME@base (scenario.BuildSeparator, BuildName). The harness interleaves all of them
// in a randomized balanced order, repetition by repetition.
func Twins(s scenario.Scenario) scenario.Scenario {
	vs := make([]scenario.Variant, 0, 2*len(s.Variants))
	for _, v := range s.Variants {
		b := v
		b.Name = v.Name + scenario.BuildSeparator + BuildName
		b.Build = BuildName
		vs = append(vs, v, b)
	}
	s.Variants = vs
	return s
}

// Build builds lbbench as of git ref ref of the repository holding
// dir into a new temporary directory, without touching the repository:
// "git archive" exports the ref's tree, "go build" (CGO_ENABLED=0) builds
// ./cmd/lbbench from it. It returns the binary and a func that removes the
// directory.
func Build(ctx context.Context, dir, ref string, log io.Writer) (exe string, cleanup func(), err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", nil, errors.New("baseline: git is not installed")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", nil, errors.New("baseline: building the baseline from source needs the Go toolchain (go) in PATH")
	}
	top, err := gitOutput(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, fmt.Errorf("baseline: %s is not in a git repository: %w", dir, err)
	}
	sha, err := gitOutput(ctx, top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("baseline: %q is %w of %s (fetch it first; shallow clones lack history)", ref, ErrNotACommit, top)
	}
	tmp, err := os.MkdirTemp("", "lbbench-baseline-")
	if err != nil {
		return "", nil, fmt.Errorf("baseline: %w", err)
	}
	cleanup = func() { os.RemoveAll(tmp) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", nil, fmt.Errorf("baseline: %w", err)
	}
	start := time.Now()
	short := sha[:min(12, len(sha))]
	fmt.Fprintf(log, "lbbench: building the baseline %s (%s) in %s\n", ref, short, tmp)

	// git archive REF | tar -x -C src
	archive := exec.CommandContext(ctx, "git", "-C", top, "archive", "--format=tar", sha)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", nil, fmt.Errorf("baseline: %w", err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return "", nil, fmt.Errorf("baseline: tar: %w", err)
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return "", nil, fmt.Errorf("baseline: git archive %s: %w: %s", ref, err, strings.TrimSpace(archiveErr.String()))
	}
	if err := untar.Wait(); err != nil {
		return "", nil, fmt.Errorf("baseline: extract %s: %w: %s", ref, err, strings.TrimSpace(untarErr.String()))
	}

	exe = filepath.Join(tmp, "lbbench")
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags", "-X main.commit="+short, "-o", exe, "./cmd/lbbench")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("baseline: build lbbench at %s: %w\n%s", ref, err, strings.TrimSpace(string(out)))
	}
	fmt.Fprintf(log, "lbbench: baseline built in %s\n", time.Since(start).Round(100*time.Millisecond))
	return exe, cleanup, nil
}

// CopySelf copies the running executable into dir, as "lbbench-this",
// and returns its path: this build as a file of its own, which no other
// process of the run (the generator) is running.
func CopySelf(dir string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("baseline: this build's executable: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	defer in.Close()
	dst := filepath.Join(dir, "lbbench-this")
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("baseline: copy this build: %w", err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("baseline: copy this build: %w", err)
	}
	return dst, nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
