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
	prefork prefork.Config
	admin   string // address of the aggregate admin endpoint; empty for none
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run worker processes behind SO_REUSEPORT or per-worker ports",
		Long: "serve starts --workers worker processes and serves until interrupted.\n" +
			"With --listen reuseport they share --port and the kernel spreads connections;\n" +
			"with --listen ports worker i listens on --port+i. --admin serves /healthz\n" +
			"(200 when every worker is healthy) and /stats (JSON, per worker).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.prefork.Workers, "workers", prefork.DefaultWorkers, "number of worker processes")
	f.StringVar((*string)(&o.prefork.Listen), "listen", string(prefork.DefaultListen), "listen mode: reuseport or ports")
	f.StringVar(&o.prefork.Host, "host", prefork.DefaultHost, "address the workers listen on")
	f.IntVar(&o.prefork.Port, "port", 0, "shared port (reuseport; 0 = kernel-chosen) or first worker's port (ports)")
	f.StringVar(&o.admin, "admin", "", "address of the admin endpoint serving /healthz and /stats, e.g. 127.0.0.1:0 (default none)")
	f.IntVar(&o.prefork.Worker.Concurrency, "concurrency", worker.DefaultConcurrency, "requests each worker serves at a time; more wait in its queue")
	f.StringVar(&o.prefork.Worker.Mode, "mode", worker.DefaultMode, "how a worker spends service time: sleep or spin")
	f.DurationVar(&o.prefork.Worker.Service, "service", 0, "service time of a request whose query gives no us= or ms=")
	f.Var(slowdownFlag{&o.prefork.Slowdown}, "slowdown", "make worker INDEX slower: INDEX=FACTOR multiplies its service times (repeatable, e.g. 0=3)")
	return cmd
}

func runServe(ctx context.Context, stderr io.Writer, o serveOptions) error {
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
	fmt.Fprintf(stderr, "lbbench serve: ready: %d workers (%s) on %s%s\n",
		len(eps), o.prefork.WithDefaults().Listen, strings.Join(slices.Compact(eps), ","), adminAt)

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
