package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/internal/busywork"
	"github.com/lbbench/lbbench/targets/balancer"
)

// proxyOptions are the flags of lbbench proxy.
type proxyOptions struct {
	cmd        balancer.Command
	pools      []string // NAME:PREFIX:POLICY:ADDRS
	policyArgs []string // KEY=VALUE or POOL.KEY=VALUE
}

func newProxyCmd() *cobra.Command { return proxyCmd(balancer.Run) }

// proxyCmd is lbbench proxy calling run with the command its flags give
// (tests parse with it).
func proxyCmd(run func(ctx context.Context, stderr io.Writer, c balancer.Command) error) *cobra.Command {
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
			c, err := o.command()
			if err != nil {
				return err
			}
			return run(cmd.Context(), cmd.ErrOrStderr(), c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cmd.Listen, balancer.FlagListen, balancer.DefaultListen, "address to serve proxied traffic on")
	f.StringVar(&o.cmd.Admin, balancer.FlagAdmin, "", "address to serve /healthz and /stats on (empty: no admin API)")
	f.StringVar((*string)(&o.cmd.Mode), balancer.FlagMode, string(balancer.DefaultMode), "l7: decide per HTTP request; l4: decide per TCP connection, no parsing")
	f.StringSliceVar(&o.cmd.Upstreams, balancer.FlagUpstreams, nil, "default pool: host:port or unix:/path list, comma-separated (required unless a --pool has prefix /)")
	f.StringVar(&o.cmd.Policy, balancer.FlagPolicy, balancer.DefaultPolicy, "default pool's policy: "+strings.Join(balance.Policies(), ", "))
	f.StringArrayVar(&o.policyArgs, balancer.FlagPolicyArg, nil, "policy argument `KEY=VALUE` for the default pool, or POOL.KEY=VALUE for a --pool (repeatable;\n"+
		"seed=N for random and p2c, alpha=0.3 for ewma_least_conn, decay=1s for peak_ewma, key=path|header:NAME|query:NAME for hash)")
	f.StringArrayVar(&o.pools, balancer.FlagPool, nil, "route a path prefix to its own pool: `NAME:PREFIX:POLICY:ADDRS` (ADDRS: ADDR[,ADDR...]) (repeatable, l7 only;\n"+
		"longest prefix wins; prefix / replaces the default pool; empty POLICY means --policy)")
	f.BoolVar(&o.cmd.UpstreamKeepAlive, balancer.FlagUpstreamKeepAlive, balancer.DefaultUpstreamKeepAlive, "reuse upstream connections; false opens one per request (l7)")
	f.IntVar(&o.cmd.Threads, balancer.FlagThreads, 0, "CPUs the proxy may use at once (GOMAXPROCS; 0: one per CPU)")
	f.IntVar(&o.cmd.CloseAfter, balancer.FlagCloseAfter, 0, "close an upstream connection after N requests (l7, keep-alive on; 0: no limit)")
	f.IntVar(&o.cmd.MaxIdle, balancer.FlagMaxIdle, balancer.DefaultMaxIdle, "idle upstream connections kept per backend (l7)")
	f.IntVar(&o.cmd.Preopen, balancer.FlagPreopen, 0, "open N connections to every backend before reporting ready, and send each request on the one idle the longest (l7, keep-alive on, no --close-after; 0: open on demand, reuse the last used)")
	f.IntVar(&o.cmd.Retries, balancer.FlagRetries, 0, "other backends to try when one refuses the connection (0: none, the request gets 502)")
	f.DurationVar(&o.cmd.DownFor, balancer.FlagDownFor, balancer.DefaultDownFor, "how long a backend that refused a connection is skipped")
	f.DurationVar(&o.cmd.Timeout, balancer.FlagTimeout, balancer.DefaultTimeout, "upstream connect and response-header timeout")
	f.DurationVar(&o.cmd.ReadTimeout, balancer.FlagReadTimeout, 0, "cut off an upstream silent this long in the middle of a response body (l7; 0: --timeout)")
	f.DurationVar(&o.cmd.HeaderTimeout, balancer.FlagHeaderTimeout, balancer.DefaultHeaderTimeout, "close a client connection whose request head takes longer (l7)")
	f.DurationVar(&o.cmd.IdleTimeout, balancer.FlagIdleTimeout, balancer.DefaultIdleTimeout, "close a client keep-alive connection idle this long (l7)")
	f.DurationVar(&o.cmd.L4IdleTimeout, balancer.FlagL4IdleTimeout, 0, fmt.Sprintf("--mode l4: close a connection that moved no byte for this long (0: %v)", balancer.DefaultL4IdleTimeout))
	f.DurationVar(&o.cmd.InjectCost, balancer.FlagInjectCost, 0, fmt.Sprintf("spend this much CPU time in busy work on every request forwarded (--mode l4: every client connection), a known extra cost (0: none; at most %v)", busywork.Max))
	return cmd
}

// command turns the pool and policy-argument flags into o.cmd's Config.
func (o proxyOptions) command() (balancer.Command, error) {
	c := o.cmd
	c.Pools = nil
	for _, s := range o.pools {
		p, err := balancer.ParsePool(s)
		if err != nil {
			return c, fmt.Errorf("proxy: --%s: %w", balancer.FlagPool, err)
		}
		c.Pools = append(c.Pools, p)
	}
	for _, s := range o.policyArgs {
		if err := c.SetPolicyArg(s); err != nil {
			return c, fmt.Errorf("proxy: --%s: %w", balancer.FlagPolicyArg, err)
		}
	}
	return c, nil
}
