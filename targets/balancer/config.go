package balancer

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/internal/busywork"
)

// Mode says what the proxy decides on.
type Mode string

// Modes.
const (
	// L7 parses HTTP and picks a backend for every request, forwarding it
	// on pooled upstream connections with a Forwarded header added.
	L7 Mode = "l7"
	// L4 picks a backend once per client TCP connection, then copies bytes
	// both ways without parsing them.
	L4 Mode = "l4"
)

// DefaultPool is the name of the pool formed by Config.Upstreams.
const DefaultPool = balance.DefaultPool

// UnixPrefix marks an upstream address as a Unix socket path:
// unix:/run/worker0.sock.
const UnixPrefix = "unix:"

// Defaults used by Config.WithDefaults and by the CLI flags.
const (
	// DefaultMode is the mode used when Config.Mode is empty.
	DefaultMode = L7
	// DefaultPolicy is the policy used when Config.Policy is empty.
	DefaultPolicy = "least_conn"
	// DefaultUpstreamKeepAlive is the recommended Config.UpstreamKeepAlive.
	// It is the CLI default; a zero Config has keep-alive off, because a
	// bool cannot tell "unset" from false.
	DefaultUpstreamKeepAlive = true
	// DefaultTimeout is the upstream timeout used when Config.Timeout is
	// zero.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxIdle is the number of idle upstream connections kept per
	// backend when Config.MaxIdle is zero: far above any concurrency a
	// benchmark worker sees.
	DefaultMaxIdle = balance.DefaultMaxIdle
	// DefaultDownFor is how long a backend that refused a connection is
	// skipped when Config.DownFor is zero.
	DefaultDownFor = time.Second
	// DefaultHeaderTimeout is how long the layer-7 proxy waits for a
	// client's complete request head when Config.HeaderTimeout is zero: a
	// client sending its head one byte a second is closed after it.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long the layer-7 proxy keeps an idle
	// client keep-alive connection when Config.IdleTimeout is zero.
	DefaultIdleTimeout = 60 * time.Second
)

