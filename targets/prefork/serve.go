package prefork

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/internal/httpdrain"
	"github.com/lbbench/lbbench/internal/reaper"
	"github.com/lbbench/lbbench/targets/worker"
)

// ServeSubcommand is the lbbench subcommand that runs Serve.
const ServeSubcommand = "serve"

// The flags of "lbbench serve". ServeConfig.Args writes them and the
// command's flag set (cmd/lbbench) declares them, both by these names.
const (
	FlagWorkers        = "workers"
	FlagListen         = "listen"
	FlagHost           = "host"
	FlagPort           = "port"
	FlagSocketDir      = "socket-dir"
	FlagAccept         = "accept"
	FlagMaxConns       = "max-conns"
	FlagHeaderTimeout  = "header-timeout"
	FlagIdleTimeout    = "idle-timeout"
	FlagAcceptWhen     = "accept-when"
	FlagRestart        = "restart"
	FlagHealthInterval = "health-interval"
	FlagPrintConfig    = "print-config"
	FlagExec           = "exec"
	FlagProbe          = "probe"
	FlagExecDir        = "exec-dir"
	FlagAdmin          = "admin"
	FlagConcurrency    = "concurrency"
	FlagMode           = "mode"
	FlagService        = "service"
	FlagSlowdown       = "slowdown"
	FlagInjectCost     = "inject-cost"
)

// DefaultServeStopTimeout bounds how long Serve waits for its workers to
// drain once asked to stop; then it kills those still running. It is
// shorter than the 10 s a driver gives serve to exit (driver's
// DefaultStopTimeout), so that a server that is slow to drain (uvicorn
// waiting on a connection) is killed by serve, which then exits and says
// so, rather than serve itself being killed mid-drain.
const DefaultServeStopTimeout = 8 * time.Second

// ServeConfig is the configuration of "lbbench serve": the supervisor's
// Config plus what the command adds around it. Topologies render it; Args
// turns it into the command line a driver runs.
type ServeConfig struct {
	Config
	// Admin is the address of the aggregate admin endpoint serving
	// /healthz and /stats; empty means none.
	Admin string `json:"admin,omitempty"`
	// PrintConfig is a ProxyConfigFormats format whose upstream block is
	// printed to the output once the workers are ready; empty means none.
	PrintConfig string `json:"print_config,omitempty"`
}

// Args returns the "lbbench serve" command line (subcommand first) that runs
// c. Zero fields are left out, so the command's defaults apply; Command and
// Stderr are not part of the command line.
func (c ServeConfig) Args() []string {
	a := []string{ServeSubcommand}
	flag := func(name, value string) { a = append(a, "--"+name, value) }
	if c.Workers != 0 {
		flag(FlagWorkers, strconv.Itoa(c.Workers))
	}
	if c.Listen != "" {
		flag(FlagListen, string(c.Listen))
	}
	if c.Host != "" {
		flag(FlagHost, c.Host)
	}
	if c.Port != 0 {
		flag(FlagPort, strconv.Itoa(c.Port))
	}
	if c.SocketDir != "" {
		flag(FlagSocketDir, c.SocketDir)
	}
	if c.Admin != "" {
		flag(FlagAdmin, c.Admin)
	}
	if c.Restart {
		a = append(a, "--"+FlagRestart)
	}
	if c.HealthInterval != 0 {
		flag(FlagHealthInterval, c.HealthInterval.String())
	}
	if c.PrintConfig != "" {
		flag(FlagPrintConfig, c.PrintConfig)
	}
	w := c.Worker
	if w.Concurrency != 0 {
		flag(FlagConcurrency, strconv.Itoa(w.Concurrency))
	}
	if w.Mode != "" {
		flag(FlagMode, w.Mode)
	}
	if w.Service != 0 {
		flag(FlagService, w.Service.String())
	}
	if w.Accept != "" {
		flag(FlagAccept, w.Accept)
	}
	if w.MaxConns != 0 {
		flag(FlagMaxConns, strconv.Itoa(w.MaxConns))
	}
	if w.HeaderTimeout != 0 {
		flag(FlagHeaderTimeout, w.HeaderTimeout.String())
	}
	if w.IdleTimeout != 0 {
		flag(FlagIdleTimeout, w.IdleTimeout.String())
	}
	if w.AcceptWhen != "" {
		flag(FlagAcceptWhen, w.AcceptWhen)
	}
	if w.InjectCost != 0 {
		flag(FlagInjectCost, w.InjectCost.String())
	}
	for _, i := range slices.Sorted(maps.Keys(c.Slowdown)) {
		flag(FlagSlowdown, strconv.Itoa(i)+"="+strconv.FormatFloat(c.Slowdown[i], 'g', -1, 64))
	}
	if e := c.Exec; e != nil {
		flag(FlagExec, e.Command)
		if e.Probe != "" {
			flag(FlagProbe, e.Probe)
		}
		if e.Dir != "" {
			flag(FlagExecDir, e.Dir)
		}
	}
	return a
}

