package prefork

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/lbbench/lbbench/internal/procnet"
)

// A port that another process already listens on with SO_REUSEPORT would
// accept our SO_REUSEPORT bind, and the kernel would then split
// connections between its sockets and ours. The reuseport mode refuses it
// in two steps:
//
//  1. probe: before the first SO_REUSEPORT bind, bind the address once
//     without SO_REUSEPORT and close that socket; a listener already there,
//     with SO_REUSEPORT or not, makes that bind fail;
//  2. verify: right after the first SO_REUSEPORT socket listens, look for
//     any other listening socket on the same address and port in
//     /proc/net/tcp and tcp6 (by inode, so our own is told apart); one
//     there means a stranger bound in the moment between the two steps.
//
// Both steps together leave no window in which a listener that was there
// before ours goes unnoticed. One that binds after step 2 joins a group
// that is already ours, as SO_REUSEPORT lets any socket of the same user
// do; that is not something a bind can prevent, so it is detected instead:
// Foreign counts the listening sockets on the port that are not the
// workers', and every /stats answer reports them (StatsReport.Foreign).

// probeExclusive binds addr without SO_REUSEPORT and closes it at once; it
// fails when anything listens there already.
func probeExclusive(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ln.Close()
}

// otherListeners returns the inodes of the sockets listening on ip:port
// (or on the unspecified address of its family, or any address when ip is
// unspecified) other than the socket of inode own.
func otherListeners(ip net.IP, port int, own uint64) ([]uint64, error) {
	socks, err := procnet.TCP()
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, s := range socks {
		if s.State != procnet.Listen || s.Port != port || s.Inode == own {
			continue
		}
		if ip.IsUnspecified() || s.IP.IsUnspecified() || s.IP.Equal(ip) {
			out = append(out, s.Inode)
		}
	}
	return out, nil
}

// inodeOf returns the inode of the socket f.
func inodeOf(f *os.File) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// sharedPortError says a reuseport port is already held by another
// process.
type sharedPortError struct {
	addr string
	err  error
}

func (e *sharedPortError) Error() string {
	return fmt.Sprintf("prefork: listen %s: address already in use: another process listens there (with SO_REUSEPORT, the kernel would split connections between it and these workers); choose another --%s (%v)", e.addr, FlagPort, e.err)
}

func (e *sharedPortError) Unwrap() error { return e.err }

// Foreign counts the sockets listening on the reuseport group's address
// that are not the workers' own: a same-user process that bound the port
// with SO_REUSEPORT after the workers did takes a share of their
// connections. It is 0 in other modes, and when the workers bind their
// own sockets (an Exec without {fd}), which cannot be told apart.
func (s *Supervisor) Foreign() (int, error) {
	if s.cfg.Listen != ReusePort || len(s.slots) == 0 {
		return 0, nil
	}
	own := map[uint64]bool{}
	for _, sl := range s.slots {
		if sl.socks.ino == 0 {
			return 0, nil
		}
		own[sl.socks.ino] = true
	}
	addr, err := net.ResolveTCPAddr("tcp", s.slots[0].socks.endpoint)
	if err != nil {
		return 0, err
	}
	all, err := otherListeners(addr.IP, addr.Port, 0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ino := range all {
		if !own[ino] {
			n++
		}
	}
	return n, nil
}
