package testkit

import (
	"net"
	"path/filepath"
	"testing"
)

// ConnPair returns both ends of a real connection over network ("tcp" on
// loopback, or "unix" in a socket under t's temporary directory): the end
// that dialled and the end that was accepted. Both close when t ends.
func ConnPair(t testing.TB, network string) (dialled, accepted net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	dialled, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	accepted = <-acc
	if accepted == nil {
		dialled.Close()
		t.Fatal("testkit: accepting the connection failed")
	}
	t.Cleanup(func() { dialled.Close(); accepted.Close() })
	return dialled, accepted
}
