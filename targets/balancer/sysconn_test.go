package balancer

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"golang.org/x/sys/unix"
)

// pair returns both ends of a real connection over network ("tcp" on
// loopback or "unix").
func pair(t *testing.T, network string) (a, b net.Conn) {
	return testkit.ConnPair(t, network)
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
	waitReadable(t, b) // the reset has come
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

// answerAfter reads one message of n bytes on c, then, after delay, writes
// answer; it reports what it read.
func answerAfter(c net.Conn, n int, delay time.Duration, answer string) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, n)
		k, _ := io.ReadFull(c, buf)
		time.Sleep(delay)
		c.Write([]byte(answer))
		got <- buf[:k]
	}()
	return got
}

// A held write is sent by the next Read, which then waits for the answer
// without a read that finds nothing; without holdWrite the same exchange
// costs at least one (the control: the counter can tell the two apart).
func TestSysConnHeldWrite(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			for _, hold := range []bool{false, true} {
				a, b := pair(t, network)
				sa := newSysConn(a).(*sysConn)
				if hold {
					sa.holdWrite()
				}
				if n, err := sa.Write([]byte("ping")); n != 4 || err != nil {
					t.Fatalf("hold=%v: Write = %d, %v", hold, n, err)
				}
				if hold {
					// Nothing is sent before the Read.
					b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
					if n, err := b.Read(make([]byte, 4)); n != 0 || err == nil {
						t.Fatalf("a held write reached the peer before any Read: %d bytes, %v", n, err)
					}
					b.SetReadDeadline(time.Time{})
				}
				got := answerAfter(b, 4, 30*time.Millisecond, "pong")
				buf := make([]byte, 16)
				n, err := sa.Read(buf)
				if err != nil || string(buf[:n]) != "pong" {
					t.Fatalf("hold=%v: Read = %q, %v; want pong", hold, buf[:n], err)
				}
				if sent := <-got; string(sent) != "ping" {
					t.Fatalf("hold=%v: the peer read %q, want ping", hold, sent)
				}
				switch {
				case hold && sa.empty != 0:
					t.Errorf("held write: %d reads found nothing, want 0", sa.empty)
				case !hold && sa.empty == 0:
					t.Errorf("control: no read found nothing; the counter cannot tell a held write apart")
				}
				// The next Write is sent at once again.
				got = answerAfter(b, 3, 0, "ok")
				if _, err := sa.Write([]byte("bye")); err != nil {
					t.Fatal(err)
				}
				if sent := <-got; string(sent) != "bye" {
					t.Fatalf("write after a held one: the peer read %q", sent)
				}
			}
		})
	}
}

// A held write larger than the socket's buffers is sent whole: Read writes
// what fits, waits for room for the rest, then reads the answer.
func TestSysConnHeldWriteLarge(t *testing.T) {
	a, b := pair(t, "tcp")
	sa := newSysConn(a).(*sysConn)
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 13)
	}
	got := answerAfter(b, len(want), 0, "done")
	sa.holdWrite()
	if n, err := sa.Write(want); n != len(want) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	buf := make([]byte, 16)
	n, err := io.ReadAtLeast(sa, buf, 4)
	if err != nil || string(buf[:n]) != "done" {
		t.Fatalf("Read = %q, %v; want done", buf[:n], err)
	}
	if sent := <-got; !bytes.Equal(sent, want) {
		t.Fatalf("the peer read %d bytes, differing from the %d written", len(sent), len(want))
	}
}

// A held write to a peer that is gone fails in the Read that sends it,
// with an error isStale takes for a stale connection (so the forwarder
// retries a request on a reused one): a peer that reset the connection,
// and one that closed it (FIN, no reset) before the write, where the
// write reaches a closed socket whose reset wakes the wait.
func TestSysConnHeldWriteToGonePeer(t *testing.T) {
	for _, tc := range []struct {
		name, peer string
		reset      bool
	}{
		{"reset", "a reset peer", true},
		{"closed", "a closed peer", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pair(t, "tcp")
			if tc.reset {
				b.(*net.TCPConn).SetLinger(0) // close sends RST
			}
			b.Close()
			waitReadable(t, a) // the close or the reset has come
			sa := newSysConn(a).(*sysConn)
			sa.holdWrite()
			if _, err := sa.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
				t.Fatalf("held Write: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := sa.Read(make([]byte, 16))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !isStale(err) {
					t.Fatalf("Read after a held write to %s: %v, want a stale-connection error", tc.peer, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Read after a held write to %s still waiting after 5s: the peer's end came before the wait and was missed", tc.peer)
			}
		})
	}
}

// waitReadable waits, up to 5 s, until c's socket is readable (or has an
// error or its end pending): poll(2) on it, so that what the peer did has
// arrived, without reading it.
func waitReadable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var perr error
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, perr = unix.Poll(fds, 5000)
			if perr != unix.EINTR {
				return
			}
		}
	})
	if perr != nil || n == 0 {
		t.Fatalf("the socket is not readable after 5 s (%v)", perr)
	}
}
