package prefork

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sockets are the listening sockets made for one worker, as files to hand
// to its child.
type sockets struct {
	main, admin         *os.File
	mainAddr, adminAddr string
}

func closeSockets(socks []sockets) {
	for _, s := range socks {
		s.main.Close()
		s.admin.Close()
	}
}

// listen makes every worker's sockets. On error it closes those it made.
func listen(ctx context.Context, cfg Config) ([]sockets, error) {
	var lc net.ListenConfig
	if cfg.Listen == ReusePort {
		lc.Control = setReusePort
	}
	socks := make([]sockets, cfg.Workers)
	port := cfg.Port
	for i := range socks {
		p := port
		if cfg.Listen == Ports {
			p += i
		}
		main, addr, err := listenFile(ctx, lc, net.JoinHostPort(cfg.Host, strconv.Itoa(p)))
		if err != nil {
			closeSockets(socks[:i])
			return nil, err
		}
		if port == 0 {
			// The first socket got a kernel-chosen port; the others
			// join it.
			port = addr.Port
		}
		admin, adminAddr, err := listenFile(ctx, net.ListenConfig{}, "127.0.0.1:0")
		if err != nil {
			main.Close()
			closeSockets(socks[:i])
			return nil, err
		}
		socks[i] = sockets{main: main, admin: admin, mainAddr: addr.String(), adminAddr: adminAddr.String()}
	}
	return socks, nil
}

// listenFile listens on addr and returns the socket as a file, closing the
// listener: the file keeps the socket open.
func listenFile(ctx context.Context, lc net.ListenConfig, addr string) (*os.File, *net.TCPAddr, error) {
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, nil, &addrInUseError{addr: addr, err: err}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("prefork: listen %s: %w", addr, err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, nil, fmt.Errorf("prefork: listen %s: %w", addr, err)
	}
	return f, ln.Addr().(*net.TCPAddr), nil
}

func setReusePort(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); cerr != nil {
		return cerr
	}
	return os.NewSyscallError("setsockopt SO_REUSEPORT", err)
}

// addrInUseError says what to do about a port in use and wraps the
// original error.
type addrInUseError struct {
	addr string
	err  error
}

func (e *addrInUseError) Error() string {
	return "prefork: listen " + e.addr + ": address already in use (is another server running? pick another --port)"
}

func (e *addrInUseError) Unwrap() error { return e.err }
