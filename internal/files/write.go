// Package files opens the paths users give lbbench, for writing and for
// reading, so that no output destroys what its path names and no input
// blocks for ever.
//
// Outputs (Write, WriteWhole, Create, Append) write through what is there:
//   - nothing, or a regular file: a temporary file in the same directory,
//     synced and renamed over the path, so a reader sees the old content or
//     the new, never a torn file; an existing file keeps its permission
//     bits (a new one gets 0644);
//   - a symbolic link (or a chain of them): its final target, the same
//     way; the link itself stays a link;
//   - a character device or a FIFO (/dev/null, /dev/stdout, a pipe from the
//     shell): written directly, never replaced. A FIFO nobody reads is
//     waited for up to FIFOWait, then refused, instead of blocking;
//   - a directory or a socket: refused with a message that says so.
//
// Why: an earlier lbbench wrote every output to a temporary file and
// renamed it over the path, so "lbbench attack -o /dev/null" run as root
// replaced the system's /dev/null with a regular file (and every
// container start failed afterwards). A path is looked at before it is
// written, and a non-regular file is never renamed over.
//
// Inputs (Read) refuse what cannot be read whole without blocking for
// ever, see read.go.
package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// FIFOWait is how long opening a FIFO for writing waits for a reader
// before it is refused.
const FIFOWait = 10 * time.Second

// ErrNotRegular is returned by WriteWhole for a path that names a device,
// a FIFO or a file reached through /proc: outputs that must be whole
// (results.json) are refused there, since they cannot be replaced
// atomically.
var ErrNotRegular = errors.New("not a regular file")

// maxLinks bounds the symbolic links followed, as the kernel's ELOOP.
const maxLinks = 40

// kind is what an output path names, once its links are followed.
type kind int

const (
	regular kind = iota // a regular file, or nothing yet: replaced atomically
	direct              // a device, a FIFO, or a file reached through /proc: written in place
)

// resolve follows path's symbolic links and says where and how to write.
// For a regular file (or none) it returns the final target, whose
// directory the temporary file goes in; for a direct write, path itself.
// fi describes what is there (nil: nothing yet).
func resolve(path string) (string, kind, fs.FileInfo, error) {
	fi, err := os.Stat(path) // follows every link, /proc's magic ones too
	switch {
	case err == nil && fi.IsDir():
		return "", 0, nil, fmt.Errorf("%s is a directory; give a file path", path)
	case err == nil && fi.Mode()&fs.ModeSocket != 0:
		return "", 0, nil, fmt.Errorf("%s is a socket, which cannot be written as a file; give a file path", path)
	case err == nil && !fi.Mode().IsRegular():
		return path, direct, fi, nil // device or FIFO
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", 0, nil, err
	}
	// A regular file, or nothing: find the name the links end in, so that
	// the rename replaces the target, not the link.
	p := path
	for range maxLinks {
		if strings.HasPrefix(filepath.Clean(p), "/proc/") {
			// /dev/stdout and /dev/fd/N lead here: a file some process
			// holds open, whose name is not a path to rename over.
			return path, direct, fi, nil
		}
		li, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, regular, nil, nil
		}
		if err != nil {
			return "", 0, nil, err
		}
		if li.Mode()&fs.ModeSymlink == 0 {
			return p, regular, li, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", 0, nil, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", 0, nil, fmt.Errorf("%s: too many levels of symbolic links", path)
}

// modeOf is fi's mode, or 0 for nothing.
func modeOf(fi fs.FileInfo) fs.FileMode {
	if fi == nil {
		return 0
	}
	return fi.Mode()
}

// File is an output being written: Create's result. Writes go to a
// temporary file beside the target (published by Commit) or, for a device
// or FIFO, straight to it. It is not safe for concurrent use.
type File struct {
	f      *os.File
	target string // where Commit renames the temporary file; "" when direct
	mode   fs.FileMode
	done   bool
}

// Create opens path for an output written in pieces (a stream of results),
// following the rules in the package doc. Nothing at path changes until
// Commit (for a device or FIFO, writes arrive as they are made); Close
// without Commit leaves path as it was.
func Create(path string) (*File, error) {
	return create(path, false)
}

func create(path string, whole bool) (*File, error) {
	target, k, fi, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if k == direct {
		if whole {
			return nil, fmt.Errorf("write %s: %w (it is a %s); give the path of a file, which is replaced whole", path, ErrNotRegular, describe(modeOf(fi)))
		}
		f, err := openDirect(path, modeOf(fi), os.O_TRUNC)
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		return &File{f: f}, nil
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	perm := fs.FileMode(0o644)
	if fi != nil {
		perm = fi.Mode().Perm()
	}
	return &File{f: f, target: target, mode: perm}, nil
}

// describe names a file mode for a message.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsRegular():
		return "file reached through /proc (a descriptor some process holds open)"
	}
	return "special file"
}

