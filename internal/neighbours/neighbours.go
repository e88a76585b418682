package neighbours

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// EnvDir names the environment variable that, when set, is the
// registry's directory instead of the default (Dir).
const EnvDir = "LBBENCH_RUNS_DIR"

// Dir is the registry's directory: $LBBENCH_RUNS_DIR when set, otherwise
// lbbench-runs under the temporary directory (os.TempDir, /tmp unless
// TMPDIR says otherwise).
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "lbbench-runs")
}

// Run is one registered lbbench run.
type Run struct {
	PID      int       `json:"pid"`
	Scenario string    `json:"scenario"`
	Started  time.Time `json:"started"`
}

// String is "pid 4242, scenario default, since 15:04:05" (local time).
func (r Run) String() string {
	return fmt.Sprintf("pid %d, scenario %s, since %s", r.PID, r.Scenario, r.Started.Local().Format("15:04:05"))
}

// maxScenario bounds a scenario's name in the registry (the scenario
// format's own bound).
const maxScenario = 200

// plausible says whether r, read from a file anyone may write, can be
// shown: a positive pid, a start time, a printable name of bounded
// length.
func (r Run) plausible() bool {
	if r.PID <= 0 || r.Started.IsZero() || len(r.Scenario) > maxScenario || !utf8.ValidString(r.Scenario) {
		return false
	}
	return !strings.ContainsFunc(r.Scenario, func(c rune) bool { return !unicode.IsPrint(c) })
}

// Suffixes of the registry's files: a registered run's, and one being
// written before it is renamed into place.
const (
	runSuffix = ".run"
	newSuffix = ".new"
)

// joinGrace is how old a file being written (newSuffix) must be for a
// scan to take it for a run's that died while joining: joining takes
// microseconds, from the file's creation to its lock and rename.
const joinGrace = 10 * time.Second

// maxFile bounds what is read of a registry file: a run's line and the
// lines of those that joined while it ran.
const maxFile = 1 << 20

// Registration is this process's entry in the registry, held until
// Leave. Its methods are safe for concurrent use.
type Registration struct {
	dir, name string
	me        Run
	f         *os.File
	mu        sync.Mutex // serialises reads of f and Leave
	left      bool
}

// Join registers me in dir (created when missing), tells every run
// registered there and alive that me has come, and returns the
// registration with those runs.
func Join(dir string, me Run) (*Registration, []Run, error) {
	line, err := json.Marshal(me)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, nil, fmt.Errorf("neighbours: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("neighbours: %s is not a directory", dir)
	}
	// Every user's runs share it; only its owner can make it so, and
	// another user's is taken as it is.
	os.Chmod(dir, 0o777|os.ModeSticky)
	var id [8]byte
	rand.Read(id[:])
	name := fmt.Sprintf("%d-%s", me.PID, hex.EncodeToString(id[:]))
	tmp := filepath.Join(dir, "."+name+newSuffix)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND|unix.O_NOFOLLOW, 0o666)
	if err != nil {
		return nil, nil, fmt.Errorf("neighbours: %w", err)
	}
	fail := func(err error) (*Registration, []Run, error) {
		os.Remove(tmp)
		f.Close()
		return nil, nil, fmt.Errorf("neighbours: %w", err)
	}
	// Others append to it (whatever this process's umask).
	if err := f.Chmod(0o666); err != nil {
		return fail(err)
	}
	// Locked before it is visible under its name: a file there that can
	// be locked is a dead run's.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+runSuffix)); err != nil {
		return fail(err)
	}
	r := &Registration{dir: dir, name: name + runSuffix, me: me, f: f}
	others, err := r.scan(append(line, '\n'))
	return r, others, err
}

// Live lists the other runs registered and alive now. Files left by runs
// that died are removed on the way.
func (r *Registration) Live() ([]Run, error) { return r.scan(nil) }

// scan lists the live runs of the directory but r's, appending note to
// each one's file when it is not nil, and removes what dead runs left.
func (r *Registration) scan(note []byte) ([]Run, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	var out []Run
	for _, e := range entries {
		n := e.Name()
		if n == r.name || !e.Type().IsRegular() || !(strings.HasSuffix(n, runSuffix) || strings.HasSuffix(n, newSuffix)) {
			continue
		}
		path := filepath.Join(r.dir, n)
		if strings.HasSuffix(n, newSuffix) {
			// A run joining now (it will see this one) has made its file
			// a moment before it locks it: left alone, as probing it
			// would remove it, or hold the lock it is about to take. One
			// older than joinGrace is a run's that died joining: removed.
			// Never written to: its own line must come first.
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > joinGrace {
				probe(path, nil)
			}
			continue
		}
		if run, alive := probe(path, note); alive && run.plausible() {
			out = append(out, run)
		}
	}
	return out, nil
}

// probe tries a shared lock on the file at path without waiting. Locked
// by its run (alive), it returns the run its first line names, having
// appended note to it when note is not nil. Not locked, the file is a
// dead run's (or one that never finished joining) and is removed.
func probe(path string, note []byte) (Run, bool) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|unix.O_NOFOLLOW, 0)
	if err != nil {
		// Another user's file that this one may not write: read it.
		if f, err = os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0); err != nil {
			return Run{}, false
		}
		note = nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return Run{}, false
	}
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case err == nil:
		// Nobody holds it: its run is gone. (Another user's stays: the
		// sticky directory keeps it, and it is not reported either.)
		os.Remove(path)
		return Run{}, false
	case !errors.Is(err, unix.EWOULDBLOCK):
		return Run{}, false
	}
	var run Run
	first, _, _ := bufio.NewReader(io.LimitReader(f, maxFile)).ReadLine()
	if json.Unmarshal(first, &run) != nil {
		return Run{}, false
	}
	if note != nil {
		f.Write(note)
	}
	return run, true
}

// Watch begins a window (a run's load) and returns the function that ends
// it, which describes (Run.String) every other run registered at some
// moment of the window: those alive when it began or ended, and those
// that joined in between, even if they have left since.
func (r *Registration) Watch() (end func() []string) {
	start := r.size()
	before, _ := r.Live()
	return func() []string {
		came := r.joinedSince(start)
		after, _ := r.Live()
		var out []string
		seen := map[string]bool{key(r.me): true}
		for _, run := range slices.Concat(before, came, after) {
			if k := key(run); !seen[k] {
				seen[k] = true
				out = append(out, run.String())
			}
		}
		return out
	}
}

// key identifies a run: its pid and start (a pid may be used again).
func key(r Run) string { return fmt.Sprintf("%d@%d", r.PID, r.Started.UnixNano()) }

// size is the length of r's file now: where the lines of runs that join
// from now on begin.
func (r *Registration) size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left {
		return 0
	}
	fi, err := r.f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// joinedSince reads the runs that appended their line to r's file from
// offset start on.
func (r *Registration) joinedSince(start int64) []Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left {
		return nil
	}
	fi, err := r.f.Stat()
	if err != nil || fi.Size() <= start {
		return nil
	}
	b := make([]byte, min(fi.Size()-start, maxFile))
	n, err := r.f.ReadAt(b, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	var out []Run
	for line := range bytes.Lines(b[:n]) {
		var run Run
		if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &run) != nil || !run.plausible() {
			continue
		}
		out = append(out, run)
	}
	return out
}

// Leave removes the registration: other runs no longer see this one. It
// is idempotent.
func (r *Registration) Leave() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left {
		return nil
	}
	r.left = true
	// Removed while still locked: the name never points to an unlocked
	// file of a live run.
	err := os.Remove(filepath.Join(r.dir, r.name))
	return errors.Join(err, r.f.Close())
}
