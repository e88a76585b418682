// Package syncio has I/O helpers safe for concurrent use.
package syncio

import (
	"io"
	"sync"
)

// Writer serializes writes to an underlying io.Writer, so that several
// goroutines can share it: each Write reaches it whole, never interleaved
// with another (callers write a line per Write to keep lines intact). It is
// safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer that writes to w, which no one else must
// write to meanwhile.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the underlying writer while holding the lock.
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var _ io.Writer = (*Writer)(nil)
