// Package quietconn makes a socket's reads and writes without waking the Go
// runtime's monitor thread.
//
// A read or write through net.Conn enters the runtime's syscall state, and
// when the process had been idle (every P parked, as a load generator or a
// worker is between requests at a few thousand a second) that entry wakes
// the runtime's monitor thread (sysmon) from its deep sleep, which then
// polls every 20µs for a while. On a virtual machine each such wake-up
// costs more than the system call itself: with the pacer's nanosleep, about
// a seventh of the load generator's CPU at 5,000 requests a second,
// measured with perf on the project's 2-vCPU machine. A read or write on a
// non-blocking socket never blocks in the kernel, so it can be made as a
// raw system call, which skips that bookkeeping; when the socket is not
// ready the goroutine waits in the runtime's network poller, as net.Conn's
// own methods do.
package quietconn

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is a stream socket whose Read and Write are raw system calls. Every
// other method is the wrapped connection's; deadlines and Close end a wait
// in the poller as they do for it. The functions the poller calls are bound
// once, so a Read or Write allocates nothing.
type Conn struct {
	net.Conn
	rc syscall.RawConn

	rmu    sync.Mutex // one Read at a time: it holds rp, rn, rerr
	rp     []byte
	rn     int
	rerr   syscall.Errno
	readFn func(uintptr) bool

	wmu     sync.Mutex // one Write at a time: it holds wp, wn, werr
	wp      []byte
	wn      int
	werr    syscall.Errno
	writeFn func(uintptr) bool
}

// Wrap returns c as a Conn if it is a TCP or Unix stream connection whose
// descriptor can be reached, and c itself otherwise.
func Wrap(c net.Conn) net.Conn {
	var sc syscall.Conn
	switch c := c.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		if c.LocalAddr() == nil || c.LocalAddr().Network() != "unix" { // unixgram and unixpacket keep message boundaries
			return c
		}
		sc = c
	default:
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	q := &Conn{Conn: c, rc: rc}
	q.readFn, q.writeFn = q.read, q.write
	return q
}

// Read reads into p as read(2) does, waiting in the poller while nothing
// is there; it returns io.EOF when the peer closed its end.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rp, c.rn, c.rerr = p, 0, 0
	err := c.rc.Read(c.readFn)
	n, errno := c.rn, c.rerr
	c.rp = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is Read's step in the poller: false means "not ready, wait".
func (c *Conn) read(fd uintptr) bool {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rp[0])), uintptr(len(c.rp)))
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false // nothing to read yet: wait in the poller
		}
		c.rn, c.rerr = int(r), e
		return true
	}
}

// Write writes all of p, waiting in the poller while the socket's buffer
// is full, or returns how much it wrote and why it stopped.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wp, c.wn, c.werr = p, 0, 0
	err := c.rc.Write(c.writeFn)
	n, errno := c.wn, c.werr
	c.wp = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// write is Write's step in the poller: false means "the buffer is full,
// wait".
func (c *Conn) write(fd uintptr) bool {
	for c.wn < len(c.wp) {
		r, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.wp[c.wn])), uintptr(len(c.wp)-c.wn))
		switch e {
		case 0:
			c.wn += int(r)
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// CloseWrite shuts down the writing side when the wrapped connection can,
// as http.Server does before it closes a connection.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// opError wraps err as net.Conn's methods do, naming both ends.
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Listener wraps every connection its listener accepts (Wrap).
type Listener struct{ net.Listener }

// Accept waits for the next connection and wraps it.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}
