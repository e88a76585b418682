package prefork

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/lbbench/lbbench/targets/worker"
)

// ListenMode says how the workers' main listeners are arranged.
type ListenMode string

// Listen modes.
const (
	// ReusePort gives every worker its own socket bound to the same
	// host:port with SO_REUSEPORT; the kernel spreads new connections over
	// them by a hash of the connection's addresses.
	ReusePort ListenMode = "reuseport"
	// Shared gives every worker the same listening socket, made once by the
	// supervisor and inherited by each child, as a pre-forking server
	// does; which worker gets a connection depends on how the workers wait
	// (worker.Config.Accept). The socket is on host:port, or a Unix socket
	// when SocketDir is set.
	Shared ListenMode = "shared"
	// Ports gives worker i its own socket on host:(port+i), for a load
	// balancer in front to choose among.
	Ports ListenMode = "ports"
	// Unix gives worker i its own Unix socket SocketDir/worker-i.sock, for
	// a load balancer on the same host to choose among.
	Unix ListenMode = "unix"
)

// ListenModes lists the listen modes.
func ListenModes() []ListenMode { return []ListenMode{ReusePort, Shared, Ports, Unix} }

// Defaults applied by Config.WithDefaults.
const (
	// DefaultWorkers is the default number of worker processes.
	DefaultWorkers = 4
	// DefaultListen is the default ListenMode.
	DefaultListen = ReusePort
	// DefaultHost is the default address the main listeners bind to.
	DefaultHost = "127.0.0.1"
	// DefaultHealthInterval is the default period of health checks.
	DefaultHealthInterval = time.Second
	// DefaultProbe is the default Exec.Probe.
	DefaultProbe = "/"
)

// Config describes a set of worker processes. The zero value means
// DefaultWorkers workers sharing a kernel-chosen port on DefaultHost with
// SO_REUSEPORT, each a default worker.Config, run by this executable's
// "worker" command, health-checked every DefaultHealthInterval and not
// restarted.
type Config struct {
	// Workers is the number of worker processes. 0 means DefaultWorkers.
	Workers int `yaml:"workers" json:"workers"`
	// Listen is the listen mode. Empty means DefaultListen.
	Listen ListenMode `yaml:"listen" json:"listen"`
	// Host is the address the main listeners bind to. Empty means
	// DefaultHost.
	Host string `yaml:"host" json:"host"`
	// Port is the shared port in ReusePort and Shared modes (0:
	// kernel-chosen) and the first worker's port in Ports mode (must not
	// be 0). Unix mode ignores it.
	Port int `yaml:"port" json:"port"`
	// SocketDir is the directory of the workers' Unix sockets in Unix mode
	// (required there; made if missing). In Shared mode it makes the one
	// shared socket a Unix socket, SocketDir/shared.sock (SharedSocketPath),
	// instead of a TCP port. Given in ReusePort mode it asks
	// for SO_REUSEPORT on a Unix socket, which Start reports as an error.
	SocketDir string `yaml:"socket_dir" json:"socket_dir"`
	// Restart starts a worker again when it fails (exits with a non-zero
	// status or is killed by a signal), after a back-off that grows while
	// it keeps failing soon after starting. The supervisor then keeps the
	// listening sockets, so connections wait in the kernel's queue during
	// the restart instead of being refused. False means a failed worker
	// stays down and Exited is closed.
	Restart bool `yaml:"restart" json:"restart"`
	// HealthInterval is the period of the supervisor's health checks of
	// running workers (admin /healthz, or Exec.Probe); a worker that fails
	// or recovers is logged and shown in Status. 0 means
	// DefaultHealthInterval; negative means no periodic checks.
	HealthInterval time.Duration `yaml:"health_interval" json:"health_interval"`
	// Exec runs a foreign server instead of the built-in worker; nil means
	// the built-in worker.
	Exec *Exec `yaml:"exec" json:"exec"`
	// Worker configures every worker; its Index is set per worker.
	Worker worker.Config `yaml:"worker" json:"worker"`
	// Slowdown maps a worker index to a service-time multiplier for that
	// worker alone (see worker.Config.Slowdown); nil means none.
	Slowdown map[int]float64 `yaml:"slowdown" json:"slowdown"`
	// Command is the executable and arguments that run WorkerMain in a
	// child. Empty means this executable with the argument "worker".
	// Unused with Exec.
	Command []string `yaml:"command" json:"command"`
	// Stderr receives the children's stdout and stderr and the
	// supervisor's reports of workers that exit. Nil means os.Stderr.
	Stderr io.Writer `yaml:"-" json:"-"`
}

