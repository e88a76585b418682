package files

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mknodNull makes a character device with /dev/null's numbers (1, 3) at
// path, so a test can show that a device node stays one without touching
// the system's own. It skips when the process may not make device nodes
// (not root, or a container without CAP_MKNOD).
func mknodNull(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			t.Fatalf("mknod as root in CI: %v", err)
		}
		t.Skipf("cannot make a device node here: %v", err)
	}
}

// reader drains a FIFO in the background and returns what it read.
func reader(t *testing.T, path string) <-chan []byte {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(path) // blocks until a writer opens it
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	return got
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// TestWriteThroughWhatIsThere is the matrix of what an output path may
// name: each case writes with Write and with Create/Commit and checks that
// what was there is still of its kind and got the bytes.
func TestWriteThroughWhatIsThere(t *testing.T) {
	writers := map[string]func(path string, data []byte) error{
		"Write": Write,
		"Create": func(path string, data []byte) error {
			f, err := Create(path)
			if err != nil {
				return err
			}
			if _, err := f.Write(data); err != nil {
				f.Close()
				return err
			}
			return f.Commit()
		},
		"Append": Append,
	}
	for wname, write := range writers {
		t.Run(wname, func(t *testing.T) {
			t.Run("new file", func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "sub", "out.json")
				if err := write(p, []byte("new\n")); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(p); string(b) != "new\n" {
					t.Fatalf("content %q", b)
				}
				if m := mode(t, p); !m.IsRegular() || m.Perm() != 0o644 {
					t.Fatalf("mode %v, want a regular file 0644", m)
				}
			})
			t.Run("existing file keeps its mode", func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "out.json")
				if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := write(p, []byte("new\n")); err != nil {
					t.Fatal(err)
				}
				want := "new\n"
				if wname == "Append" {
					want = "old\nnew\n"
				}
				if b, _ := os.ReadFile(p); string(b) != want {
					t.Fatalf("content %q, want %q", b, want)
				}
				if m := mode(t, p); m.Perm() != 0o600 {
					t.Fatalf("mode %v, want 0600 kept", m)
				}
			})
			t.Run("symlink to a file", func(t *testing.T) {
				dir := t.TempDir()
				target := filepath.Join(dir, "real", "results.json")
				os.MkdirAll(filepath.Dir(target), 0o755)
				os.WriteFile(target, []byte("old\n"), 0o644)
				link := filepath.Join(dir, "link.json")
				if err := os.Symlink("real/results.json", link); err != nil {
					t.Fatal(err)
				}
				if err := write(link, []byte("new\n")); err != nil {
					t.Fatal(err)
				}
				if m := mode(t, link); m&fs.ModeSymlink == 0 {
					t.Fatalf("the link became %v", m)
				}
				b, _ := os.ReadFile(target)
				if !strings.HasSuffix(string(b), "new\n") {
					t.Fatalf("target holds %q", b)
				}
				left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
				if len(left) != 0 {
					t.Fatalf("temporary files beside the link: %v", left)
				}
			})
			t.Run("dangling symlink", func(t *testing.T) {
				dir := t.TempDir()
				link := filepath.Join(dir, "link.json")
				os.Symlink(filepath.Join(dir, "later.json"), link)
				if err := write(link, []byte("new\n")); err != nil {
					t.Fatal(err)
				}
				if m := mode(t, link); m&fs.ModeSymlink == 0 {
					t.Fatalf("the link became %v", m)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "later.json")); string(b) != "new\n" {
					t.Fatalf("target holds %q", b)
				}
			})
			t.Run("symlink loop", func(t *testing.T) {
				dir := t.TempDir()
				a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
				os.Symlink(b, a)
				os.Symlink(a, b)
				if err := write(a, []byte("x")); err == nil {
					t.Fatal("writing through a link loop succeeded")
				}
				if m := mode(t, a); m&fs.ModeSymlink == 0 {
					t.Fatalf("the link became %v", m)
				}
			})
			t.Run("character device", func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "null")
				mknodNull(t, p)
				if err := write(p, []byte("discarded\n")); err != nil {
					t.Fatal(err)
				}
				if m := mode(t, p); m&fs.ModeCharDevice == 0 {
					t.Fatalf("the device became %v", m)
				}
			})
			t.Run("symlink to a character device", func(t *testing.T) {
				dir := t.TempDir()
				dev := filepath.Join(dir, "null")
				mknodNull(t, dev)
				link := filepath.Join(dir, "out")
				os.Symlink(dev, link)
				if err := write(link, []byte("discarded\n")); err != nil {
					t.Fatal(err)
				}
				if m := mode(t, dev); m&fs.ModeCharDevice == 0 {
					t.Fatalf("the device became %v", m)
				}
				if m := mode(t, link); m&fs.ModeSymlink == 0 {
					t.Fatalf("the link became %v", m)
				}
			})
			t.Run("FIFO with a reader", func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "fifo")
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				got := reader(t, p)
				if err := write(p, []byte("through the pipe\n")); err != nil {
					t.Fatal(err)
				}
				select {
				case b := <-got:
					if string(b) != "through the pipe\n" {
						t.Fatalf("reader got %q", b)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the reader got nothing")
				}
				if m := mode(t, p); m&fs.ModeNamedPipe == 0 {
					t.Fatalf("the FIFO became %v", m)
				}
			})
			t.Run("directory", func(t *testing.T) {
				p := t.TempDir()
				err := write(p, []byte("x"))
				if err == nil || !strings.Contains(err.Error(), "directory") {
					t.Fatalf("err = %v, want one that says it is a directory", err)
				}
			})
		})
	}
}

