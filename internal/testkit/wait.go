package testkit

import (
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits: a safety net for a test that
// would otherwise hang, not a timing assertion.
const WaitTimeout = 10 * time.Second

// poll is how often a condition is tried again.
const poll = 5 * time.Millisecond

// WaitFor polls cond until it holds, failing the test with "timed out
// waiting for what" after WaitTimeout.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitUntil(t, WaitTimeout, what, cond)
}

// WaitUntil polls cond until it holds, failing the test with "timed out
// waiting for what" after timeout.
func WaitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Poll tries cond until it holds or timeout passes and reports whether it
// held, for a test that says more than WaitFor when it does not.
func Poll(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(poll) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
