package procnet

import (
	"net"
	"testing"
)

// TestParseRow: a row of /proc/net/tcp and one of tcp6 as the kernel
// writes them, and rows that are not.
func TestParseRow(t *testing.T) {
	s, ok := parseRow("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1165 1 0000000000000000 100 0 0 10 0")
	if !ok || !s.IP.Equal(net.IPv4(127, 0, 0, 1)) || s.Port != 8080 || s.State != Listen || s.Inode != 1165 {
		t.Errorf("tcp row: %+v %v", s, ok)
	}
	s, ok = parseRow("   1: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 01 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 20 4 0 10 -1")
	if !ok || !s.IP.Equal(net.IPv6loopback) || s.Port != 80 || s.State != Established || s.Inode != 77 {
		t.Errorf("tcp6 row: %+v %v", s, ok)
	}
	for _, bad := range []string{"", "sl local_address", "0: 0100007F 00000000:0000 0A 0 0 0 0 0 1165", "0: 0100007F:1F90 00000000:0000 ZZ 0 0 0 0 0 1165", "0: 0100007F:1F90 00000000:0000 0A 0 0 0 0 0 x"} {
		if s, ok := parseRow(bad); ok {
			t.Errorf("parseRow(%q) = %+v, want refused", bad, s)
		}
	}
}

// TestTCPFindsAConnection: a listener and a connection to it on loopback
// are in the tables: the listener in state Listen, both of the
// connection's ends Established, one of them on the listener's port.
func TestTCPFindsAConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	socks, err := TCP()
	if err != nil {
		t.Fatal(err)
	}
	n := map[int]int{}
	for _, s := range socks {
		if s.Port == port && s.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			n[s.State]++
		}
	}
	if n[Listen] != 1 || n[Established] != 1 {
		t.Errorf("sockets on port %d by state: %v, want one listening and one established (not yet accepted)", port, n)
	}
}