// openDirect opens a device, FIFO or /proc-reached file for writing in
// place, with extra flags (O_TRUNC or O_APPEND). A FIFO is opened without
// blocking: with no reader the open fails at once (ENXIO), so it is tried
// again until FIFOWait has passed.
func openDirect(path string, mode fs.FileMode, flags int) (*os.File, error) {
	if mode&fs.ModeNamedPipe == 0 {
		return os.OpenFile(path, os.O_WRONLY|flags, 0)
	}
	deadline := time.Now().Add(FIFOWait)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|flags, 0)
		if !errors.Is(err, syscall.ENXIO) {
			// Go's runtime polls a FIFO it opened, so writes wait for
			// room instead of failing with EAGAIN.
			return f, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no process opened the FIFO for reading within %v", FIFOWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Write writes b, to the temporary file or the device.
func (f *File) Write(b []byte) (int, error) { return f.f.Write(b) }

// Commit makes what was written the content of the path: it syncs the
// temporary file, gives it the target's permission bits and renames it
// over the target. For a device or FIFO it closes the file. After Commit,
// Close does nothing.
func (f *File) Commit() error {
	if f.done {
		return errors.New("files: commit of a closed file")
	}
	f.done = true
	if f.target == "" {
		return f.f.Close()
	}
	tmp := f.f.Name()
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, f.mode)
	}
	if err == nil {
		err = os.Rename(tmp, f.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	return nil
}

// Close abandons an uncommitted file: the temporary file is removed and the
// path is left as it was. It is idempotent, and does nothing after Commit.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.f.Close()
	if f.target != "" {
		os.Remove(f.f.Name())
	}
	return err
}

// Write writes data to path following the rules in the package doc: a
// regular file (or none) is replaced atomically, creating path's directory
// if needed; a device or FIFO is written in place. On failure a regular
// file is left as it was.
func Write(path string, data []byte) error {
	return writeAll(path, data, false)
}

// WriteWhole is Write for an output that must never be seen torn
// (results.json, which a run rewrites after every run and a reader may
// open at any time): a path naming a device, a FIFO or a file reached
// through /proc is refused with ErrNotRegular and a message.
func WriteWhole(path string, data []byte) error {
	return writeAll(path, data, true)
}

func writeAll(path string, data []byte, whole bool) error {
	f, err := create(path, whole)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// Append adds data at the end of path (a step summary that others write
// too), creating it if needed; a FIFO or device is written in place,
// waiting for a FIFO's reader as Create does. An append cannot be made
// atomic by a rename, so a regular file is appended to with one write.
func Append(path string, data []byte) error {
	target, k, fi, err := resolve(path)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	var f *os.File
	if k == direct {
		f, err = openDirect(path, modeOf(fi), os.O_APPEND)
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(target), err)
		}
		f, err = os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return nil
}

var _ io.WriteCloser = (*File)(nil)

// Check reports what Write would refuse at path (a directory, a socket, a
// loop of links), without writing or waiting for a FIFO's reader, so that
// a run can refuse a bad output before it starts rather than after.
func Check(path string) error {
	_, _, _, err := resolve(path)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	return nil
}

// CheckWhole is Check for WriteWhole: a device, a FIFO or a file reached
// through /proc is refused too.
func CheckWhole(path string) error {
	_, k, fi, err := resolve(path)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if k == direct {
		return fmt.Errorf("output %s: %w (it is a %s); lbbench replaces this file whole after every run (remove it or choose another -o)", path, ErrNotRegular, describe(modeOf(fi)))
	}
	return nil
}
