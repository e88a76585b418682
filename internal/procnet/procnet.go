// Package procnet reads the kernel's tables of TCP sockets, /proc/net/tcp
// and /proc/net/tcp6: every socket's local address, state and inode,
// whether or not its process has accepted it yet.
package procnet

import (
	"bufio"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"strings"
)

// States of a socket (the st column), as the kernel numbers them.
const (
	Established = 0x01
	Listen      = 0x0A
)

// Socket is one row of the tables.
type Socket struct {
	// IP and Port are the socket's local end.
	IP    net.IP
	Port  int
	State int
	Inode uint64
}

// TCP returns the sockets of /proc/net/tcp and /proc/net/tcp6 (a table
// the kernel lacks, tcp6 without IPv6, is skipped). Rows it cannot read
// are left out.
func TCP() ([]Socket, error) {
	var out []Socket
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			if s, ok := parseRow(sc.Text()); ok {
				out = append(out, s)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseRow decodes a row: "sl local_address rem_address st ... inode ...".
func parseRow(line string) (Socket, bool) {
	fields := strings.Fields(line)
	if len(fields) < 10 {
		return Socket{}, false
	}
	ip, port, ok := parseAddr(fields[1])
	if !ok {
		return Socket{}, false
	}
	st, err := strconv.ParseUint(fields[3], 16, 8)
	if err != nil {
		return Socket{}, false
	}
	ino, err := strconv.ParseUint(fields[9], 10, 64)
	if err != nil {
		return Socket{}, false
	}
	return Socket{IP: ip, Port: port, State: int(st), Inode: ino}, true
}

// parseAddr decodes "0100007F:1F90" (an address of the tables: the IP as
// 32-bit words in host order, little-endian here, then the port).
func parseAddr(s string) (net.IP, int, bool) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, false
	}
	b, err := hex.DecodeString(hexIP)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, 0, false
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	return net.IP(b), int(port), true
}
