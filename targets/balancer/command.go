package balancer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Subcommand is the lbbench subcommand that runs Command.
const Subcommand = "proxy"

// The flags of "lbbench proxy". Command.Args writes them and the command's
// flag set (cmd/lbbench) declares them, both by these names.
const (
	FlagListen            = "listen"
	FlagAdmin             = "admin"
	FlagMode              = "mode"
	FlagUpstreams         = "upstreams"
	FlagPolicy            = "policy"
	FlagPolicyArg         = "policy-arg"
	FlagPool              = "pool"
	FlagUpstreamKeepAlive = "upstream-keepalive"
	FlagCloseAfter        = "close-after"
	FlagMaxIdle           = "max-idle"
	FlagPreopen           = "preopen"
	FlagRetries           = "retries"
	FlagDownFor           = "down-for"
	FlagTimeout           = "timeout"
	FlagReadTimeout       = "read-timeout"
	FlagHeaderTimeout     = "header-timeout"
	FlagIdleTimeout       = "idle-timeout"
	FlagL4IdleTimeout     = "l4-idle-timeout"
	FlagThreads           = "threads"
	FlagInjectCost        = "inject-cost"
)

// MaxThreads bounds Command.Threads.
const MaxThreads = 256

// DefaultListen is the address "lbbench proxy" serves on when none is given.
const DefaultListen = "127.0.0.1:8080"

// Command is the configuration of "lbbench proxy": the proxy's Config and
// the addresses it serves on. Topologies render it; Args turns it into the
// command line a driver runs.
type Command struct {
	// Listen is the address proxied traffic arrives on; empty means
	// DefaultListen.
	Listen string `json:"listen"`
	// Admin is the address of /healthz and /stats; empty means none.
	Admin string `json:"admin,omitempty"`
	// Threads sets the process's GOMAXPROCS when Run starts: how many
	// CPUs the proxy may use at once. Zero leaves the Go default (one per
	// CPU).
	Threads int `json:"threads,omitempty"`
	Config
}

// String returns the command-line form of p that ParsePool reads,
// NAME:PREFIX:POLICY:ADDR[,ADDR...]. Policy arguments travel separately.
func (p Pool) String() string {
	return p.Name + ":" + p.Prefix + ":" + p.Policy + ":" + strings.Join(p.Upstreams, ",")
}

// Args returns the "lbbench proxy" command line (subcommand first) that
// runs c. Zero fields are left out, so the command's defaults apply, except
// upstream keep-alive, which is always given; policy arguments are given
// in key order, so a command line is reproducible.
func (c Command) Args() []string {
	a := []string{Subcommand}
	flag := func(name, value string) { a = append(a, "--"+name, value) }
	if c.Mode != "" {
		flag(FlagMode, string(c.Mode))
	}
	if c.Listen != "" {
		flag(FlagListen, c.Listen)
	}
	if c.Admin != "" {
		flag(FlagAdmin, c.Admin)
	}
	if c.Policy != "" {
		flag(FlagPolicy, c.Policy)
	}
	a = append(a, "--"+FlagUpstreamKeepAlive+"="+strconv.FormatBool(c.UpstreamKeepAlive))
	if len(c.Upstreams) > 0 {
		flag(FlagUpstreams, strings.Join(c.Upstreams, ","))
	}
	for _, p := range c.Pools {
		flag(FlagPool, p.String())
	}
	policyArgs := func(scope string, m map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			flag(FlagPolicyArg, scope+k+"="+m[k])
		}
	}
	policyArgs("", c.PolicyArgs)
	for _, p := range c.Pools {
		policyArgs(p.Name+".", p.PolicyArgs)
	}
	for _, f := range []struct {
		name string
		n    int
	}{{FlagCloseAfter, c.CloseAfter}, {FlagMaxIdle, c.MaxIdle}, {FlagPreopen, c.Preopen}, {FlagRetries, c.Retries}} {
		if f.n != 0 {
			flag(f.name, strconv.Itoa(f.n))
		}
	}
	if c.DownFor != 0 {
		flag(FlagDownFor, c.DownFor.String())
	}
	if c.Timeout != 0 {
		flag(FlagTimeout, c.Timeout.String())
	}
	if c.ReadTimeout != 0 {
		flag(FlagReadTimeout, c.ReadTimeout.String())
	}
	if c.HeaderTimeout != 0 {
		flag(FlagHeaderTimeout, c.HeaderTimeout.String())
	}
	if c.IdleTimeout != 0 {
		flag(FlagIdleTimeout, c.IdleTimeout.String())
	}
	if c.L4IdleTimeout != 0 {
		flag(FlagL4IdleTimeout, c.L4IdleTimeout.String())
	}
	if c.Threads != 0 {
		flag(FlagThreads, strconv.Itoa(c.Threads))
	}
	if c.InjectCost != 0 {
		flag(FlagInjectCost, c.InjectCost.String())
	}
	return a
}

