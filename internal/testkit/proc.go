package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one process as /proc showed it.
type Proc struct {
	PID, PPID int
	// State is the one-letter state of /proc/PID/stat ('Z' for a zombie
	// awaiting its parent's wait).
	State byte
	// Exe is the executable's path, "" when it cannot be read (another
	// user's process, or gone meanwhile).
	Exe string
	// Args is the command line.
	Args []string
	// Cwd is the working directory, "" when it cannot be read.
	Cwd string
}

// String is "PID: the command line", for a test's messages.
func (p Proc) String() string {
	return strconv.Itoa(p.PID) + ": " + strings.Join(p.Args, " ")
}

// Live reports whether the process is running (not a zombie).
func (p Proc) Live() bool { return p.State != 'Z' }

// Arg returns the value following flag (e.g. "--admin") in the command
// line, "" when it is not there.
func (p Proc) Arg(flag string) string {
	for i := 0; i+1 < len(p.Args); i++ {
		if p.Args[i] == flag {
			return p.Args[i+1]
		}
	}
	return ""
}

// Subcommand returns the first argument after the program's name ("" when
// there is none): an lbbench process's subcommand.
func (p Proc) Subcommand() string {
	if len(p.Args) < 2 {
		return ""
	}
	return p.Args[1]
}

// Procs lists the processes for which match is true (nil: every one),
// zombies included, in no particular order. A process that exits while it
// is read is left out.
func Procs(match func(Proc) bool) []Proc {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []Proc
	for _, d := range dirs {
		p, ok := readProc(d)
		if ok && (match == nil || match(p)) {
			out = append(out, p)
		}
	}
	return out
}

// LiveProcs lists the live (not zombie) processes for which match is true.
func LiveProcs(match func(Proc) bool) []Proc {
	return Procs(func(p Proc) bool { return p.Live() && (match == nil || match(p)) })
}

// Children lists pid's live child processes.
func Children(pid int) []Proc {
	return LiveProcs(func(p Proc) bool { return p.PPID == pid })
}

// Descendants lists the pids of pid's children, their children and so on.
func Descendants(pid int) []int {
	parent := map[int]int{}
	for _, p := range Procs(nil) {
		parent[p.PID] = p.PPID
	}
	var found []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				found = append(found, p)
				break
			}
		}
	}
	return found
}

// Lookup returns process pid as /proc shows it, a zombie included; false
// when there is none: it never ran, or it exited and was waited for
// (reaped).
func Lookup(pid int) (Proc, bool) {
	return readProc("/proc/" + strconv.Itoa(pid))
}

// Alive reports whether pid is a live (not zombie) process.
func Alive(pid int) bool {
	p, ok := Lookup(pid)
	return ok && p.Live()
}

// PIDs returns the pids of procs.
func PIDs(procs []Proc) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.PID
	}
	return out
}

// Strings returns each of procs as Proc.String.
func Strings(procs []Proc) []string {
	out := make([]string, len(procs))
	for i, p := range procs {
		out[i] = p.String()
	}
	return out
}

// readProc reads the process whose /proc directory is dir.
func readProc(dir string) (Proc, bool) {
	pid, err := strconv.Atoi(filepath.Base(dir))
	if err != nil {
		return Proc{}, false
	}
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Proc{}, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return Proc{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, false
	}
	p := Proc{PID: pid, PPID: ppid, State: f[0][0]}
	p.Exe, _ = os.Readlink(filepath.Join(dir, "exe"))
	p.Cwd, _ = os.Readlink(filepath.Join(dir, "cwd"))
	if cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && len(cmdline) > 0 {
		p.Args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	}
	return p, true
}
