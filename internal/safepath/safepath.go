// Package safepath builds the paths of files lbbench writes from names
// that came from input (variant, class and client names, run ids), and
// refuses any that would land outside the directory they belong in.
package safepath

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Join joins base and elems like filepath.Join and returns an error when
// the result is not strictly inside base: an element holding "..", an
// absolute path or a separator that climbs out. It looks at the names
// only; the scenario's name check (field.Name) is what keeps symlink-free
// names in the first place.
func Join(base string, elems ...string) (string, error) {
	for _, e := range elems {
		if e == "" || e == "." || e == ".." || strings.ContainsAny(e, "/\\\x00") {
			return "", fmt.Errorf("unsafe file name %q under %s: a name may not be empty, '.', '..' or hold a path separator", e, base)
		}
	}
	p := filepath.Join(append([]string{base}, elems...)...)
	rel, err := filepath.Rel(filepath.Clean(base), p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("unsafe file name %q: it would be written outside %s", filepath.Join(elems...), base)
	}
	return p, nil
}
