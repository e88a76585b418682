package prefork

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// UnixPrefix starts an endpoint that is a Unix socket path, as in
// "unix:/run/lbbench/worker-0.sock" (the form nginx uses).
const UnixPrefix = "unix:"

// maxSocketPath is the longest Unix socket path the kernel takes
// (sizeof(sun_path) - 1).
const maxSocketPath = 107

// SocketPath returns the path of worker i's Unix socket in dir.
func SocketPath(dir string, i int) string {
	return filepath.Join(dir, "worker-"+strconv.Itoa(i)+".sock")
}

// SharedSocketPath returns the path of the one Unix socket that every
// worker shares in Shared mode with a socket dir.
func SharedSocketPath(dir string) string { return filepath.Join(dir, "shared.sock") }

// unixSockets reports whether cfg's workers listen on Unix sockets: one
// each (Unix) or one for all (Shared with a socket dir).
func (c Config) unixSockets() bool {
	return c.Listen == Unix || (c.Listen == Shared && c.SocketDir != "")
}

// layout is where the workers listen: one endpoint per worker and, per
// child process (slot), the sockets it inherits.
type layout struct {
	endpoints []string
	slots     []slotSockets
	files     []*os.File // every socket made, once each, to close
	paths     []string   // Unix socket files to remove on Stop
	madeDir   string     // the socket dir, if listen made it
}

// slotSockets are the sockets and addresses of one child process. main is
// nil when the child binds its own endpoint (an Exec without {fd}); admin
// is nil for an Exec.
type slotSockets struct {
	endpoint    string // what the child serves: "host:port" or "unix:/path"
	main, admin *os.File
	adminAddr   string
	port        int    // TCP port, 0 in Unix mode
	socket      string // Unix socket path, "" in TCP modes
	ino         uint64 // main's inode, for TCP (it outlives main: Start may close its copy)
}

func (l *layout) close() {
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
}

// removeSockets removes the Unix socket files.
func (l *layout) removeSockets() {
	for _, p := range l.paths {
		os.Remove(p)
	}
	if l.madeDir != "" {
		os.Remove(l.madeDir) // only if empty: a file of someone else's stays
	}
}

// listen makes the sockets for cfg (with its defaults). On error it closes
// those it made.
func listen(ctx context.Context, cfg Config) (*layout, error) {
	l := &layout{}
	if err := l.listen(ctx, cfg); err != nil {
		l.close()
		l.removeSockets()
		return nil, err
	}
	return l, nil
}

// unixSlot sets up slot i of the Unix listen mode: its socket path, and
// its listening socket when makeMain (otherwise the path is freed for a
// foreign server to bind).
func (l *layout) unixSlot(ctx context.Context, sl *slotSockets, dir string, i int, makeMain bool) error {
	sl.socket = SocketPath(dir, i)
	sl.endpoint = UnixPrefix + sl.socket
	if !makeMain {
		if err := freeSocketPath(sl.socket); err != nil {
			return err
		}
		l.paths = append(l.paths, sl.socket)
		return nil
	}
	f, err := l.listenUnix(ctx, sl.socket, false)
	if err != nil {
		return err
	}
	sl.main = f
	return nil
}

// sharedUnixSlot sets up the slot of Shared mode with a socket dir: every
// worker accepts on one Unix socket, dir/shared.sock, made once. (A
// foreign server there always takes it as {fd}: Config.Validate.)
func (l *layout) sharedUnixSlot(ctx context.Context, sl *slotSockets, dir string, shared **os.File) error {
	sl.socket = SharedSocketPath(dir)
	sl.endpoint = UnixPrefix + sl.socket
	if *shared == nil {
		f, err := l.listenUnix(ctx, sl.socket, false)
		if err != nil {
			return err
		}
		*shared = f
	}
	sl.main = *shared
	return nil
}

