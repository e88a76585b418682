// Package scenarios holds ready-made scenario files, one per question users
// ask, embedded in the lbbench binary.
package scenarios

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Default is the name of the scenario `lbbench run` uses when given none.
const Default = "default"

// Get returns the embedded scenario called name (file name without .yaml).
func Get(name string) ([]byte, error) {
	return fs.ReadFile(files, name+".yaml")
}

// Names lists the embedded scenarios, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}