// Config describes a Proxy. The zero value is not valid: Upstreams, or a
// pool with prefix "/", is required.
type Config struct {
	// Mode is L7 or L4; empty means DefaultMode.
	Mode Mode `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Upstreams lists the backends of the default pool, which serves every
	// request no pool in Pools claims, in order; a backend's index is its
	// position here. Each is host:port or unix:/path. Required unless a
	// pool has prefix "/". A repeated address is a separate backend that
	// happens to share the upstream.
	Upstreams []string `yaml:"upstreams" json:"upstreams"`
	// Policy is the registered name of the default pool's balancing policy
	// (see Policies). Empty means DefaultPolicy.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// PolicyArgs are passed to the default pool's policy factory. Nil means
	// none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// Pools route requests by path prefix to their own backends and policy
	// (layer 7 only); the longest matching prefix wins. Nil means none.
	Pools []Pool `yaml:"pools,omitempty" json:"pools,omitempty"`
	// UpstreamKeepAlive reuses upstream connections between requests (layer
	// 7). When false (the zero value) every request opens a fresh
	// connection, so a connection never pins requests to one worker.
	UpstreamKeepAlive bool `yaml:"upstream_keepalive" json:"upstream_keepalive"`
	// CloseAfter closes an upstream connection once it has carried that
	// many requests (layer 7, keep-alive on): the last one is sent with
	// "Connection: close". Zero means no limit.
	CloseAfter int `yaml:"close_after,omitempty" json:"close_after,omitempty"`
	// MaxIdle caps the idle upstream connections kept per backend (layer
	// 7); one more is closed instead of kept. Zero means DefaultMaxIdle.
	MaxIdle int `yaml:"max_idle,omitempty" json:"max_idle,omitempty"`
	// Preopen opens that many connections to every backend before the
	// proxy reports ready (layer 7, keep-alive on, no close_after), and
	// each request takes the backend's connection idle the longest
	// instead of the one used last: a front that keeps many connections
	// to its workers, all in use, each pinned to whichever worker (on a
	// shared socket) accepted it. Zero means none: connections are opened
	// on demand and the last used is reused first.
	Preopen int `yaml:"preopen,omitempty" json:"preopen,omitempty"`
	// Retries is how many other backends a request (layer 7) or client
	// connection (layer 4) may try after a backend refused the upstream
	// connection; nothing had been sent, so any method is safe to retry.
	// Zero (the default) means none: that request gets a 502, and later
	// ones skip the backend.
	Retries int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// DownFor is how long policies skip a backend that refused a
	// connection (passive health). Zero means DefaultDownFor.
	DownFor time.Duration `yaml:"down_for,omitempty" json:"down_for,omitempty"`
	// Timeout bounds how long the proxy waits for an upstream to accept the
	// connection and, separately (layer 7), to send response headers. Zero
	// means DefaultTimeout; negative is invalid.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// ReadTimeout bounds how long the proxy waits for the next bytes of an
	// upstream's response body (layer 7), as nginx's proxy_read_timeout
	// does between two reads: an upstream silent that long mid-body is cut
	// off, and the client's connection is closed before the announced end
	// of the response. Zero means Timeout; negative is invalid.
	ReadTimeout time.Duration `yaml:"read_timeout,omitempty" json:"read_timeout,omitempty"`
	// HeaderTimeout bounds how long a client connection (layer 7) may take
	// to send a request head, from its first byte or, on a keep-alive
	// connection, from the end of the previous response; the connection is
	// closed when it expires. Zero means DefaultHeaderTimeout; negative is
	// invalid.
	HeaderTimeout time.Duration `yaml:"header_timeout,omitempty" json:"header_timeout,omitempty"`
	// IdleTimeout closes a client keep-alive connection (layer 7) that
	// sent no new request for that long. Zero means DefaultIdleTimeout;
	// negative is invalid.
	IdleTimeout time.Duration `yaml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
	// NetHTTP makes Serve forward layer 7 with net/http's server and
	// httputil.ReverseProxy (as ServeHTTP does) instead of the built-in
	// HTTP/1.1 forwarder: slower, kept for comparison.
	NetHTTP bool `yaml:"net_http,omitempty" json:"net_http,omitempty"`
	// L4IdleTimeout is how long a layer-4 connection may move no byte in
	// either direction before the proxy closes it (see l4.go). Zero means
	// DefaultL4IdleTimeout; negative is invalid.
	L4IdleTimeout time.Duration `yaml:"l4_idle_timeout,omitempty" json:"l4_idle_timeout,omitempty"`
	// InjectCost is CPU time the proxy spends in busy work
	// (busywork.Spend) on every request it forwards (layer 7: once per
	// request, before the pick, however many backends it tries; layer 4:
	// once per client connection, which is all it sees): a known extra
	// cost, to check that a gate judging the proxy's CPU per request fails
	// it ("lbbench run --baseline REF --inject-cost proxy=D"). Zero means
	// none; at most busywork.Max.
	InjectCost time.Duration `yaml:"inject_cost,omitempty" json:"inject_cost,omitempty"`
}

// Pool is a named set of backends that serves the requests whose path
// starts with Prefix, with its own policy.
type Pool struct {
	// Name labels the pool in Stats; required, unique, made of a-z, 0-9,
	// _ and -, and not DefaultPool.
	Name string `yaml:"name" json:"name"`
	// Prefix is a plain path prefix starting with "/": /event matches
	// /event, /event/1 and /events. Required and unique; "/" takes every
	// path no longer prefix matches, in place of the default pool (so
	// Config.Upstreams must then be empty).
	Prefix string `yaml:"prefix" json:"prefix"`
	// Policy is the pool's policy name; empty means Config.Policy.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// PolicyArgs are passed to the pool's policy factory. Nil means none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// Upstreams lists the pool's backends, as Config.Upstreams; required.
	Upstreams []string `yaml:"upstreams" json:"upstreams"`
}

// WithDefaults returns a copy of c with empty fields set to their defaults.
// It does not share c's Pools slice.
func (c Config) WithDefaults() Config {
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.Policy == "" {
		c.Policy = DefaultPolicy
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = c.Timeout
	}
	if c.HeaderTimeout == 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = DefaultMaxIdle
	}
	if c.DownFor == 0 {
		c.DownFor = DefaultDownFor
	}
	c.Pools = slices.Clone(c.Pools)
	for i := range c.Pools {
		if c.Pools[i].Policy == "" {
			c.Pools[i].Policy = c.Policy
		}
	}
	return c
}