// portSlot sets up slot i of the reuseport and ports modes: its port
// and, when makeMain, its listening socket. The first reuseport socket
// refuses a port another process holds (reuseguard.go); a kernel-chosen
// port (port 0) is then the one the other slots join.
func (l *layout) portSlot(ctx context.Context, sl *slotSockets, cfg Config, i int, port *int, makeMain bool) error {
	p := *port
	if cfg.Listen == Ports {
		p = cfg.Port + i
	}
	sl.port = p
	if !makeMain {
		return nil
	}
	first := cfg.Listen == ReusePort && i == 0 && p != 0
	hostPort := net.JoinHostPort(cfg.Host, strconv.Itoa(p))
	if first {
		// Refuse a port another process holds (see reuseguard.go): step 1.
		if err := probeExclusive(hostPort); errors.Is(err, syscall.EADDRINUSE) {
			return &addrInUseError{addr: hostPort, err: err}
		}
	}
	f, addr, err := l.listenTCP(ctx, hostPort, cfg.Listen == ReusePort)
	if err != nil {
		return err
	}
	if first {
		// Step 2: nobody else bound between the probe and us.
		if err := l.onlyListener(f, addr); err != nil {
			return err
		}
	}
	sl.main = f
	if sl.ino, err = inodeOf(f); err != nil {
		return fmt.Errorf("prefork: listen %s: %w", addr, err)
	}
	if *port == 0 {
		// The first socket got a kernel-chosen port; the others join it.
		*port, sl.port = addr.Port, addr.Port
	}
	return nil
}

// finishSlot gives a slot its port and endpoint (finding a free port for
// a foreign server that binds its own), and its admin socket when the
// worker is built in.
func (l *layout) finishSlot(ctx context.Context, sl *slotSockets, cfg Config, port *int, makeMain, builtin bool) error {
	if !cfg.unixSockets() && !makeMain && *port == 0 {
		// A foreign server binds the port itself: find it one that is
		// free now.
		p, err := freePort(cfg.Host)
		if err != nil {
			return err
		}
		*port = p
	}
	if cfg.Listen == ReusePort || cfg.Listen == Shared {
		sl.port = *port
	}
	if !cfg.unixSockets() {
		sl.endpoint = net.JoinHostPort(cfg.Host, strconv.Itoa(sl.port))
	}
	if builtin {
		f, addr, err := l.listenTCP(ctx, "127.0.0.1:0", false)
		if err != nil {
			return err
		}
		sl.admin, sl.adminAddr = f, addr.String()
	}
	return nil
}

// listen makes every slot's sockets for cfg: the main socket(s) of its
// listen mode (or none, for a foreign server that binds its own), the
// endpoints, and an admin socket per built-in worker.
func (l *layout) listen(ctx context.Context, cfg Config) error {
	n := cfg.Workers
	builtin := cfg.Exec == nil
	makeMain := builtin || cfg.Exec.usesFD()
	slots := n
	if !builtin && cfg.Listen == Shared {
		slots = 1 // one foreign server forks its own workers
	}
	l.slots = make([]slotSockets, slots)

	if cfg.Listen == ReusePort && cfg.SocketDir != "" {
		// Ask the kernel for real, so the message reports what it says.
		_, err := l.listenUnix(ctx, SocketPath(cfg.SocketDir, 0), true)
		return err
	}
	if cfg.unixSockets() {
		if _, err := os.Stat(cfg.SocketDir); errors.Is(err, os.ErrNotExist) {
			l.madeDir = cfg.SocketDir
		}
		if err := os.MkdirAll(cfg.SocketDir, 0o755); err != nil {
			return fmt.Errorf("prefork: socket dir: %w", err)
		}
	}

	var shared *os.File
	port := cfg.Port
	for i := range l.slots {
		sl := &l.slots[i]
		var err error
		switch cfg.Listen {
		case Unix:
			err = l.unixSlot(ctx, sl, cfg.SocketDir, i, makeMain)
		case Shared:
			if cfg.SocketDir != "" {
				err = l.sharedUnixSlot(ctx, sl, cfg.SocketDir, &shared)
				break
			}
			if shared == nil && makeMain {
				var addr *net.TCPAddr
				if shared, addr, err = l.listenTCP(ctx, net.JoinHostPort(cfg.Host, strconv.Itoa(port)), false); err == nil {
					port = addr.Port
				}
			}
			sl.main = shared
		case ReusePort, Ports:
			err = l.portSlot(ctx, sl, cfg, i, &port, makeMain)
		}
		if err == nil {
			err = l.finishSlot(ctx, sl, cfg, &port, makeMain, builtin)
		}
		if err != nil {
			return err
		}
	}
	l.endpoints = make([]string, n)
	for i := range l.endpoints {
		l.endpoints[i] = l.slots[min(i, len(l.slots)-1)].endpoint
	}
	return nil
}