// Serve is "lbbench serve": it listens on the admin address (first, so
// that a taken address starts nothing), starts the workers, prints the
// upstream block c.PrintConfig asks for to stdout, reports readiness on
// stderr and serves until ctx ends, a worker fails (without Restart) or the
// admin endpoint fails. It then drains the workers, for at most
// DefaultServeStopTimeout.
func Serve(ctx context.Context, stdout, stderr io.Writer, c ServeConfig) error {
	if c.PrintConfig != "" && !slices.Contains(ProxyConfigFormats(), c.PrintConfig) {
		return fmt.Errorf("serve: --%s must be one of %v, got %q", FlagPrintConfig, ProxyConfigFormats(), c.PrintConfig)
	}
	var adminLn net.Listener
	if c.Admin != "" {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", c.Admin)
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("serve: admin: %w (pick another --%s address)", err, FlagAdmin)
		}
		if err != nil {
			return fmt.Errorf("serve: admin: %w", err)
		}
		adminLn = ln
	}
	c.Stderr = stderr
	sup, err := Start(ctx, c.Config)
	if err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	// Orphans below the workers (a forking server's workers whose master
	// died) come to serve rather than to an init that may not reap them
	// (serve is PID 1 in a container or pod).
	reapCtx, stopReaping := context.WithCancel(context.Background())
	defer stopReaping()
	if _, err := reaper.Start(reapCtx, sup.Owns); err != nil {
		fmt.Fprintln(stderr, "lbbench serve: cannot reap orphans:", err)
	}

	adminAt := ""
	adminErr := make(chan error, 1)
	var admin *http.Server
	if adminLn != nil {
		admin = httpdrain.CloseFreshOnShutdown(&http.Server{Handler: sup.Handler(), ReadHeaderTimeout: 10 * time.Second})
		go func() { adminErr <- admin.Serve(adminLn) }()
		adminAt = "; admin on " + adminLn.Addr().String()
	}
	eps := sup.Endpoints()
	d := c.Config.WithDefaults()
	if c.PrintConfig != "" {
		health := "/healthz"
		if d.Exec != nil {
			health = d.Exec.Probe
		}
		if err := WriteProxyConfig(stdout, c.PrintConfig, eps, health); err != nil {
			fmt.Fprintln(stderr, "lbbench serve:", err)
		}
	}
	mode := string(d.Listen)
	if c.Exec == nil && c.Listen == Shared {
		mode += ", accept " + d.Worker.Accept
	}
	if c.Exec == nil && d.Worker.AcceptWhen == worker.AcceptIdle {
		mode += ", accept when idle"
	}
	if c.Exec == nil && d.Worker.InjectCost > 0 {
		mode += fmt.Sprintf(", injected cost %v of CPU per request", d.Worker.InjectCost)
	}
	fmt.Fprintf(stderr, "lbbench serve: ready: %d workers (%s) on %s%s\n",
		len(eps), mode, strings.Join(slices.Compact(eps), ","), adminAt)

	var runErr error
	select {
	case <-ctx.Done():
	case <-sup.Exited():
		runErr = errors.New("serve: a worker failed; stopping")
	case err := <-adminErr:
		runErr = fmt.Errorf("serve: admin: %w", err)
		admin = nil // already stopped
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultServeStopTimeout)
	defer cancel()
	if admin != nil {
		admin.Shutdown(stopCtx) // admin requests are short; the workers' drain is what takes time
		<-adminErr              // http.ErrServerClosed
	}
	return errors.Join(runErr, sup.Stop(stopCtx))
}
