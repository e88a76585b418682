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

// proxyOptions are the flags of lbbench proxy.
type proxyOptions struct {
	listen, admin string
	cfg           balancer.Config
	pools         []string // NAME:PREFIX:POLICY:ADDRS
	policyArgs    []string // KEY=VALUE or POOL.KEY=VALUE
}

func newProxyCmd() *cobra.Command {
	var o proxyOptions
	cmd := &cobra.Command{
		Use:   "proxy --upstreams A,B,... [--pool NAME:PREFIX:POLICY:ADDRS]...",
		Short: "Run the built-in load balancer (layer 7 or layer 4) in front of worker endpoints",
		Long: "proxy spreads traffic over the upstreams until interrupted; in-flight work is\n" +
			"drained on exit. With --mode l7 it picks a backend per HTTP request (routing\n" +
			"by path prefix to --pool pools, adding a Forwarded header); with --mode l4 it\n" +
			"picks one per client TCP connection and copies bytes both ways. Upstreams are\n" +
			"host:port or unix:/path. The admin address serves /healthz and /stats (JSON\n" +
			"counters: decisions, client and upstream connections, per-backend requests by\n" +
			"pool, active and peak active, retries).\n\n" +
			"  lbbench proxy --upstreams 127.0.0.1:9000,127.0.0.1:9001 --policy ewma_least_conn --policy-arg alpha=0.5\n" +
			"  lbbench proxy --pool read:/:least_conn:127.0.0.1:9000,127.0.0.1:9001 --pool write:/event:round_robin:127.0.0.1:9002",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProxy(cmd.Context(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve proxied traffic on")
	f.StringVar(&o.admin, "admin", "", "address to serve /healthz and /stats on (empty: no admin API)")
	f.StringVar((*string)(&o.cfg.Mode), "mode", string(balancer.DefaultMode), "l7: decide per HTTP request; l4: decide per TCP connection, no parsing")
	f.StringSliceVar(&o.cfg.Upstreams, "upstreams", nil, "default pool: host:port or unix:/path list, comma-separated (required unless a --pool has prefix /)")
	f.StringVar(&o.cfg.Policy, "policy", balancer.DefaultPolicy, "default pool's policy: "+strings.Join(balancer.Policies(), ", "))
	f.StringArrayVar(&o.policyArgs, "policy-arg", nil, "policy argument KEY=VALUE for the default pool, or POOL.KEY=VALUE for a --pool (repeatable;\n"+
		"seed=N for random and p2c, alpha=0.3 for ewma_least_conn, decay=1s for peak_ewma, key=path|header:NAME|query:NAME for hash)")
	f.StringArrayVar(&o.pools, "pool", nil, "route a path prefix to its own pool: NAME:PREFIX:POLICY:ADDR[,ADDR...] (repeatable, l7 only;\n"+
		"longest prefix wins; prefix / replaces the default pool; empty POLICY means --policy)")
	f.BoolVar(&o.cfg.UpstreamKeepAlive, "upstream-keepalive", balancer.DefaultUpstreamKeepAlive, "reuse upstream connections; false opens one per request (l7)")
	f.IntVar(&o.cfg.CloseAfter, "close-after", 0, "close an upstream connection after N requests (l7, keep-alive on; 0: no limit)")
	f.IntVar(&o.cfg.MaxIdle, "max-idle", balancer.DefaultMaxIdle, "idle upstream connections kept per backend (l7)")
	f.IntVar(&o.cfg.Retries, "retries", 0, "other backends to try when one refuses the connection (0: none, the request gets 502)")
	f.DurationVar(&o.cfg.DownFor, "down-for", balancer.DefaultDownFor, "how long a backend that refused a connection is skipped")
	f.DurationVar(&o.cfg.Timeout, "timeout", balancer.DefaultTimeout, "upstream connect and response-header timeout")
	return cmd
}

// config turns the pool and policy-argument flags into o.cfg.
func (o proxyOptions) config() (balancer.Config, error) {
	cfg := o.cfg
	for _, s := range o.pools {
		p, err := balancer.ParsePool(s)
		if err != nil {
			return cfg, fmt.Errorf("proxy: --pool: %w", err)
		}
		cfg.Pools = append(cfg.Pools, p)
	}
	for _, s := range o.policyArgs {
		if err := cfg.SetPolicyArg(s); err != nil {
			return cfg, fmt.Errorf("proxy: --policy-arg: %w", err)
		}
	}
	return cfg, nil
}

func runProxy(ctx context.Context, stderr io.Writer, o proxyOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	p, err := balancer.New(cfg)
	if err != nil {
		return err
	}
	ln, err := listenFlag(ctx, o.listen, "--listen")
	if err != nil {
		return err
	}
	var adminLn net.Listener
	adminAt := "off"
	if o.admin != "" {
		if adminLn, err = listenFlag(ctx, o.admin, "--admin"); err != nil {
			ln.Close()
			return err
		}
		adminAt = "on " + adminLn.Addr().String()
	}
	cfg = cfg.WithDefaults()
	pools := []string{}
	if len(cfg.Upstreams) > 0 {
		pools = append(pools, fmt.Sprintf("%s %s x%d", balancer.DefaultPool, cfg.Policy, len(cfg.Upstreams)))
	}
	for _, pl := range cfg.Pools {
		pools = append(pools, fmt.Sprintf("%s %s %s x%d", pl.Name, pl.Prefix, pl.Policy, len(pl.Upstreams)))
	}
	upstream := "keep-alive off"
	switch {
	case cfg.Mode == balancer.L4:
		upstream = "one upstream connection per client connection"
	case cfg.UpstreamKeepAlive && cfg.CloseAfter > 0:
		upstream = fmt.Sprintf("keep-alive on, close after %d, max idle %d", cfg.CloseAfter, cfg.MaxIdle)
	case cfg.UpstreamKeepAlive:
		upstream = fmt.Sprintf("keep-alive on, max idle %d", cfg.MaxIdle)
	}
	fmt.Fprintf(stderr, "lbbench proxy: ready: %s listening on %s (pools: %s; upstream %s; retries %d); admin %s\n",
		cfg.Mode, ln.Addr(), strings.Join(pools, ", "), upstream, cfg.Retries, adminAt)
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
