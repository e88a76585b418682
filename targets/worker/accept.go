package worker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// acceptWake bounds how long the epoll-exclusive listener stays in one
// epoll_wait(2): Close takes effect within it.
const acceptWake = 250 * time.Millisecond

// ListenFD returns a listener over fd, a listening TCP or Unix socket such
// as one inherited from a supervisor, accepting with the given strategy
// (one of AcceptStrategies(); empty means DefaultAccept). It takes
// ownership of fd: on error fd is closed, and closing the listener closes
// it.
//
// The strategies change the socket's shared state, which every process
// holding the socket sees: AcceptBlocking clears O_NONBLOCK, the others set
// it. Workers sharing one socket must therefore all use the same strategy.
//
// Closing an AcceptBlocking listener on a TCP socket shuts the socket down
// for reading (shutdown(2) SHUT_RD): on Linux that is the only way to wake
// a thread blocked in accept (closing the descriptor does not, and the
// kernel ignores SO_RCVTIMEO on TCP accepts; Unix sockets honour it, and
// are not shut down). A listening socket shut down stops
// listening for every process that shares it and resets the connections
// still queued; the other workers' listeners see their accept fail and
// make the socket listen again (its port stays bound), so one worker
// draining does not stop the others.
func ListenFD(fd int, accept string) (net.Listener, error) {
	if accept == "" {
		accept = DefaultAccept
	}
	switch accept {
	case AcceptNetpoll:
		f := os.NewFile(uintptr(fd), "listener")
		defer f.Close() // the listener holds a duplicate
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("worker: listen on fd %d: %w", fd, err)
		}
		return ln, nil
	case AcceptBlocking, AcceptEpollExclusive:
		mode := waitBlocking
		if accept == AcceptEpollExclusive {
			mode = waitExclusive
		}
		ln, err := newRawListener(fd, mode)
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("worker: listen on fd %d (%s): %w", fd, accept, err)
		}
		return ln, nil
	case AcceptPoll:
		ln, err := newRawListener(fd, waitPoll)
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("worker: listen on fd %d (%s): %w", fd, accept, err)
		}
		return ln, nil
	default:
		unix.Close(fd)
		return nil, fmt.Errorf("worker: accept must be one of %v, got %q", AcceptStrategies(), accept)
	}
}

// rawListener accepts on a raw socket outside Go's netpoller, either in a
// blocking accept4(2) or after epoll_wait(2) on an EPOLLEXCLUSIVE epoll
// instance of its own. Accepted sockets are non-blocking and handed to the
// netpoller as ordinary net.Conns. Accept is called by one goroutine at a
// time (http.Server's accept loop); Close may be called from any.
type rawListener struct {
	mu     sync.Mutex // held by Accept while in a system call; Close waits for it
	fd     int
	epfd   int  // -1 in blocking and poll modes
	poll   bool // poll mode: poll(2) on the socket, afresh each time, when nothing is queued
	unix   bool // a Unix socket: SO_RCVTIMEO bounds a blocking accept
	sa     unix.Sockaddr
	addr   net.Addr
	closed atomic.Bool
	// inAccept is true while Accept is in accept4 (blocking mode).
	inAccept atomic.Bool
	done     chan struct{} // closed by Close
	once     sync.Once
	events   [1]unix.EpollEvent
	// gate, when set (AcceptIdle), is asked right before every accept4
	// and epoll_wait: when it says no, Accept returns errBusy without
	// taking a connection.
	gate func() bool
}

var _ net.Listener = (*rawListener)(nil)

// How a rawListener waits when nothing is queued.
type waitMode int

