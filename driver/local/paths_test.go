package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/topologies"
)

// A run id or file name that would climb out of the log directory is
// refused before anything is created, and nothing appears outside it.
func TestLocalDriverKeepsFilesUnderLogDir(t *testing.T) {
	root := t.TempDir()
	logDir := filepath.Join(root, "out", "logs")
	d, err := New("/bin/true", logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []topologies.Plan{
		{ID: "001-a/../../../ESCAPED-r1", Processes: []topologies.Process{{Role: topologies.RoleWorkers}}},
		{ID: "001-ok-r1", Processes: []topologies.Process{{Role: topologies.RoleWorkers, Files: []topologies.File{{Name: "../../../ESCAPED.conf", Content: "x"}}}}},
	} {
		dep, err := d.UpPlan(context.Background(), p)
		if err == nil {
			dep.Down(context.Background())
			t.Fatalf("%s: Up succeeded, want the unsafe name refused", p.ID)
		}
		if !strings.Contains(err.Error(), "unsafe file name") {
			t.Errorf("%s: error %q does not name the unsafe file name", p.ID, err)
		}
	}
	var outside []string
	filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err == nil && strings.Contains(e.Name(), "ESCAPED") {
			outside = append(outside, path)
		}
		return nil
	})
	if len(outside) > 0 {
		t.Errorf("files written from unsafe names: %v", outside)
	}
}
