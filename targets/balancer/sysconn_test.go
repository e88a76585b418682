package balancer

import (
	"bytes"
	"errors"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// pair returns both ends of a real connection over network ("tcp" on
// loopback or "unix").
func pair(t *testing.T, network string) (a, b net.Conn) {
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
	a, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// Bytes written through a sysConn arrive whole, and bytes read through one
// are those sent, for a stream far larger than the socket buffers (so
// writes hit EAGAIN and wait, and reads come in pieces); then EOF.
func TestSysConnStream(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			a, b := pair(t, network)
			sa, sb := newSysConn(a), newSysConn(b)
			if _, ok := sa.(*sysConn); !ok {
				t.Fatalf("newSysConn(%T) = %T, want *sysConn", a, sa)
			}
			want := make([]byte, 16<<20)
			for i := range want {
				want[i] = byte(i * 7)
			}
			werr := make(chan error, 1)
			go func() {
				n, err := sa.Write(want)
				if err == nil && n != len(want) {
					err = io.ErrShortWrite
				}
				a.Close()
				werr <- err
			}()
			got, err := io.ReadAll(sb)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if err := <-werr; err != nil {
				t.Fatalf("write: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, differing from the %d written", len(got), len(want))
			}
		})
	}
}

// A read past the connection's deadline fails as net.Conn's does: a
// net.Error whose Timeout() is true; clearing the deadline makes the next
// read wait for data again.
func TestSysConnDeadline(t *testing.T) {
	a, b := pair(t, "tcp")
	sb := newSysConn(b)
	b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := sb.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	b.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Write([]byte("hi"))
	}()
	buf := make([]byte, 8)
	if n, err := sb.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("read after clearing the deadline: %q, %v", buf[:n], err)
	}
}

// A peer's reset is seen as syscall.ECONNRESET (isReset), as with net.Conn.
func TestSysConnReset(t *testing.T) {
	a, b := pair(t, "tcp")
	a.(*net.TCPConn).SetLinger(0) // close sends RST
	a.Close()
	time.Sleep(20 * time.Millisecond)
	_, err := newSysConn(b).Read(make([]byte, 8))
	if !errors.Is(err, syscall.ECONNRESET) || !isReset(err) {
		t.Fatalf("read after the peer's reset: %v, want ECONNRESET", err)
	}
}

// Reading and writing allocate nothing.
func TestSysConnNoAllocs(t *testing.T) {
	a, b := pair(t, "tcp")
	sa, sb := newSysConn(a), newSysConn(b)
	msg, buf := []byte("ping"), make([]byte, 16)
	allocs := testing.AllocsPerRun(200, func() {
		sa.Write(msg)
		io.ReadFull(sb, buf[:len(msg)])
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per write and read, want 0", allocs)
	}
}
