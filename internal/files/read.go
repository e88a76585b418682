package files

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is returned by Read for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Read reads the regular file at path whole, refusing one larger than max
// bytes without reading past it (errors.Is(err, ErrTooLarge)).
//
// Anything else is refused before a byte is read (errors.Is(err,
// ErrNotRegular)): a FIFO or terminal would block the read until a writer
// came, beyond Ctrl-C, since a goroutine blocked in read(2) cannot be
// interrupted; a device like /dev/zero never ends. The open itself is
// non-blocking, so a FIFO with no writer does not hang it either.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s: %w (lbbench reads inputs only from files it can read whole without waiting; save it to a file first)", path, describe(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > max {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, ErrTooLarge // it grew while being read
	}
	return data, nil
}
