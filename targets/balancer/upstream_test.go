package balancer

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// The idle pool gives back the connection put last (nginx's keepalive
// cache does too), keeps at most max, and closes connections idle longer
// than idleConnTimeout, whether they are on top (take) or at the bottom
// (put).
func TestIdlePoolLIFO(t *testing.T) {
	conn := func() (*upConn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &upConn{Conn: a}, b
	}
	closed := func(peer net.Conn) bool {
		peer.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := peer.Read(make([]byte, 1))
		return errors.Is(err, io.EOF)
	}
	p := &idlePool{max: 2}
	c1, _ := conn()
	c2, _ := conn()
	c3, _ := conn()
	if !p.put(c1) || !p.put(c2) {
		t.Fatal("put refused below max")
	}
	if p.put(c3) {
		t.Fatal("put kept a third connection with max 2")
	}
	if got := p.take(); got != c2 {
		t.Fatal("take did not return the connection put last")
	}
	if got := p.take(); got != c1 {
		t.Fatal("second take did not return the one put before")
	}
	if p.take() != nil || p.len() != 0 {
		t.Fatal("take on an empty pool returned a connection")
	}

	// Aged on top: take closes it and returns nothing.
	old, oldPeer := conn()
	p.put(old)
	old.idleAt -= int64(idleConnTimeout) + 1
	if p.take() != nil {
		t.Fatal("take returned a connection idle past idleConnTimeout")
	}
	if !closed(oldPeer) {
		t.Error("the aged connection take skipped is not closed")
	}

	// Aged at the bottom: the next put closes it.
	old, oldPeer = conn()
	fresh, _ := conn()
	p.put(old)
	old.idleAt -= int64(idleConnTimeout) + 1
	p.put(fresh)
	if p.len() != 1 {
		t.Fatalf("pool holds %d connections after put, want 1 (the aged one closed)", p.len())
	}
	if !closed(oldPeer) {
		t.Error("the aged connection at the bottom is not closed")
	}
	if p.take() != fresh {
		t.Error("take did not return the fresh connection")
	}
}
