package prefork

import (
	"errors"
	"fmt"
	"io"
	"os"

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
	// Ports gives worker i its own socket on host:(port+i), for a load
	// balancer in front to choose among.
	Ports ListenMode = "ports"
)

// Defaults applied by Config.WithDefaults.
const (
	// DefaultWorkers is the default number of worker processes.
	DefaultWorkers = 4
	// DefaultListen is the default ListenMode.
	DefaultListen = ReusePort
	// DefaultHost is the default address the main listeners bind to.
	DefaultHost = "127.0.0.1"
)

// Config describes a set of worker processes. The zero value means
// DefaultWorkers workers sharing a kernel-chosen port on DefaultHost with
// SO_REUSEPORT, each a default worker.Config, run by this executable's
// "worker" command.
type Config struct {
	// Workers is the number of worker processes. 0 means DefaultWorkers.
	Workers int `yaml:"workers" json:"workers"`
	// Listen is the listen mode. Empty means DefaultListen.
	Listen ListenMode `yaml:"listen" json:"listen"`
	// Host is the address the main listeners bind to. Empty means
	// DefaultHost.
	Host string `yaml:"host" json:"host"`
	// Port is the shared port in ReusePort mode (0: kernel-chosen) and the
	// first worker's port in Ports mode (must not be 0).
	Port int `yaml:"port" json:"port"`
	// Worker configures every worker; its Index is set per worker.
	Worker worker.Config `yaml:"worker" json:"worker"`
	// Slowdown maps a worker index to a service-time multiplier for that
	// worker alone (see worker.Config.Slowdown); nil means none.
	Slowdown map[int]float64 `yaml:"slowdown" json:"slowdown"`
	// Command is the executable and arguments that run WorkerMain in a
	// child. Empty means this executable with the argument "worker".
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
	case c.Listen != ReusePort && c.Listen != Ports:
		return fmt.Errorf("prefork: listen must be %q or %q, got %q", ReusePort, Ports, c.Listen)
	case c.Host == "":
		return errors.New("prefork: host must not be empty")
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("prefork: port must be between 0 and 65535, got %d", c.Port)
	case c.Listen == Ports && c.Port == 0:
		return errors.New("prefork: port must be set in ports mode, where worker i listens on port+i")
	case c.Listen == Ports && c.Port+c.Workers-1 > 65535:
		return fmt.Errorf("prefork: port %d + %d workers runs past port 65535", c.Port, c.Workers)
	case len(c.Command) == 0 || c.Command[0] == "":
		return errors.New("prefork: command must name the executable that runs the worker")
	case c.Stderr == nil:
		return errors.New("prefork: stderr must not be nil")
	}
	if err := c.Worker.Validate(); err != nil {
		return fmt.Errorf("prefork: %w", err)
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