// listenTCP listens on addr and returns the socket as a file, closing the
// listener: the file keeps the socket open.
func (l *layout) listenTCP(ctx context.Context, addr string, reusePort bool) (*os.File, *net.TCPAddr, error) {
	var lc net.ListenConfig
	if reusePort {
		lc.Control = setReusePort
	}
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
	l.files = append(l.files, f)
	return f, ln.Addr().(*net.TCPAddr), nil
}

// listenUnix listens on the Unix socket path, after removing a stale
// socket file there, and returns the socket as a file. The path is removed
// by removeSockets.
func (l *layout) listenUnix(ctx context.Context, path string, reusePort bool) (*os.File, error) {
	if err := freeSocketPath(path); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	if reusePort {
		lc.Control = setReusePort
	}
	ln, err := lc.Listen(ctx, "unix", path)
	if reusePort && errors.Is(err, unix.EOPNOTSUPP) {
		return nil, &reusePortUnixError{path: path, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("prefork: listen unix %s: %w", path, err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // the children keep serving on it
	defer ul.Close()
	l.paths = append(l.paths, path)
	f, err := ul.File()
	if err != nil {
		return nil, fmt.Errorf("prefork: listen unix %s: %w", path, err)
	}
	l.files = append(l.files, f)
	return f, nil
}

// freeSocketPath makes sure nothing is at path: it removes a socket file
// nobody listens on, and reports a live socket or any other file.
func freeSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("prefork: unix socket path %s is %d bytes, longer than the kernel's limit of %d: pick a shorter socket dir", path, len(path), maxSocketPath)
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("prefork: unix socket %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("prefork: unix socket %s: a file that is not a socket is in the way", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return &addrInUseError{addr: path, err: syscall.EADDRINUSE, flag: "--" + FlagSocketDir}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("prefork: remove stale unix socket: %w", err)
	}
	return nil
}

// freePort returns a TCP port on host that was free a moment ago.
func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("prefork: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
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

// addrInUseError says what to do about an address in use and wraps the
// original error.
type addrInUseError struct {
	addr string
	err  error
	flag string // the flag to change; empty means --port
}

func (e *addrInUseError) Error() string {
	flag := e.flag
	if flag == "" {
		flag = "--" + FlagPort
	}
	return "prefork: listen " + e.addr + ": address already in use (is another server running? pick another " + flag + ")"
}

func (e *addrInUseError) Unwrap() error { return e.err }

// reusePortUnixError explains the kernel's refusal of SO_REUSEPORT on a
// Unix socket and wraps it.
type reusePortUnixError struct {
	path string
	err  error
}

func (e *reusePortUnixError) Error() string {
	return "prefork: listen unix " + e.path + " with SO_REUSEPORT: the kernel refuses SO_REUSEPORT on Unix sockets " +
		"(setsockopt: operation not supported); it balances TCP (and UDP) sockets only. " +
		"Use --listen unix (one socket per worker, behind a proxy) or --listen shared (one socket for all)"
}

func (e *reusePortUnixError) Unwrap() error { return e.err }

// onlyListener fails when a socket other than f listens on addr.
func (l *layout) onlyListener(f *os.File, addr *net.TCPAddr) error {
	ino, err := inodeOf(f)
	if err != nil {
		return fmt.Errorf("prefork: listen %s: %w", addr, err)
	}
	others, err := otherListeners(addr.IP, addr.Port, ino)
	if err != nil {
		return fmt.Errorf("prefork: listen %s: %w", addr, err)
	}
	if len(others) > 0 {
		return &sharedPortError{addr: addr.String(), err: fmt.Errorf("%d other listening sockets (inodes %v)", len(others), others)}
	}
	return nil
}
