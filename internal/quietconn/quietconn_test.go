package quietconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
)

// pair returns the two ends of a real connection over network ("tcp" on
// loopback or "unix"), the dialled end wrapped.
func pair(t *testing.T, network string) (client net.Conn, server net.Conn) {
	t.Helper()
	c, s := testkit.ConnPair(t, network)
	w := Wrap(c)
	if _, ok := w.(*Conn); !ok {
		t.Fatalf("Wrap(%T) = %T, want *Conn", c, w)
	}
	return w, s
}

// TestReadWriteLikeNetConn: over TCP and a Unix socket, a wrapped
// connection moves 8 MiB each way (far more than a socket buffer, so
// writes wait in the poller), sees EOF when the peer half-closes, ends a
// blocked read at its deadline with a timeout error, and a read blocked
// when the connection is closed ends with net.ErrClosed.
func TestReadWriteLikeNetConn(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			c, s := pair(t, network)
			payload := bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)

			// Wrapped end writes, the plain end reads and echoes back.
			echoed := make(chan error, 1)
			go func() {
				buf := make([]byte, len(payload))
				if _, err := io.ReadFull(s, buf); err != nil {
					echoed <- err
					return
				}
				if !bytes.Equal(buf, payload) {
					echoed <- errors.New("server read different bytes")
					return
				}
				_, err := s.Write(buf)
				echoed <- err
			}()
			if n, err := c.Write(payload); err != nil || n != len(payload) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(payload))
			}
			got := make([]byte, len(payload))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatalf("reading the echo: %v", err)
			}
			if err := <-echoed; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatal("the echo differs from what was written")
			}

			// A deadline ends a read that finds nothing.
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			start := time.Now()
			n, err := c.Read(make([]byte, 10))
			var ne net.Error
			if n != 0 || !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("read past its deadline = %d, %v; want 0 and a timeout", n, err)
			}
			if d := time.Since(start); d < 40*time.Millisecond || d > 2*time.Second {
				t.Errorf("read with a 50ms deadline returned after %s", d)
			}
			c.SetReadDeadline(time.Time{})

			// The peer half-closes: EOF.
			if err := s.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Read(make([]byte, 10)); n != 0 || err != io.EOF {
				t.Errorf("read after the peer's CloseWrite = %d, %v; want 0, io.EOF", n, err)
			}

			// Our CloseWrite reaches the peer.
			if err := c.(*Conn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			s.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
				t.Errorf("peer's read after our CloseWrite = %d, %v; want 0, io.EOF", n, err)
			}
		})
	}
}

// TestCloseEndsABlockedRead: Close from another goroutine ends a read
// waiting in the poller with net.ErrClosed, and a write to a peer that has
// gone fails rather than hangs.
func TestCloseEndsABlockedRead(t *testing.T) {
	c, s := pair(t, "tcp")
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read ended by Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a blocked read")
	}

	c2, s2 := pair(t, "tcp")
	s2.Close()
	s.Close()
	var err error
	for range 100 { // the first writes may land in the buffer before the reset comes back
		if _, err = c2.Write([]byte("x")); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" {
		t.Errorf("writing to a closed peer: %v, want a write *net.OpError", err)
	}
}

// TestWrapLeavesOthersAlone: what is not a TCP or Unix stream connection
// comes back unwrapped.
func TestWrapLeavesOthersAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if w := Wrap(a); w != a {
		t.Errorf("Wrap(net.Pipe end) = %T, want it unchanged", w)
	}
	u, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "g"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if w := Wrap(u); w != net.Conn(u) {
		t.Errorf("Wrap(unixgram) = %T, want it unchanged", w)
	}
}

// TestListenerWraps: Listener's Accept hands out wrapped connections.
func TestListenerWraps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ql := Listener{Listener: ln}
	defer ql.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := ql.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Accept gave %T, want *Conn", c)
	}
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hi" {
		t.Errorf("read %q, %v; want \"hi\"", b, err)
	}
}

// BenchmarkPingPong: a 64-byte message to an echoing peer and back over
// loopback TCP, through net.Conn and through a Conn (allocations per round
// trip reported; a Conn's must be zero).
func BenchmarkPingPong(b *testing.B) {
	for _, wrap := range []bool{false, true} {
		name := "net.Conn"
		if wrap {
			name = "quietconn"
		}
		b.Run(name, func(b *testing.B) {
			c, s := testkit.ConnPair(b, "tcp")
			if wrap {
				c = Wrap(c)
			}
			go io.Copy(s, s)
			msg := make([]byte, 64)
			buf := make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadWriteAllocateNothing: the poller's callbacks are bound once, so
// a Write and a Read of a Conn allocate nothing.
func TestReadWriteAllocateNothing(t *testing.T) {
	c, s := pair(t, "tcp")
	go io.Copy(s, s)
	msg, buf := make([]byte, 64), make([]byte, 64)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per write and read, want 0", allocs)
	}
}
