package safepath

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestJoin(t *testing.T) {
	base := t.TempDir()
	for _, bad := range [][]string{
		{"a/../../x"}, {"../x"}, {".."}, {"."}, {""}, {"/etc/passwd"}, {"001-a/../../../sec/ESCAPED-r1-proxy.log"}, {"ok", ".."}, {"x\x00y"},
	} {
		if p, err := Join(base, bad...); err == nil {
			t.Errorf("Join(%q) = %s, want an error", bad, p)
		} else if !strings.Contains(err.Error(), "unsafe file name") {
			t.Errorf("Join(%q): error %q does not say why", bad, err)
		}
	}
	for _, good := range [][]string{{"001-rp-r1-worker.log"}, {"dir", "file.txt"}, {"a..b"}, {"..hidden"}} {
		p, err := Join(base, good...)
		if err != nil {
			t.Errorf("Join(%q): %v", good, err)
			continue
		}
		if want := filepath.Join(append([]string{base}, good...)...); p != want {
			t.Errorf("Join(%q) = %s, want %s", good, p, want)
		}
	}
}
