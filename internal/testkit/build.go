package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// BuildStatic builds the Go package pkg (an import path, or a directory
// relative to the test's) without cgo, with go build's flags, and returns
// an executable of it for this process alone and a function that removes
// it: the static lbbench of the end-to-end and container tests, built
// once in their TestMain.
//
// The build goes to a directory of the user's cache, one for each test
// directory, pkg and flags, where go build finds it up to date when
// nothing it is made of changed and leaves it as it is; built to a new
// path, as each test process did before, it is linked again: about 3 s
// for lbbench on 2 idle CPUs, 10 s on busy ones, against a quarter of a
// second to find it up to date. Builds into one directory take turns (a
// lock file), and what is returned is a hard link to the build, so that a
// later build that replaces it (its sources changed) never changes an
// executable a test still runs.
func BuildStatic(pkg string, flags ...string) (exe string, remove func(), err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	key := sha256.Sum256([]byte(strings.Join(append([]string{wd, pkg}, flags...), "\x00")))
	dir, err := buildDir(hex.EncodeToString(key[:8]))
	if err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	name := filepath.Base(pkg)
	if name == "." || name == ".." {
		name = filepath.Base(filepath.Join(wd, pkg))
	}
	built := filepath.Join(dir, name)
	args := append([]string{"build"}, flags...)
	cmd := exec.Command("go", append(args, "-o", built, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
	}
	removeStale(dir)
	use, err := os.MkdirTemp(dir, "use-")
	if err != nil {
		return "", nil, err
	}
	exe = filepath.Join(use, filepath.Base(built))
	if err := os.Link(built, exe); err != nil {
		if err := copyExecutable(built, exe); err != nil {
			os.RemoveAll(use)
			return "", nil, err
		}
	}
	return exe, func() { os.RemoveAll(use) }, nil
}

// buildDir makes and returns the directory of the builds named name: in
// the user's cache, or where that cannot be written, in the temporary
// directory.
func buildDir(name string) (string, error) {
	var roots []string
	if cache, err := os.UserCacheDir(); err == nil {
		roots = append(roots, filepath.Join(cache, "lbbench", "test-builds"))
	}
	roots = append(roots, filepath.Join(os.TempDir(), fmt.Sprintf("lbbench-test-builds-%d", os.Getuid())))
	var err error
	for _, root := range roots {
		dir := filepath.Join(root, name)
		if err = os.MkdirAll(dir, 0o755); err == nil {
			return dir, nil
		}
	}
	return "", err
}

// removeStale removes the links of test processes that ended without
// removing theirs (killed at a test timeout) a day ago or more.
func removeStale(dir string) {
	stale, _ := filepath.Glob(filepath.Join(dir, "use-*"))
	for _, d := range stale {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(d)
		}
	}
}

// copyExecutable copies src to dst, where a hard link cannot be made.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
