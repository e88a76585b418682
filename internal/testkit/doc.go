// Package testkit holds the helpers lbbench's tests share, written once:
// free ports, waiting for a condition with a deadline, a buffer a test
// reads while a process writes it, "GET and read X-Worker" probes (on a
// fresh connection, or with the test's own client), /proc scanners for
// the processes a test started or must not leave behind, a command's
// exit status, and a static build of a program that is linked again only
// when its sources change (the lbbench the end-to-end tests run).
//
// Only _test.go files import it (internal/archtest checks), and it imports
// nothing of lbbench: a helper that needs a lbbench package belongs beside
// that package's tests, or in a subpackage such as testkit/fakedriver.
package testkit