// Validate reports the first invalid field of c, naming it. It does not
// apply defaults, so an empty Policy is an error here; New calls WithDefaults
// first. It builds each policy once to check its arguments.
func (c Config) Validate() error {
	if c.Mode != L7 && c.Mode != L4 {
		return fmt.Errorf("balancer: mode: unknown mode %q (known: %s, %s)", c.Mode, L7, L4)
	}
	catchAll := slices.ContainsFunc(c.Pools, func(p Pool) bool { return p.Prefix == "/" })
	if len(c.Upstreams) == 0 && !catchAll {
		return errors.New("balancer: upstreams: none given (list at least one host:port or unix:/path, or give a pool with prefix /)")
	}
	if len(c.Upstreams) > 0 && catchAll {
		return errors.New("balancer: upstreams: never used, since a pool has prefix / and takes every path the other pools do not (drop one or the other)")
	}
	if err := checkUpstreams("upstreams", c.Upstreams); err != nil {
		return err
	}
	if err := c.checkPolicy("policy", c.Policy, c.PolicyArgs); err != nil {
		return err
	}
	if len(c.Pools) > 0 && c.Mode == L4 {
		return errors.New("balancer: pools: routing by path needs mode l7 (layer 4 does not parse requests)")
	}
	names, prefixes := map[string]bool{}, map[string]bool{}
	for i, p := range c.Pools {
		f := fmt.Sprintf("pools[%d]", i)
		if !validPoolName(p.Name) || p.Name == DefaultPool {
			return fmt.Errorf("balancer: %s.name: %q must be made of a-z, 0-9, _ and - and not be %q", f, p.Name, DefaultPool)
		}
		if names[p.Name] {
			return fmt.Errorf("balancer: %s.name: pool %q given twice", f, p.Name)
		}
		names[p.Name] = true
		if !strings.HasPrefix(p.Prefix, "/") {
			return fmt.Errorf("balancer: %s.prefix: %q must start with /", f, p.Prefix)
		}
		if prefixes[p.Prefix] {
			return fmt.Errorf("balancer: %s.prefix: %q is already another pool's", f, p.Prefix)
		}
		prefixes[p.Prefix] = true
		if len(p.Upstreams) == 0 {
			return fmt.Errorf("balancer: %s.upstreams: none given", f)
		}
		if err := checkUpstreams(f+".upstreams", p.Upstreams); err != nil {
			return err
		}
		if err := c.checkPolicy(f+".policy", p.Policy, p.PolicyArgs); err != nil {
			return err
		}
	}
	if c.CloseAfter < 0 {
		return fmt.Errorf("balancer: close_after: %d is negative", c.CloseAfter)
	}
	if c.MaxIdle < 0 {
		return fmt.Errorf("balancer: max_idle: %d is negative", c.MaxIdle)
	}
	switch {
	case c.Preopen < 0:
		return fmt.Errorf("balancer: preopen: %d is negative", c.Preopen)
	case c.Preopen > 0 && c.Mode == L4:
		return errors.New("balancer: preopen: needs mode l7 (layer 4 opens one upstream connection per client connection)")
	case c.Preopen > 0 && (!c.UpstreamKeepAlive || c.CloseAfter > 0):
		return fmt.Errorf("balancer: preopen: %d keeps its connections for the run: it needs upstream keep-alive on and no close_after", c.Preopen)
	case c.MaxIdle > 0 && c.Preopen > c.MaxIdle:
		return fmt.Errorf("balancer: preopen: %d connections per backend is more than max_idle %d keeps idle", c.Preopen, c.MaxIdle)
	}
	if c.Mode == L4 && c.CloseAfter > 0 {
		return errors.New("balancer: close_after: needs mode l7 (layer 4 does not see requests)")
	}
	if c.CloseAfter > 0 && !c.UpstreamKeepAlive {
		return fmt.Errorf("balancer: close_after: %d needs upstream keep-alive on (with it off every connection carries one request)", c.CloseAfter)
	}
	if c.Retries < 0 {
		return fmt.Errorf("balancer: retries: %d is negative", c.Retries)
	}
	if c.DownFor < 0 {
		return fmt.Errorf("balancer: down_for: %v is negative", c.DownFor)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("balancer: timeout: %v is negative", c.Timeout)
	}
	if c.ReadTimeout < 0 {
		return fmt.Errorf("balancer: read timeout: %v is negative", c.ReadTimeout)
	}
	if c.HeaderTimeout < 0 {
		return fmt.Errorf("balancer: header timeout: %v is negative", c.HeaderTimeout)
	}
	if c.IdleTimeout < 0 {
		return fmt.Errorf("balancer: idle timeout: %v is negative", c.IdleTimeout)
	}
	if c.L4IdleTimeout < 0 || c.L4IdleTimeout > time.Hour {
		return fmt.Errorf("balancer: l4_idle_timeout: %v is not between 0 (default %v) and 1h", c.L4IdleTimeout, DefaultL4IdleTimeout)
	}
	if c.InjectCost < 0 || c.InjectCost > busywork.Max {
		return fmt.Errorf("balancer: inject_cost: %v is not between 0 (none) and %v", c.InjectCost, busywork.Max)
	}
	return nil
}

