package testkit

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// Consecutive ports are drawn from [PortsLow, PortsLow+PortsSpan): below
// the kernel's ephemeral range (32768 and up), so that no outgoing
// connection of a test running alongside takes one of them between the
// check and the server's bind.
const (
	PortsLow  = 10000
	PortsSpan = 20000
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n different loopback TCP ports that were free: each is
// held until all are chosen (two calls of FreePort may get the same port
// back).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// ConsecutivePorts returns p such that the loopback TCP ports p..p+n-1
// were all free just now (for a server that binds a run of ports from a
// base port).
func ConsecutivePorts(t testing.TB, n int) int {
	t.Helper()
	for range 100 {
		p := PortsLow + rand.IntN(PortsSpan-n)
		if free(p, n) {
			return p
		}
	}
	t.Fatalf("testkit: no %d consecutive free ports in %d..%d", n, PortsLow, PortsLow+PortsSpan-1)
	return 0
}

// free reports whether ports p..p+n-1 could all be bound at once.
func free(p, n int) bool {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+i))
		if err != nil {
			return false
		}
		lns = append(lns, ln)
	}
	return true
}
