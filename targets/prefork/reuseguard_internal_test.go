package prefork

import (
	"context"
	"net"
	"testing"
)

// TestOtherListeners: a socket listening with SO_REUSEPORT is found in
// /proc/net/tcp by address and port, told apart from the caller's own by
// inode, and not found on another port or address.
func TestOtherListeners(t *testing.T) {
	lc := net.ListenConfig{Control: setReusePort}
	a, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	addr := a.Addr().(*net.TCPAddr)
	b, err := lc.Listen(context.Background(), "tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fa, _ := a.(*net.TCPListener).File()
	fb, _ := b.(*net.TCPListener).File()
	defer fa.Close()
	defer fb.Close()
	ia, _ := inodeOf(fa)
	ib, _ := inodeOf(fb)
	got, err := otherListeners(addr.IP, addr.Port, ia)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != ib {
		t.Errorf("others of %d: %v, want [%d]", ia, got, ib)
	}
	if got, _ := otherListeners(net.IPv4zero, addr.Port, ia); len(got) != 1 {
		t.Errorf("others on the unspecified address: %v, want 1", got)
	}
	if got, _ := otherListeners(net.ParseIP("127.0.0.2"), addr.Port, ia); len(got) != 0 {
		t.Errorf("others on 127.0.0.2: %v, want none", got)
	}
	if err := probeExclusive(addr.String()); err == nil {
		t.Errorf("a plain bind on a port held with SO_REUSEPORT succeeded")
	}
}
