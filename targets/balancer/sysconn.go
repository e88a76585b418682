package balancer

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// sysConn reads and writes a connection's socket with raw system calls,
// through its syscall.RawConn: the layer 7 forwarder's I/O, for client and
// upstream connections alike.
//
// Why: a net.Conn's Read and Write go through syscall.Syscall, which tells
// the scheduler a system call may block (entersyscall, exitsyscall, and a
// wake-up of the runtime's monitor thread when it sleeps). On loopback a
// write to the upstream wakes the worker and often gets this thread
// preempted inside the call; the monitor then sees the processor "in a
// system call" and hands it to another thread. Profiled under wrk at
// saturation with GOMAXPROCS=1, that hand-off and its context switches
// were the largest cost left after parsing. The sockets are non-blocking
// (the runtime's netpoller owns them), so a read or write never blocks: it
// returns EAGAIN, and RawConn.Read/Write then park the goroutine in the
// netpoller until the socket is ready, honouring the connection's
// deadlines exactly as net.Conn does. RawSyscall skips the scheduler's
// bookkeeping, which only matters for calls that can block.
//
// Errors match net.Conn's: *net.OpError wrapping an *os.SyscallError
// (errors.Is finds syscall.ECONNRESET) or the deadline error (Timeout()
// true); io.EOF at the end of the stream.
type sysConn struct {
	rc      syscall.RawConn
	network string
	p       []byte // the caller's buffer during Read or Write
	n       int
	errno   syscall.Errno
	held    bool               // the next Write is only recorded (holdWrite)
	pending []byte             // what a held Write recorded, sent by the next Read
	werrno  syscall.Errno      // the failure of sending pending
	empty   uint64             // reads that found nothing (EAGAIN): for tests
	inside  bool               // a session's step runs: Read reads fd at once
	fd      uintptr            // the socket, while inside
	drained bool               // inside: the last read left the socket empty
	unsure  bool               // drained by a read that returned bytes: see session
	stepFn  func() bool        // the session's step
	sessFn  func(uintptr) bool // s.sessionStep, bound once
	readFn  func(uintptr) bool // s.read and s.write, bound once (no
	writeFn func(uintptr) bool // allocation per call)
	peekFn  func(uintptr)      // s.peek, bound once
	peeked  int                // what peek found: idleQuiet, idleSent or idleClosed
}

// newSysConn returns nc's socket as a sysConn, or nc itself when it has
// none (not a *net.TCPConn or *net.UnixConn).
func newSysConn(nc net.Conn) io.ReadWriter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	s := &sysConn{rc: rc, network: nc.LocalAddr().Network()}
	s.readFn = s.read
	s.writeFn = s.write
	s.peekFn = s.peek
	s.sessFn = s.sessionStep
	return s
}

// errWouldBlock is Read's error inside a session when the socket has
// nothing: step should ask to wait. It is a timeout, as a read whose
// deadline had passed would be.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "read would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// session runs step inside one RawConn.Read until step returns false,
// waiting for the socket to be readable whenever step returns true. While
// step runs, Read reads the socket at once and returns errWouldBlock
// (which bufio keeps until the next Peek or Read) when it has nothing;
// Write works as usual. It returns RawConn.Read's error: a deadline, or
// the connection closed while waiting.
//
// Why: a server that has written a response reads for the next request,
// which cannot have come yet when the client waits for each response: a
// read that finds nothing, a wasted system call per request (about one per
// request under wrk: nginx and HAProxy know from their edge-triggered
// epoll that the socket is empty). Outside a session that read cannot be
// skipped, since RawConn.Read forgets the socket's earlier readiness
// before it calls back: bytes that came before the call (a pipelined
// request) would wait for the next ones. Inside one call every read is
// after that reset, so once a read has left the socket empty (fewer bytes
// than asked for, or EAGAIN) any later byte makes the socket ready again,
// and step may wait without another read (drained says so).
//
// One case escapes this: an end of stream (or an error) that came with
// the last bytes is not read with them, and makes no new readiness, so a
// wait after a read that returned bytes (unsure says so) could last until
// the connection's deadline when the peer has shut down its side. The
// caller must not wait for good on unsure: it ends such a wait soon (with
// a deadline) and reads again, in a new session.
//
// step must not read s through anything but Read (Read's own RawConn.Read
// would wait for the one running), and may ask to wait (return true) only
// when drained. Closing the connection waits until a running step returns
// (internal/poll's Close waits for the I/O in progress), so whatever step
// waits for besides this socket (an upstream) must be cut when the
// connection is closed (fastServer.Close does).
func (s *sysConn) session(step func() bool) error {
	s.stepFn = step
	err := s.rc.Read(s.sessFn)
	s.stepFn = nil
	return err
}

// sessionStep is session's RawConn.Read callback. It is called first, and
// again each time the socket has become readable: then it must read.
func (s *sysConn) sessionStep(fd uintptr) bool {
	s.inside, s.fd, s.drained, s.unsure = true, fd, false, false
	wait := s.stepFn()
	s.inside = false
	return !wait
}

