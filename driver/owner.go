package driver

import (
	"os"
	"strconv"
	"strings"
)

// Owner identifies this process for the labels of what a driver creates:
// its host, pid and start time (so that a recycled pid is not taken for
// it), joined by sep ("/" for Docker; "." for Kubernetes, whose label
// values allow no slash).
func Owner(sep string) string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return host + sep + strconv.Itoa(pid) + sep + startTime(pid)
}

// OwnerAlive reports whether the lbbench process named by an Owner label
// still runs. Objects made on another host are taken as alive: their owner
// cannot be checked from here. The host part may hold sep (a host name
// with dots): pid and start time are the last two fields.
func OwnerAlive(label, sep string) bool {
	i := strings.LastIndex(label, sep)
	if i <= 0 {
		return false
	}
	j := strings.LastIndex(label[:i], sep)
	if j <= 0 {
		return false
	}
	host, pidStr, start := label[:j], label[j+len(sep):i], label[i+len(sep):]
	if h, _ := os.Hostname(); host != h {
		return true
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil {
		return false
	}
	return start != "" && startTime(pid) == start
}

// startTime is field 22 of /proc/PID/stat (clock ticks after boot), or ""
// when the process does not exist or has exited (a zombie its parent has
// not reaped yet).
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; it ends at the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19]
}
