package logtail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"\n\n", 3, nil},
		{"a\nb\nc\n", 2, []string{"b", "c"}},
		{"a\nb", 5, []string{"a", "b"}},
		{"a\n\nb\n", 3, []string{"a", "", "b"}},
		{"a\n", 0, nil},
	} {
		if got := Lines(tc.text, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Lines(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}

func TestFileAndFormat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.log")
	os.WriteFile(p, []byte("one\ntwo\nthree\n"), 0o644)
	got := File(p, 2)
	if !slices.Equal(got, []string{"two", "three"}) {
		t.Fatalf("File = %q", got)
	}
	if s := Format("worker output (x.log)", got); s != "\n  worker output (x.log):\n    two\n    three" {
		t.Errorf("Format = %q", s)
	}
	if File(filepath.Join(t.TempDir(), "none"), 2) != nil || Format("t", nil) != "" {
		t.Error("a missing file or no lines must give nothing")
	}
}
