// Package setuptest tests scripts/setup.sh. It holds no code of its own: the
// test runs the real script under bash with stub apt-get and sudo on PATH and
// with every path the script touches moved into a temporary directory.
package setuptest
