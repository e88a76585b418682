package loadgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lbbench/lbbench/results"
)

// TestCreateNoFollow: a symbolic link planted where a generator's file
// goes is refused, and its target left untouched; a plain path is written.
func TestCreateNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "generator-0.spec.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeNoFollow(link, []byte("spec")); err == nil {
		t.Error("wrote through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}
	plain := filepath.Join(dir, "generator-1.spec.json")
	if err := writeNoFollow(plain, []byte("spec")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "spec" {
		t.Errorf("plain file holds %q", b)
	}
}

// TestAllFailed: a generator's measurement whose every request failed is
// a result (its "lbbench attack" exits 1 for it); one with a success, or
// no measurement at all, is not.
func TestAllFailed(t *testing.T) {
	dir := t.TempDir()
	failed := filepath.Join(dir, "failed.json")
	if err := (&results.Measurement{Requests: 10, Errors: 10}).WriteFile(failed); err != nil {
		t.Fatal(err)
	}
	some := filepath.Join(dir, "some.json")
	if err := (&results.Measurement{Requests: 10, Errors: 9}).WriteFile(some); err != nil {
		t.Fatal(err)
	}
	if !allFailed(failed) || allFailed(some) || allFailed(filepath.Join(dir, "missing.json")) {
		t.Errorf("allFailed: every request failed %v, one succeeded %v, no file %v; want true, false, false",
			allFailed(failed), allFailed(some), allFailed(filepath.Join(dir, "missing.json")))
	}
}