// checkPolicy checks that name is registered, that args suit it and that
// the mode can run it.
func (c Config) checkPolicy(field, name string, args map[string]string) error {
	p, err := balance.NewPolicy(name, args)
	if err != nil {
		return fmt.Errorf("balancer: %s: %w", field, err)
	}
	if balance.NeedsRequest(p) && c.Mode == L4 {
		return fmt.Errorf("balancer: %s: %s needs the request, so mode l7 (layer 4 decides per connection)", field, name)
	}
	return nil
}

func checkUpstreams(field string, addrs []string) error {
	for i, u := range addrs {
		if _, _, err := ParseUpstream(u); err != nil {
			return fmt.Errorf("balancer: %s[%d]: %w", field, i, err)
		}
	}
	return nil
}

// ParseUpstream splits an upstream address into a network and an address
// for net.Dial: "unix:/path" gives ("unix", "/path"), "host:port" gives
// ("tcp", "host:port").
func ParseUpstream(addr string) (network, address string, err error) {
	if path, ok := strings.CutPrefix(addr, UnixPrefix); ok {
		if path == "" {
			return "", "", fmt.Errorf("%q has no socket path (e.g. unix:/run/worker0.sock)", addr)
		}
		return "unix", path, nil
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return "", "", fmt.Errorf("%q is not host:port or unix:/path (e.g. 127.0.0.1:9001)", addr)
	}
	return "tcp", addr, nil
}

func validPoolName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// ParsePool parses the command-line form of a pool,
// NAME:PREFIX:POLICY:ADDR[,ADDR...], for example
// "write:/event:round_robin:127.0.0.1:9003" or
// "read:/:least_conn:127.0.0.1:9000,unix:/run/w1.sock". An empty POLICY
// means Config.Policy. The prefix may not contain ':'. Policy arguments are
// given separately (see Config.SetPolicyArg). Fields are checked by
// Config.Validate, except that the four parts must be there.
func ParsePool(s string) (Pool, error) {
	parts := strings.SplitN(s, ":", 4)
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || parts[3] == "" {
		return Pool{}, fmt.Errorf("balancer: pool %q: want NAME:PREFIX:POLICY:ADDR[,ADDR...], for example write:/event:round_robin:127.0.0.1:9003", s)
	}
	return Pool{
		Name:      parts[0],
		Prefix:    parts[1],
		Policy:    parts[2],
		Upstreams: strings.Split(parts[3], ","),
	}, nil
}

// SetPolicyArg parses the command-line form of a policy argument and stores
// it: KEY=VALUE sets the default pool's argument, POOL.KEY=VALUE the named
// pool's (which must already be in c.Pools). VALUE may contain '=' and ':',
// as in key=header:X-User.
func (c *Config) SetPolicyArg(s string) error {
	kv, value, ok := strings.Cut(s, "=")
	if !ok || kv == "" {
		return fmt.Errorf("balancer: policy argument %q: want KEY=VALUE or POOL.KEY=VALUE, for example alpha=0.5", s)
	}
	args := &c.PolicyArgs
	if pool, key, scoped := strings.Cut(kv, "."); scoped {
		i := slices.IndexFunc(c.Pools, func(p Pool) bool { return p.Name == pool })
		if i < 0 || key == "" {
			return fmt.Errorf("balancer: policy argument %q: no pool named %q", s, pool)
		}
		args, kv = &c.Pools[i].PolicyArgs, key
	}
	if *args == nil {
		*args = map[string]string{}
	}
	(*args)[kv] = value
	return nil
}
