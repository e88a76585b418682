package syncio

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestWriterLines writes lines from many goroutines into one buffer (which
// is not safe for concurrent use) and checks every line arrives whole; run
// with -race it also shows the writes never overlap.
func TestWriterLines(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	const goroutines, lines = 8, 200
	line := strings.Repeat("x", 100) + "\n"
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range lines {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != goroutines*lines {
		t.Fatalf("%d lines, want %d", len(got), goroutines*lines)
	}
	for i, l := range got {
		if l+"\n" != line {
			t.Fatalf("line %d torn: %q", i, l)
		}
	}
}
