package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

// serveStopTimeout bounds how long serve waits for its workers to drain.
const serveStopTimeout = 30 * time.Second

// serveOptions are the flags of lbbench serve.
type serveOptions struct {
	prefork     prefork.Config
	admin       string // address of the aggregate admin endpoint; empty for none
	exec        prefork.Exec
	printConfig string // proxy config format to print once ready; empty for none
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run worker processes on one shared port, per-worker ports or Unix sockets",
		Long: `serve is a process manager: it makes the listening sockets, starts --workers
worker processes, checks their health, and serves until interrupted; SIGTERM
or Ctrl-C drains the requests in flight, then exits.

Listen modes (--listen):
  reuseport  every worker has its own socket on --port with SO_REUSEPORT;
             the kernel hashes each new connection to one of them
  shared     one socket on --port, made here and inherited by every worker;
             who gets a connection depends on --accept
  ports      worker i listens on --port+i
  unix       worker i listens on --socket-dir/worker-i.sock

Accept strategies (--accept, built-in worker): netpoll (Go's default),
blocking (accept4 in a blocking call: the longest waiter gets the next
connection), epoll-exclusive (EPOLLEXCLUSIVE: the kernel wakes one waiting
worker). --max-conns N makes a worker stop accepting while N of its
connections are open.

A worker that fails is logged and reported in /stats; without --restart
serve then stops, with --restart the worker is started again.

--exec runs your own server instead of the built-in worker. The command
template may use {port} {host} {socket} {index} {workers} {fd}: per-endpoint
modes (ports, unix) and reuseport start it once per worker ({workers} is 1);
shared starts it once, with {workers} the worker count. With {fd} it
inherits the socket made here as fd 3 instead of binding its own. Readiness and health: GET --probe answers 200.
For example:
  lbbench serve --listen ports --port 9000 --workers 4 \
    --exec 'gunicorn -w 1 -b 127.0.0.1:{port} app:app' --probe /healthz

--admin serves /healthz (200 when every worker is healthy) and /stats (JSON:
per-worker counters and status). --print-config nginx|haproxy prints, once
the workers are ready, an upstream block listing the workers' endpoints to
stdout, and serve goes on serving.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("exec") {
				o.prefork.Exec = &o.exec
			} else if cmd.Flags().Changed("probe") || cmd.Flags().Changed("exec-dir") {
				return errors.New("serve: --probe and --exec-dir go with --exec")
			}
			return runServe(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.prefork.Workers, "workers", prefork.DefaultWorkers, "number of worker processes")
	f.StringVar((*string)(&o.prefork.Listen), "listen", string(prefork.DefaultListen), "listen mode: reuseport, shared, ports or unix")
	f.StringVar(&o.prefork.Host, "host", prefork.DefaultHost, "address the workers listen on")
	f.IntVar(&o.prefork.Port, "port", 0, "shared port (reuseport, shared; 0 = kernel-chosen) or first worker's port (ports)")
	f.StringVar(&o.prefork.SocketDir, "socket-dir", "", "directory of the workers' Unix sockets (unix mode: worker i on DIR/worker-i.sock)")
	f.StringVar(&o.prefork.Worker.Accept, "accept", worker.DefaultAccept, "how workers accept: "+strings.Join(worker.AcceptStrategies(), ", "))
	f.IntVar(&o.prefork.Worker.MaxConns, "max-conns", 0, "connections a worker holds open before it stops accepting (0: no limit)")
	f.BoolVar(&o.prefork.Restart, "restart", false, "start a failed worker again (default: stop serving)")
	f.DurationVar(&o.prefork.HealthInterval, "health-interval", prefork.DefaultHealthInterval, "period of the workers' health checks (negative: none)")
	f.StringVar(&o.printConfig, "print-config", "", "once ready, print an upstream block for "+strings.Join(prefork.ProxyConfigFormats(), " or ")+" to stdout")
	f.StringVar(&o.exec.Command, "exec", "", "run this command template instead of the built-in worker (placeholders {port} {host} {socket} {index} {workers} {fd})")
	f.StringVar(&o.exec.Probe, "probe", prefork.DefaultProbe, "with --exec: HTTP path that answers 200 once an instance is ready")
	f.StringVar(&o.exec.Dir, "exec-dir", "", "with --exec: working directory of the command (default: the current one)")
	f.StringVar(&o.admin, "admin", "", "address of the admin endpoint serving /healthz and /stats, e.g. 127.0.0.1:0 (default none)")
	f.IntVar(&o.prefork.Worker.Concurrency, "concurrency", worker.DefaultConcurrency, "requests each worker serves at a time; more wait in its queue")
	f.StringVar(&o.prefork.Worker.Mode, "mode", worker.DefaultMode, "how a worker spends service time: sleep or spin")
	f.DurationVar(&o.prefork.Worker.Service, "service", 0, "service time of a request whose query gives no us= or ms=")
	f.Var(slowdownFlag{&o.prefork.Slowdown}, "slowdown", "make worker INDEX slower: INDEX=FACTOR multiplies its service times (repeatable, e.g. 0=3)")
	return cmd
}

func runServe(ctx context.Context, stdout, stderr io.Writer, o serveOptions) error {
	if o.printConfig != "" && !slices.Contains(prefork.ProxyConfigFormats(), o.printConfig) {
		return fmt.Errorf("serve: --print-config must be one of %v, got %q", prefork.ProxyConfigFormats(), o.printConfig)
	}
	// Listen on the admin address first, so that it failing starts nothing.
	var adminLn net.Listener
	if o.admin != "" {
		ln, err := net.Listen("tcp", o.admin)
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("serve: admin: %w (pick another --admin address)", err)
		}
		if err != nil {
			return fmt.Errorf("serve: admin: %w", err)
		}
		adminLn = ln
	}
	o.prefork.Stderr = stderr
	sup, err := prefork.Start(ctx, o.prefork)
	if err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}

	adminAt := ""
	adminErr := make(chan error, 1)
	var admin *http.Server
	if adminLn != nil {
		admin = &http.Server{Handler: sup.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { adminErr <- admin.Serve(adminLn) }()
		adminAt = "; admin on " + adminLn.Addr().String()
	}
	eps := sup.Endpoints()
	if o.printConfig != "" {
		health := "/healthz"
		if o.prefork.Exec != nil {
			health = o.prefork.WithDefaults().Exec.Probe
		}
		if err := prefork.WriteProxyConfig(stdout, o.printConfig, eps, health); err != nil {
			fmt.Fprintln(stderr, "lbbench serve:", err)
		}
	}
	mode := string(o.prefork.WithDefaults().Listen)
	if o.prefork.Exec == nil && o.prefork.Listen == prefork.Shared {
		mode += ", accept " + o.prefork.WithDefaults().Worker.Accept
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
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveStopTimeout)
	defer cancel()
	if admin != nil {
		admin.Shutdown(stopCtx) // admin requests are short; the workers' drain is what takes time
		<-adminErr              // http.ErrServerClosed
	}
	return errors.Join(runErr, sup.Stop(stopCtx))
}

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "worker",
		Short:  "Run one worker process (started by serve)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return prefork.WorkerMain(cmd.Context())
		},
	}
}

// slowdownFlag parses repeated INDEX=FACTOR values into a map.
type slowdownFlag struct{ m *map[int]float64 }

func (f slowdownFlag) String() string {
	if f.m == nil || len(*f.m) == 0 {
		return ""
	}
	var parts []string
	for i, x := range *f.m {
		parts = append(parts, fmt.Sprintf("%d=%g", i, x))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (f slowdownFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		i, x, ok := strings.Cut(part, "=")
		idx, err1 := strconv.Atoi(i)
		factor, err2 := strconv.ParseFloat(x, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("want INDEX=FACTOR, for example 0=3, got %q", part)
		}
		if *f.m == nil {
			*f.m = map[int]float64{}
		}
		(*f.m)[idx] = factor
	}
	return nil
}

func (slowdownFlag) Type() string { return "INDEX=FACTOR" }
