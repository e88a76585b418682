package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/targets/balancer"
)

func newProxyCmd() *cobra.Command {
	var (
		listen, admin string
		cfg           balancer.Config
	)
	cmd := &cobra.Command{
		Use:   "proxy --upstreams A,B,...",
		Short: "Run the built-in layer-7 reverse proxy in front of worker endpoints",
		Long: "proxy forwards each HTTP request to one of the upstreams, chosen per request by\n" +
			"the policy, until interrupted; in-flight requests are drained on exit.\n" +
			"The admin address serves /healthz and /stats (JSON counters).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProxy(cmd.Context(), cmd.ErrOrStderr(), listen, admin, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve proxied traffic on")
	f.StringSliceVar(&cfg.Upstreams, "upstreams", nil, "upstream host:port list, comma-separated (required)")
	f.StringVar(&cfg.Policy, "policy", balancer.DefaultPolicy, "balancing policy: "+strings.Join(balancer.Policies(), ", "))
	f.BoolVar(&cfg.UpstreamKeepAlive, "upstream-keepalive", balancer.DefaultUpstreamKeepAlive, "reuse upstream connections; false opens one per request")
	f.StringVar(&admin, "admin", "", "address to serve /healthz and /stats on (empty: no admin API)")
	f.DurationVar(&cfg.Timeout, "timeout", balancer.DefaultTimeout, "upstream connect and response-header timeout")
	_ = cmd.MarkFlagRequired("upstreams")
	return cmd
}

func runProxy(ctx context.Context, stderr io.Writer, listen, admin string, cfg balancer.Config) error {
	p, err := balancer.New(cfg)
	if err != nil {
		return err
	}
	ln, err := listenFlag(ctx, listen, "--listen")
	if err != nil {
		return err
	}
	var adminLn net.Listener
	adminAt := "off"
	if admin != "" {
		if adminLn, err = listenFlag(ctx, admin, "--admin"); err != nil {
			ln.Close()
			return err
		}
		adminAt = "on " + adminLn.Addr().String()
	}
	keepAlive := "off"
	if cfg.UpstreamKeepAlive {
		keepAlive = "on"
	}
	fmt.Fprintf(stderr, "lbbench proxy: ready: listening on %s (policy %s, upstream keep-alive %s, %d upstreams); admin %s\n",
		ln.Addr(), cfg.WithDefaults().Policy, keepAlive, len(cfg.Upstreams), adminAt)
	return p.Serve(ctx, ln, adminLn)
}

// listenFlag listens on addr, given by the named flag, with an error that
// says what to do when the port is taken.
func listenFlag(ctx context.Context, addr, flag string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("proxy: listen %s: %w (pick another %s)", addr, syscall.EADDRINUSE, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return ln, nil
}
