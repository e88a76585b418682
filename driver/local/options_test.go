package local

import (
	"strings"
	"testing"
)

// TestNewValidatesOptions: New refuses what the local driver cannot do,
// with the error the user sees, and takes the rest in any order.
func TestNewValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want string // "" for no error
	}{
		{name: "defaults"},
		{name: "placement none", opts: []Option{WithPlacement(PlaceNone)}},
		{name: "empty engine images", opts: []Option{WithEngineImages(map[string]string{})}},
		{name: "generators", opts: []Option{WithGenerators(3, t.TempDir()), WithPlacement(PlaceNone)}},
		{name: "too many generators", opts: []Option{WithGenerators(65, t.TempDir())}, want: "local: generators: must be between 1 and 64"},
		{name: "no generator", opts: []Option{WithGenerators(0, t.TempDir())}, want: "local: generators: must be between 1 and 64 (each is a process on this machine; more only compete for its CPUs), got 0"},
		{name: "negative generators", opts: []Option{WithGenerators(-1, t.TempDir())}, want: "local: generators: must be between 1 and 64"},
		{name: "raw with generators", opts: []Option{WithRaw(t.TempDir()), WithGenerators(2, t.TempDir())}, want: "local: raw per-request lines need the generator in this process"},
		{name: "engine images", opts: []Option{WithEngineImages(map[string]string{"nginx": "nginx:1.22"})}, want: "local: --engine-image is for --driver docker"},
		{name: "unknown placement", opts: []Option{WithPlacement("limits")}, want: `local: --pin must be auto, cpusets or none with --driver local (limits is for --driver docker), got "limits"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("/bin/true", t.TempDir(), tc.opts...)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
