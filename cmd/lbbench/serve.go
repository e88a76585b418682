package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

func newServeCmd() *cobra.Command { return serveCmd(prefork.Serve) }

// serveCmd is lbbench serve calling run with the configuration its flags
// give (tests parse with it).
func serveCmd(run func(ctx context.Context, stdout, stderr io.Writer, c prefork.ServeConfig) error) *cobra.Command {
	var o prefork.ServeConfig
	var exec prefork.Exec
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
             who gets a connection depends on --accept (with --socket-dir:
             one Unix socket, DIR/shared.sock, instead of the port)
  ports      worker i listens on --port+i
  unix       worker i listens on --socket-dir/worker-i.sock

Accept strategies (--accept, built-in worker): netpoll (Go's default),
blocking (accept4 in a blocking call: the longest waiter gets the next
connection), epoll-exclusive (EPOLLEXCLUSIVE: the kernel wakes one waiting
worker), poll (a gunicorn sync worker's order: accept first, then wait in
poll(2), registered afresh each time). --max-conns N makes a worker stop accepting while N of its
connections are open. --accept-when idle makes a worker call accept only
while it has a free slot (--concurrency), as an event-loop server does:
while it is busy new connections wait in the kernel's queue (for another
worker on a shared socket); its open keep-alive connections still bring it
requests. It works in every listen mode and with every --accept.

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
			if cmd.Flags().Changed(prefork.FlagExec) {
				o.Exec = &exec
			} else if cmd.Flags().Changed(prefork.FlagProbe) || cmd.Flags().Changed(prefork.FlagExecDir) {
				return fmt.Errorf("serve: --%s and --%s go with --%s", prefork.FlagProbe, prefork.FlagExecDir, prefork.FlagExec)
			}
			return run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Workers, prefork.FlagWorkers, prefork.DefaultWorkers, "number of worker processes")
	f.StringVar((*string)(&o.Listen), prefork.FlagListen, string(prefork.DefaultListen), "listen mode: reuseport, shared, ports or unix")
	f.StringVar(&o.Host, prefork.FlagHost, prefork.DefaultHost, "address the workers listen on")
	f.IntVar(&o.Port, prefork.FlagPort, 0, "shared port (reuseport, shared; 0 = kernel-chosen) or first worker's port (ports)")
	f.StringVar(&o.SocketDir, prefork.FlagSocketDir, "", "directory of the workers' Unix sockets (unix mode: worker i on DIR/worker-i.sock; shared mode: all on DIR/shared.sock instead of a port)")
	f.StringVar(&o.Worker.Accept, prefork.FlagAccept, worker.DefaultAccept, "how workers accept: "+strings.Join(worker.AcceptStrategies(), ", "))
	f.IntVar(&o.Worker.MaxConns, prefork.FlagMaxConns, 0, "connections a worker holds open before it stops accepting (0: no limit)")
	f.DurationVar(&o.Worker.HeaderTimeout, prefork.FlagHeaderTimeout, 0, fmt.Sprintf("how long a client may take to send a request's headers before the worker closes its connection (0: %v)", worker.DefaultHeaderTimeout))
	f.DurationVar(&o.Worker.IdleTimeout, prefork.FlagIdleTimeout, 0, fmt.Sprintf("how long a keep-alive connection may wait for its next request before the worker closes it (0: %v)", worker.DefaultIdleTimeout))
	f.StringVar(&o.Worker.AcceptWhen, prefork.FlagAcceptWhen, "", "when workers accept: always (default), or idle (only with a free slot, like an event-loop server)")
	f.BoolVar(&o.Restart, prefork.FlagRestart, false, "start a failed worker again (default: stop serving)")
	f.DurationVar(&o.HealthInterval, prefork.FlagHealthInterval, prefork.DefaultHealthInterval, "period of the workers' health checks (negative: none)")
	f.StringVar(&o.PrintConfig, prefork.FlagPrintConfig, "", "once ready, print an upstream block for "+strings.Join(prefork.ProxyConfigFormats(), " or ")+" to stdout")
	f.StringVar(&exec.Command, prefork.FlagExec, "", "run this command template instead of the built-in worker (placeholders {port} {host} {socket} {index} {workers} {fd})")
	f.StringVar(&exec.Probe, prefork.FlagProbe, prefork.DefaultProbe, "with --exec: HTTP path that answers 200 once an instance is ready")
	f.StringVar(&exec.Dir, prefork.FlagExecDir, "", "with --exec: working directory of the command (default: the current one)")
	f.StringVar(&o.Admin, prefork.FlagAdmin, "", "address of the admin endpoint serving /healthz and /stats, e.g. 127.0.0.1:0 (default none)")
	f.IntVar(&o.Worker.Concurrency, prefork.FlagConcurrency, worker.DefaultConcurrency, "requests each worker serves at a time; more wait in its queue")
	f.StringVar(&o.Worker.Mode, prefork.FlagMode, worker.DefaultMode, "how a worker spends service time: sleep or spin")
	f.DurationVar(&o.Worker.Service, prefork.FlagService, 0, "service time of a request whose query gives no us= or ms=")
	f.DurationVar(&o.Worker.InjectCost, prefork.FlagInjectCost, 0, fmt.Sprintf("spend this much CPU time in busy work on every request, after its service time: a known extra cost (0: none; at most %v)", busywork.Max))
	f.Var(slowdownFlag{&o.Slowdown}, prefork.FlagSlowdown, "make worker INDEX slower: INDEX=FACTOR multiplies its service times (repeatable, e.g. 0=3)")
	return cmd
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