const (
	// waitBlocking: in a blocking accept4.
	waitBlocking waitMode = iota
	// waitExclusive: in epoll_wait on an EPOLLEXCLUSIVE instance.
	waitExclusive
	// waitHerd: in epoll_wait without EPOLLEXCLUSIVE, woken for every
	// connection like Go's netpoller.
	waitHerd
	// waitPoll: a non-blocking accept4 first, and only when nothing is
	// queued a poll(2) on the socket, as a gunicorn sync worker's loop
	// does with select(2). poll registers the waiter on the socket afresh
	// each call (an epoll instance stays registered in the order it was
	// made), so every waiting worker is woken for a connection in the
	// order they began waiting, and a worker that just finished takes a
	// queued connection before it waits.
	waitPoll
)

// newRawListener makes a rawListener over fd that waits as mode says.
func newRawListener(fd int, mode waitMode) (*rawListener, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, os.NewSyscallError("getsockname", err)
	}
	if ok, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || ok == 0 {
		return nil, errors.New("not a listening socket")
	}
	l := &rawListener{fd: fd, epfd: -1, sa: sa, addr: sockaddrToAddr(sa), done: make(chan struct{})}
	_, l.unix = sa.(*unix.SockaddrUnix)
	if mode == waitPoll {
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, os.NewSyscallError("fcntl", err)
		}
		l.poll = true
		return l, nil
	}
	if mode == waitBlocking {
		if err := unix.SetNonblock(fd, false); err != nil {
			return nil, os.NewSyscallError("fcntl", err)
		}
		if l.unix {
			// Unix sockets honour SO_RCVTIMEO in accept (TCP ones do
			// not): a blocked accept returns EAGAIN every acceptWake.
			tv := unix.NsecToTimeval(acceptWake.Nanoseconds())
			if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				return nil, os.NewSyscallError("setsockopt SO_RCVTIMEO", err)
			}
		}
		return l, nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if mode == waitExclusive {
		ev.Events |= unix.EPOLLEXCLUSIVE
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl EPOLLEXCLUSIVE", err)
	}
	l.epfd = epfd
	return l, nil
}

// blocking reports whether l waits in a blocking accept4.
func (l *rawListener) blocking() bool { return l.epfd < 0 && !l.poll }

// Accept waits for and returns the next connection. After Close it returns
// net.ErrClosed; a connection the kernel handed over meanwhile is still
// returned, so that it is served rather than dropped.
func (l *rawListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.closed.Load() {
			return nil, net.ErrClosed
		}
		if l.gate != nil && !l.gate() {
			return nil, errBusy
		}
		l.inAccept.Store(true)
		nfd, _, err := unix.Accept4(l.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		l.inAccept.Store(false)
		switch {
		case err == nil:
			return fileConn(nfd)
		case errors.Is(err, unix.EAGAIN) && l.epfd >= 0:
			// Nothing queued (or another worker woke too and took it):
			// wait for the kernel to pick this worker.
			if _, err := unix.EpollWait(l.epfd, l.events[:], int(acceptWake/time.Millisecond)); err != nil && !errors.Is(err, unix.EINTR) {
				return nil, os.NewSyscallError("epoll_wait", err)
			}
		case errors.Is(err, unix.EAGAIN) && l.poll:
			fds := []unix.PollFd{{Fd: int32(l.fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, int(acceptWake/time.Millisecond)); err != nil && !errors.Is(err, unix.EINTR) {
				return nil, os.NewSyscallError("poll", err)
			}
		case errors.Is(err, unix.EINVAL):
			// The socket no longer listens: this listener's Close, or
			// another process sharing the socket (a worker that drained),
			// shut it down. The port stays bound, so a listener that is
			// not closing listens again and the others keep serving.
			if !l.closed.Load() && l.relisten() == nil {
				continue
			}
			l.mu.Unlock()
			<-l.done
			l.mu.Lock()
			return nil, net.ErrClosed
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			// Interrupted: look at closed and wait again.
		case errors.Is(err, unix.ECONNABORTED), errors.Is(err, unix.EPROTO):
			// The client gave up before we accepted: not our failure.
		case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE), errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.ENOMEM):
			// Out of resources: http.Server retries errors that say so,
			// with a backoff.
			return nil, &tempError{os.NewSyscallError("accept4", err)}
		default:
			return nil, os.NewSyscallError("accept4", err)
		}
	}
}