// Run is "lbbench proxy": it builds the proxy of c, listens on c.Listen
// and c.Admin (an address in use is an error naming the flag to change),
// reports readiness on stderr and serves until ctx ends, then drains (see
// Proxy.Serve).
func Run(ctx context.Context, stderr io.Writer, c Command) error {
	if c.Threads < 0 || c.Threads > MaxThreads {
		return fmt.Errorf("balancer: --%s: must be between 0 and %d, got %d", FlagThreads, MaxThreads, c.Threads)
	}
	p, err := New(c.Config)
	if err != nil {
		return err
	}
	if c.Threads > 0 {
		runtime.GOMAXPROCS(c.Threads)
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	ln, err := listenFlag(ctx, c.Listen, FlagListen)
	if err != nil {
		return err
	}
	var adminLn net.Listener
	adminAt := "off"
	if c.Admin != "" {
		if adminLn, err = listenFlag(ctx, c.Admin, FlagAdmin); err != nil {
			ln.Close()
			return err
		}
		adminAt = "on " + adminLn.Addr().String()
	}
	if err := p.Preopen(ctx); err != nil {
		ln.Close()
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	cfg := c.Config.WithDefaults()
	pools := []string{}
	if len(cfg.Upstreams) > 0 {
		pools = append(pools, fmt.Sprintf("%s %s x%d", DefaultPool, cfg.Policy, len(cfg.Upstreams)))
	}
	for _, pl := range cfg.Pools {
		pools = append(pools, fmt.Sprintf("%s %s %s x%d", pl.Name, pl.Prefix, pl.Policy, len(pl.Upstreams)))
	}
	upstream := "keep-alive off"
	switch {
	case cfg.Mode == L4:
		upstream = "one upstream connection per client connection"
	case cfg.UpstreamKeepAlive && cfg.CloseAfter > 0:
		upstream = fmt.Sprintf("keep-alive on, close after %d, max idle %d", cfg.CloseAfter, cfg.MaxIdle)
	case cfg.UpstreamKeepAlive && cfg.Preopen > 0:
		upstream = fmt.Sprintf("keep-alive on, %d opened per backend, used in turn", cfg.Preopen)
	case cfg.UpstreamKeepAlive:
		upstream = fmt.Sprintf("keep-alive on, max idle %d", cfg.MaxIdle)
	}
	injected := ""
	if cfg.InjectCost > 0 {
		per := "request"
		if cfg.Mode == L4 {
			per = "client connection"
		}
		injected = fmt.Sprintf("; injected cost %v of CPU per %s", cfg.InjectCost, per)
	}
	fmt.Fprintf(stderr, "lbbench proxy: ready: %s listening on %s (pools: %s; upstream %s; retries %d%s); admin %s\n",
		cfg.Mode, ln.Addr(), strings.Join(pools, ", "), upstream, cfg.Retries, injected, adminAt)
	return p.Serve(ctx, ln, adminLn)
}

// listenFlag listens on addr, given by the named flag, with an error that
// says what to do when the port is taken.
func listenFlag(ctx context.Context, addr, flag string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("proxy: listen %s: %w (pick another --%s)", addr, syscall.EADDRINUSE, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return ln, nil
}