// readNow is Read inside a session: read's one try, without a wait.
func (s *sysConn) readNow(p []byte) (int, error) {
	s.p, s.n, s.errno = p, 0, 0
	got := s.read(s.fd) // a session's socket holds no held write
	s.p = nil
	if !got {
		s.drained, s.unsure = true, false
		return 0, errWouldBlock
	}
	n, err := s.readResult(nil)
	s.drained = err == nil && n < len(p)
	s.unsure = s.drained
	return n, err
}

// holdWrite makes the next Write only record its bytes (keeping the
// slice: the caller must not change them before it reads) and the next
// Read send them, from inside RawConn.Read, and then wait for the socket
// to be readable without first trying a read.
//
// Why: a forwarder writes a request upstream and at once reads for the
// reply, which cannot have come yet: that read only says EAGAIN, a wasted
// system call on every request (profiled: 1.5 reads per request that
// returned EAGAIN, against none in nginx and HAProxy, which know from
// their edge-triggered epoll when a socket has nothing). RawConn.Read
// forgets the socket's earlier readiness before it calls its callback
// (internal/poll's prepareRead resets the netpoller's token), so it could
// miss bytes that came before the call; a write made inside the callback
// is after that reset, so every byte the peer sends in answer wakes the
// wait. Only for a peer that sends nothing unasked: an upstream HTTP
// server between a response and the next request. One that did send
// bytes unasked is never written to again: the pool closes a connection
// with bytes past a response's end (upstream.put), and looks at an idle
// one before reusing it (upConn.quiet), since such bytes would be read,
// late, as the next request's answer. One that closed meanwhile answers
// the write with a reset, which wakes the wait too.
func (s *sysConn) holdWrite() { s.held = true }

// peekIdle says whether the socket of an idle connection holds bytes
// (idleSent), its end or an error (idleClosed), or nothing (idleQuiet),
// without taking them and without waiting: one recv with MSG_PEEK and
// MSG_DONTWAIT. It goes through RawConn.Control, which does not touch the
// netpoller's readiness, so a later Read waits as it would have.
func (s *sysConn) peekIdle() int {
	if err := s.rc.Control(s.peekFn); err != nil {
		return idleClosed
	}
	return s.peeked
}

// peek is peekIdle's Control callback.
func (s *sysConn) peek(fd uintptr) {
	var b [1]byte
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			s.peeked = idleQuiet
		case e == 0 && n > 0:
			s.peeked = idleSent
		default:
			s.peeked = idleClosed
		}
		return
	}
}

// read is RawConn.Read's callback: false asks it to wait for readability.
func (s *sysConn) read(fd uintptr) bool {
	if s.pending != nil {
		for len(s.pending) > 0 {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.pending[0])), uintptr(len(s.pending)))
			switch e {
			case 0:
				s.pending = s.pending[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return true // Read writes the rest, waiting for room
			default:
				s.werrno, s.pending = e, nil
				return true
			}
		}
		s.pending = nil
		return false // no answer yet: wait for one without reading
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.p[0])), uintptr(len(s.p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			s.empty++
			return false
		}
		s.n, s.errno = int(n), e
		return true
	}
}

// write is RawConn.Write's callback: it writes all of s.p, returning false
// to wait for writability when the socket's buffer is full.
func (s *sysConn) write(fd uintptr) bool {
	for len(s.p) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.p[0])), uintptr(len(s.p)))
		switch e {
		case 0:
			s.n += int(n)
			s.p = s.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.errno = e
			return true
		}
	}
	return true
}

func (s *sysConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.inside {
		return s.readNow(p)
	}
	s.held = false // a holdWrite that no Write followed
	s.p, s.n, s.errno, s.werrno = p, 0, 0, 0
	err := s.rc.Read(s.readFn)
	s.p = nil
	if err == nil && s.werrno != 0 {
		return 0, &net.OpError{Op: "write", Net: s.network, Err: os.NewSyscallError("write", s.werrno)}
	}
	if err == nil && s.pending != nil {
		// The socket's buffer was full: write the rest, waiting for room,
		// then read as usual (trying first: the answer may be there).
		rest := s.pending
		s.pending = nil
		if _, err := s.Write(rest); err != nil {
			return 0, err
		}
		return s.Read(p)
	}
	return s.readResult(err)
}

// readResult is a read's outcome as net.Conn gives it, from RawConn.Read's
// error and what read recorded.
func (s *sysConn) readResult(err error) (int, error) {
	switch {
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: s.network, Err: err}
	case s.errno != 0:
		return 0, &net.OpError{Op: "read", Net: s.network, Err: os.NewSyscallError("read", s.errno)}
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

func (s *sysConn) Write(p []byte) (int, error) {
	if s.held && len(p) > 0 {
		s.held, s.pending = false, p
		return len(p), nil
	}
	s.p, s.n, s.errno = p, 0, 0
	err := s.rc.Write(s.writeFn)
	s.p = nil
	switch {
	case err != nil:
		return s.n, &net.OpError{Op: "write", Net: s.network, Err: err}
	case s.errno != 0:
		return s.n, &net.OpError{Op: "write", Net: s.network, Err: os.NewSyscallError("write", s.errno)}
	}
	return s.n, nil
}
