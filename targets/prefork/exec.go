package prefork

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/internal/shellwords"
)

// Placeholders an Exec command template may use. Each is replaced inside
// every word of the command after it is split into words, so a value with
// spaces stays one argument.
const (
	// PlaceholderPort is the TCP port the instance listens on: port+i in
	// Ports mode, the shared port in ReusePort and Shared modes.
	PlaceholderPort = "{port}"
	// PlaceholderHost is Config.Host.
	PlaceholderHost = "{host}"
	// PlaceholderSocket is the Unix socket path of worker i in Unix mode.
	PlaceholderSocket = "{socket}"
	// PlaceholderIndex is the worker's index (0 for the one instance of
	// Shared mode).
	PlaceholderIndex = "{index}"
	// PlaceholderWorkers is the number of workers the instance should run:
	// Config.Workers in Shared mode, where one instance serves them all,
	// and 1 otherwise, where each instance is one worker. So one template
	// such as "srv --fd {fd} --workers {workers}" suits every mode.
	PlaceholderWorkers = "{workers}"
	// PlaceholderFD is "3". A command that uses it gets the listening
	// socket made by the supervisor (TCP, Unix or shared, as the mode
	// says) as inherited file descriptor 3, instead of binding its own.
	PlaceholderFD = "{fd}"
)

// Exec describes a foreign server run in place of the built-in worker, for
// example Gunicorn or Uvicorn. In Ports and Unix modes one instance runs
// per worker, on that worker's endpoint; in ReusePort mode one instance
// runs per worker on the shared port (it must set SO_REUSEPORT itself, or
// take {fd}); in Shared mode one instance runs in all, told the worker
// count by {workers}, and forks its own workers on one socket. Instances
// also find their index and the total worker count in the environment
// (EnvIndex, EnvWorkers).
//
// Unless the command takes {fd}, the server binds its endpoint itself: the
// supervisor only makes sure a Unix socket path is free. The instance stays
// in the supervisor's process group, gets SIGTERM to drain and is killed
// by the kernel if the supervisor dies; a server that forks should have
// its children leave when their parent does.
type Exec struct {
	// Command is the command template: words split as a POSIX shell does
	// (quotes and backslashes, no expansions), then placeholders replaced.
	// It is run directly, not by a shell; write sh -c '...' for one.
	// Required.
	Command string `yaml:"command" json:"command"`
	// Probe is the HTTP path that answers 200 once an instance serves;
	// it is the readiness and health check. Empty means DefaultProbe.
	Probe string `yaml:"probe" json:"probe"`
	// Dir is the working directory of the instances; empty means the
	// supervisor's.
	Dir string `yaml:"dir" json:"dir"`
}

// validate checks e for listen mode m; e has its defaults.
func (e *Exec) validate(m ListenMode) error {
	words, err := shellwords.Split(e.Command)
	if err != nil {
		return fmt.Errorf("prefork: exec: %w", err)
	}
	if len(words) == 0 {
		return errors.New("prefork: exec: the command is empty")
	}
	if !strings.HasPrefix(e.Probe, "/") {
		return fmt.Errorf("prefork: exec: probe must be an HTTP path starting with /, got %q", e.Probe)
	}
	has := func(p string) bool { return strings.Contains(e.Command, p) }
	switch {
	case has(PlaceholderSocket) && m != Unix:
		return fmt.Errorf("prefork: exec: %s is set only in unix mode, not %s", PlaceholderSocket, m)
	case has(PlaceholderPort) && m == Unix:
		return fmt.Errorf("prefork: exec: %s is not set in unix mode; use %s or %s", PlaceholderPort, PlaceholderSocket, PlaceholderFD)
	case m == Unix && !has(PlaceholderSocket) && !has(PlaceholderFD):
		return fmt.Errorf("prefork: exec: in unix mode the command must take %s or %s, so that each instance listens on its own socket", PlaceholderSocket, PlaceholderFD)
	case m != Unix && !has(PlaceholderPort) && !has(PlaceholderFD):
		return fmt.Errorf("prefork: exec: the command must take %s or %s, so that it listens where the supervisor expects", PlaceholderPort, PlaceholderFD)
	}
	return nil
}

// instanceVars are the values of the placeholders for one instance.
type instanceVars struct {
	host, port, socket, index, workers string
}

// argv expands e's command for one instance.
func (e *Exec) argv(v instanceVars) []string {
	words, _ := shellwords.Split(e.Command) // validated
	r := strings.NewReplacer(
		PlaceholderPort, v.port,
		PlaceholderHost, v.host,
		PlaceholderSocket, v.socket,
		PlaceholderIndex, v.index,
		PlaceholderWorkers, v.workers,
		PlaceholderFD, strconv.Itoa(inheritedFD),
	)
	for i, w := range words {
		words[i] = r.Replace(w)
	}
	return words
}

// usesFD reports whether the command takes the supervisor's socket.
func (e *Exec) usesFD() bool { return strings.Contains(e.Command, PlaceholderFD) }

// inheritedFD is the descriptor number of the main listener in a child.
const inheritedFD = 3
