// Package browsertest holds the test helper that decides whether a test
// needing Chromium runs.
package browsertest

import (
	"os"
	"testing"

	"github.com/lbbench/lbbench/internal/browser"
)

// Require returns the Chromium executable for a browser test. Under -short
// the test is skipped (a browser takes seconds). Without Chromium the test
// is skipped, except in CI (CI set to anything), where a missing browser is a failure:
// scripts/setup.sh installs it, so its absence means the setup broke.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium; skipped under -short")
	}
	exe, err := browser.Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v: CI must have it (make setup installs it)", err)
		}
		t.Skip(err)
	}
	return exe
}