// WithDefaults returns a copy of c with zero fields, including those of
// c.Worker, set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Host == "" {
		c.Host = DefaultHost
	}
	c.Worker = c.Worker.WithDefaults()
	if c.HealthInterval == 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	if c.Exec != nil {
		e := *c.Exec
		if e.Probe == "" {
			e.Probe = DefaultProbe
		}
		c.Exec = &e
	}
	if len(c.Command) == 0 {
		if exe, err := os.Executable(); err == nil {
			c.Command = []string{exe, "worker"}
		}
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	return c
}

// Validate reports the first invalid field of c. It does not apply
// defaults: call it on the result of WithDefaults.
func (c Config) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("prefork: workers must be >= 1, got %d", c.Workers)
	case !slices.Contains(ListenModes(), c.Listen):
		return fmt.Errorf("prefork: listen must be one of %v, got %q", ListenModes(), c.Listen)
	case c.Host == "":
		return errors.New("prefork: host must not be empty")
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("prefork: port must be between 0 and 65535, got %d", c.Port)
	case c.Listen == Ports && c.Port == 0:
		return errors.New("prefork: port must be set in ports mode, where worker i listens on port+i")
	case c.Listen == Ports && c.Port+c.Workers-1 > 65535:
		return fmt.Errorf("prefork: port %d + %d workers runs past port 65535", c.Port, c.Workers)
	case c.Listen == Unix && c.SocketDir == "":
		return errors.New("prefork: socket dir must be set in unix mode, where worker i listens on DIR/worker-i.sock")
	case c.SocketDir != "" && c.Listen != Unix && c.Listen != ReusePort && c.Listen != Shared:
		return fmt.Errorf("prefork: socket dir is for unix and shared modes; %s mode listens on TCP", c.Listen)
	case c.Listen == Shared && c.SocketDir != "" && c.Exec != nil && !c.Exec.usesFD():
		return fmt.Errorf("prefork: shared mode on a Unix socket (socket dir %s) hands a server the socket as {fd}; its command has no {fd}", c.SocketDir)
	case c.Exec == nil && (len(c.Command) == 0 || c.Command[0] == ""):
		return errors.New("prefork: command must name the executable that runs the worker")
	case c.Stderr == nil:
		return errors.New("prefork: stderr must not be nil")
	}
	if err := c.Worker.Validate(); err != nil {
		return fmt.Errorf("prefork: %w", err)
	}
	if c.Exec != nil {
		if err := c.Exec.validate(c.Listen); err != nil {
			return err
		}
		switch {
		case len(c.Slowdown) > 0:
			return errors.New("prefork: slowdown needs the built-in worker; an exec target serves at its own speed")
		case c.Worker.Accept != worker.DefaultAccept:
			return errors.New("prefork: an accept strategy needs the built-in worker; an exec target accepts its own way")
		case c.Worker.MaxConns != 0:
			return errors.New("prefork: max conns needs the built-in worker")
		case c.Worker.HeaderTimeout != 0 || c.Worker.IdleTimeout != 0:
			return errors.New("prefork: header and idle timeouts need the built-in worker; an exec target sets its own")
		case c.Worker.AcceptWhen != "" && c.Worker.AcceptWhen != worker.DefaultAcceptWhen:
			return errors.New("prefork: accept when idle needs the built-in worker; an exec target accepts its own way")
		case c.Worker.InjectCost != 0:
			return errors.New("prefork: an injected cost needs the built-in worker; an exec target costs what it costs")
		}
	}
	for i, f := range c.Slowdown {
		if i < 0 || i >= c.Workers {
			return fmt.Errorf("prefork: slowdown names worker %d of %d", i, c.Workers)
		}
		if f <= 0 || f > 100 {
			return fmt.Errorf("prefork: slowdown of worker %d must be in (0, 100], got %g", i, f)
		}
	}
	return nil
}