// relisten makes the socket listen again on its address after another
// process shut it down. A port the kernel chose (bound as port 0) was
// released by the shutdown, though getsockname still shows it: bind it
// again first; EINVAL means it is still bound.
func (l *rawListener) relisten() error {
	if err := unix.Bind(l.fd, l.sa); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return unix.Listen(l.fd, unix.SOMAXCONN)
}

// Close makes Accept return net.ErrClosed and closes the socket once no
// Accept is in a system call. A blocking TCP listener shuts the socket
// down first, to wake a blocked accept (see ListenFD); the others take up
// to acceptWake. It is idempotent.
func (l *rawListener) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	close(l.done)
	if l.blocking() && !l.unix {
		l.shutdownUntilReturned()
	} else {
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	if l.epfd >= 0 {
		unix.Close(l.epfd)
	}
	return unix.Close(l.fd)
}

// shutdownUntilReturned shuts a blocking TCP socket down to wake this
// listener's Accept from accept4, and takes mu once Accept has returned.
// One shutdown is not always enough: another process sharing the socket,
// woken by it, listens again (see Accept's EINVAL case), and if it does so
// between this listener's last look at closed and its accept4, that
// accept blocks on a listening socket that nothing will wake (found as a
// worker killed at the supervisor's stop deadline,
// TestSharedAcceptStrategies/blocking). So while Accept stays in accept4
// for acceptWake after a shutdown, the shutdown is made again.
func (l *rawListener) shutdownUntilReturned() {
	unix.Shutdown(l.fd, unix.SHUT_RD)
	t := time.NewTicker(acceptWake / 25)
	defer t.Stop()
	var blockedSince time.Time
	for !l.mu.TryLock() {
		<-t.C
		switch {
		case !l.inAccept.Load():
			blockedSince = time.Time{} // on its way out
		case blockedSince.IsZero():
			blockedSince = time.Now()
		case time.Since(blockedSince) >= acceptWake:
			unix.Shutdown(l.fd, unix.SHUT_RD)
			blockedSince = time.Time{}
		}
	}
}

// Addr returns the socket's local address.
func (l *rawListener) Addr() net.Addr { return l.addr }

// fileConn turns an accepted socket into a net.Conn registered with the
// netpoller, closing nfd (the conn holds a duplicate).
func fileConn(nfd int) (net.Conn, error) {
	f := os.NewFile(uintptr(nfd), "conn")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, &tempError{fmt.Errorf("worker: wrap accepted socket: %w", err)}
	}
	return c, nil
}

// tempError is an accept error after which accepting may succeed again;
// http.Server retries such errors instead of stopping.
type tempError struct{ err error }

func (e *tempError) Error() string   { return e.err.Error() }
func (e *tempError) Unwrap() error   { return e.err }
func (e *tempError) Temporary() bool { return true }
func (e *tempError) Timeout() bool   { return false }

func sockaddrToAddr(sa unix.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: sa.Name, Net: "unix"}
	}
	return &net.UnixAddr{Net: "unix"}
}

// limitListener stops accepting while max connections it accepted are
// open: Accept waits for one to close first.
type limitListener struct {
	net.Listener
	tokens chan struct{} // one value per open connection
	done   chan struct{} // closed by Close
	once   sync.Once
}

func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, tokens: make(chan struct{}, max), done: make(chan struct{})}
}

// Accept waits for a free connection slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.tokens <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.tokens
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.tokens }}, nil
}

// Close stops Accept, including one waiting for a slot, and closes the
// inner listener. It is idempotent.
func (l *limitListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// limitConn frees its slot when closed the first time.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// CloseWrite half-closes the connection when the inner one can, as
// http.Server does before closing.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
