// Package dockertest connects tests to the Docker Engine. Without a daemon
// a test is skipped on a developer's machine, but fails when the CI
// environment variable is set: CI must run the Docker tests, not skip them.
package dockertest

import (
	"context"
	"os"
	"testing"

	"github.com/lbbench/lbbench/driver/docker"
)

// Connect returns a client of the local Docker Engine, closed when t ends.
func Connect(t testing.TB) *docker.Client {
	t.Helper()
	c, err := docker.Connect(context.Background())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so the Docker tests must run: %v", err)
		}
		t.Skipf("no Docker daemon (set CI to make this a failure): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// AssertGone fails t if anything labelled with session remains.
func AssertGone(t testing.TB, c *docker.Client, session string) {
	t.Helper()
	rep, err := c.Managed(context.Background(), session)
	if err != nil {
		t.Fatalf("list session %s: %v", session, err)
	}
	if !rep.Empty() {
		t.Errorf("session %s left behind: %s", session, rep)
	}
}