// TestFIFOWithoutReaderIsRefused: nobody reads the FIFO, so the write is
// refused after FIFOWait instead of blocking for ever. FIFOWait is a
// constant, so this runs only without -short.
func TestFIFOWithoutReaderIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("waits FIFOWait")
	}
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(p, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "reading") {
		t.Fatalf("err = %v, want no reader", err)
	}
	if m := mode(t, p); m&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO became %v", m)
	}
}

func TestWriteWholeRefusesWhatCannotBeReplaced(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "null")
	paths := map[string]string{"FIFO": fifo, "/dev/stdout": "/dev/stdout", "/proc/self/fd/1": "/proc/self/fd/1"}
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|3)); err == nil {
		paths["character device"] = dev
	}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			before, _ := os.Lstat(p)
			err := WriteWhole(p, []byte("x"))
			if !errors.Is(err, ErrNotRegular) {
				t.Fatalf("err = %v, want ErrNotRegular", err)
			}
			after, _ := os.Lstat(p)
			if before != nil && after.Mode() != before.Mode() {
				t.Fatalf("mode changed from %v to %v", before.Mode(), after.Mode())
			}
		})
	}
	// A regular file behind a link is fine.
	real := filepath.Join(dir, "r.json")
	link := filepath.Join(dir, "l.json")
	os.Symlink(real, link)
	if err := WriteWhole(link, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
}

// TestWriteFailureKeepsOld: a failed write leaves the old file and no
// temporary file.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, []byte("old"), 0o644)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Close() // abandoned
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("content %q after an abandoned write", b)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "s.yaml")
	os.WriteFile(small, []byte("name: x\n"), 0o644)
	if b, err := Read(small, 100); err != nil || string(b) != "name: x\n" {
		t.Fatalf("Read = %q, %v", b, err)
	}
	if _, err := Read(small, 3); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v, want ErrTooLarge", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, 100); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("FIFO: %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read of a FIFO with no writer blocked")
	}
	for _, p := range []string{"/dev/zero", "/dev/null"} {
		if _, err := Read(p, 100); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", p, err)
		}
	}
	if _, err := Read(dir, 100); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// TestSocketRefused: a Unix socket at an output path is refused by every
// writer, naming it, and stays a socket: it cannot be written as a file,
// and replacing it would take the address from whoever listens there.
func TestSocketRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, write := range map[string]func() error{
		"Write":      func() error { return Write(p, []byte("x")) },
		"WriteWhole": func() error { return WriteWhole(p, []byte("x")) },
		"Append":     func() error { return Append(p, []byte("x")) },
		"Create": func() error {
			f, err := Create(p)
			if err == nil {
				f.Close()
			}
			return err
		},
	} {
		err := write()
		if err == nil || !strings.Contains(err.Error(), "is a socket") {
			t.Errorf("%s: %v, want a refusal saying it is a socket", name, err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSocket == 0 {
			t.Fatalf("%s: the socket is now %v (%v)", name, fi.Mode(), err)
		}
	}
}
