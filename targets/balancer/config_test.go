package balancer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/balance"
)

func TestConfigWithDefaults(t *testing.T) {
	got := Config{Upstreams: []string{"127.0.0.1:1"}}.WithDefaults()
	if got.Policy != DefaultPolicy || got.Timeout != DefaultTimeout || got.Mode != DefaultMode || got.MaxIdle != DefaultMaxIdle || got.DownFor != DefaultDownFor {
		t.Errorf("WithDefaults() = %+v", got)
	}
	pools := []Pool{{Name: "w"}}
	if got := (Config{Policy: "p2c", Pools: pools}).WithDefaults(); got.Pools[0].Policy != "p2c" || pools[0].Policy != "" {
		t.Errorf("pool policy defaults to %q; original changed to %q", got.Pools[0].Policy, pools[0].Policy)
	}
	set := Config{Upstreams: []string{"127.0.0.1:1"}, Policy: "round_robin", Timeout: time.Second}
	if got := set.WithDefaults(); got.Policy != set.Policy || got.Timeout != set.Timeout {
		t.Errorf("WithDefaults() changed set fields: %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	valid := func(edit func(*Config)) Config {
		c := Config{Upstreams: []string{"127.0.0.1:9001", "localhost:9002"}}.WithDefaults()
		edit(&c)
		return c
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means valid
		is      error
	}{
		{name: "valid", cfg: valid(func(*Config) {})},
		{name: "no upstreams", cfg: valid(func(c *Config) { c.Upstreams = nil }), wantErr: "balancer: upstreams: none given"},
		{name: "missing port", cfg: valid(func(c *Config) { c.Upstreams[1] = "localhost" }), wantErr: `balancer: upstreams[1]: "localhost" is not host:port or unix:/path`},
		{name: "unix upstream", cfg: valid(func(c *Config) { c.Upstreams[1] = "unix:/run/w.sock" })},
		{name: "unix without path", cfg: valid(func(c *Config) { c.Upstreams[1] = "unix:" }), wantErr: `balancer: upstreams[1]: "unix:" has no socket path`},
		{name: "unknown mode", cfg: valid(func(c *Config) { c.Mode = "l3" }), wantErr: `balancer: mode: unknown mode "l3" (known: l7, l4)`},
		{name: "l4", cfg: valid(func(c *Config) { c.Mode = L4; c.Retries = 2 })},
		{name: "bad policy argument", cfg: valid(func(c *Config) { c.Policy = "ewma_least_conn"; c.PolicyArgs = map[string]string{"alpha": "2"} }), wantErr: `balancer: policy: balance: policy ewma_least_conn: argument alpha: "2"`},
		{name: "hash in l4", cfg: valid(func(c *Config) { c.Mode = L4; c.Policy = "hash" }), wantErr: "balancer: policy: hash needs the request, so mode l7"},
		{name: "pools", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "write", Prefix: "/event", Policy: "round_robin", Upstreams: []string{"127.0.0.1:1"}}}
		})},
		{name: "catch-all pool, no upstreams", cfg: valid(func(c *Config) {
			c.Upstreams = nil
			c.Pools = []Pool{{Name: "all", Prefix: "/", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		})},
		{name: "pools without catch-all or upstreams", cfg: valid(func(c *Config) {
			c.Upstreams = nil
			c.Pools = []Pool{{Name: "w", Prefix: "/event", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: "balancer: upstreams: none given (list at least one host:port or unix:/path, or give a pool with prefix /)"},
		{name: "upstreams and a catch-all pool", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "all", Prefix: "/", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: "balancer: upstreams: never used"},
		{name: "pools in l4", cfg: valid(func(c *Config) {
			c.Mode = L4
			c.Pools = []Pool{{Name: "w", Prefix: "/event", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: "balancer: pools: routing by path needs mode l7"},
		{name: "pool named default", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "default", Prefix: "/event", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: `balancer: pools[0].name: "default" must be made of`},
		{name: "pool name with a dot", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "a.b", Prefix: "/event", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: `balancer: pools[0].name: "a.b" must be made of a-z`},
		{name: "duplicate pool", cfg: valid(func(c *Config) {
			p := Pool{Name: "w", Prefix: "/a", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}
			q := p
			q.Prefix = "/b"
			c.Pools = []Pool{p, q}
		}), wantErr: `balancer: pools[1].name: pool "w" given twice`},
		{name: "duplicate prefix", cfg: valid(func(c *Config) {
			p := Pool{Name: "w", Prefix: "/a", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}
			q := p
			q.Name = "x"
			c.Pools = []Pool{p, q}
		}), wantErr: `balancer: pools[1].prefix: "/a" is already another pool's`},
		{name: "prefix without slash", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "w", Prefix: "event", Policy: "p2c", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: `balancer: pools[0].prefix: "event" must start with /`},
		{name: "pool without upstreams", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "w", Prefix: "/e", Policy: "p2c"}}
		}), wantErr: `balancer: pools[0].upstreams: none given`},
		{name: "pool bad upstream", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "w", Prefix: "/e", Policy: "p2c", Upstreams: []string{"x"}}}
		}), wantErr: `balancer: pools[0].upstreams[0]: "x" is not host:port`},
		{name: "pool unknown policy", cfg: valid(func(c *Config) {
			c.Pools = []Pool{{Name: "w", Prefix: "/e", Policy: "fastest", Upstreams: []string{"127.0.0.1:1"}}}
		}), wantErr: `balancer: pools[0].policy: balance: unknown policy "fastest"`, is: balance.ErrUnknownPolicy},
		{name: "close_after", cfg: valid(func(c *Config) { c.UpstreamKeepAlive = true; c.CloseAfter = 5 })},
		{name: "close_after without keep-alive", cfg: valid(func(c *Config) { c.CloseAfter = 5 }), wantErr: "balancer: close_after: 5 needs upstream keep-alive on"},
		{name: "close_after in l4", cfg: valid(func(c *Config) { c.Mode = L4; c.UpstreamKeepAlive = true; c.CloseAfter = 5 }), wantErr: "balancer: close_after: needs mode l7"},
		{name: "negative close_after", cfg: valid(func(c *Config) { c.CloseAfter = -1 }), wantErr: "balancer: close_after: -1 is negative"},
		{name: "negative max_idle", cfg: valid(func(c *Config) { c.MaxIdle = -1 }), wantErr: "balancer: max_idle: -1 is negative"},
		{name: "negative retries", cfg: valid(func(c *Config) { c.Retries = -1 }), wantErr: "balancer: retries: -1 is negative"},
		{name: "negative down_for", cfg: valid(func(c *Config) { c.DownFor = -time.Second }), wantErr: "balancer: down_for: -1s is negative"},
		{name: "empty port", cfg: valid(func(c *Config) { c.Upstreams[0] = "127.0.0.1:" }), wantErr: "balancer: upstreams[0]"},
		{name: "unknown policy", cfg: valid(func(c *Config) { c.Policy = "leastconn" }), wantErr: `unknown policy "leastconn"`, is: balance.ErrUnknownPolicy},
		{name: "negative timeout", cfg: valid(func(c *Config) { c.Timeout = -time.Second }), wantErr: "balancer: timeout: -1s is negative"},
		{name: "negative header timeout", cfg: valid(func(c *Config) { c.HeaderTimeout = -time.Second }), wantErr: "balancer: header timeout: -1s is negative"},
		{name: "negative idle timeout", cfg: valid(func(c *Config) { c.IdleTimeout = -time.Second }), wantErr: "balancer: idle timeout: -1s is negative"},
		{name: "inject cost", cfg: valid(func(c *Config) { c.InjectCost = 40 * time.Microsecond })},
		{name: "inject cost in l4", cfg: valid(func(c *Config) { c.Mode = L4; c.InjectCost = time.Millisecond })},
		{name: "negative inject cost", cfg: valid(func(c *Config) { c.InjectCost = -time.Microsecond }), wantErr: "balancer: inject_cost: -1µs is not between 0 (none) and 1s"},
		{name: "inject cost past the bound", cfg: valid(func(c *Config) { c.InjectCost = 2 * time.Second }), wantErr: "balancer: inject_cost: 2s is not between 0 (none) and 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v does not wrap %v", err, tt.is)
			}
			if _, err := New(tt.cfg); err == nil {
				t.Fatal("New accepted a config Validate rejects")
			}
		})
	}
}

func TestParsePool(t *testing.T) {
	tests := []struct {
		in      string
		want    Pool
		wantErr bool
	}{
		{in: "write:/event:round_robin:127.0.0.1:9003", want: Pool{Name: "write", Prefix: "/event", Policy: "round_robin", Upstreams: []string{"127.0.0.1:9003"}}},
		{in: "read:/::127.0.0.1:9000,unix:/run/w1.sock", want: Pool{Name: "read", Prefix: "/", Upstreams: []string{"127.0.0.1:9000", "unix:/run/w1.sock"}}},
		{in: "read:/:least_conn", wantErr: true},
		{in: ":/:least_conn:127.0.0.1:1", wantErr: true},
		{in: "a::least_conn:127.0.0.1:1", wantErr: true},
		{in: "a:/x:p2c:", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePool(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "want NAME:PREFIX:POLICY:ADDR") {
					t.Fatalf("ParsePool = %+v, %v; want a usage error", got, err)
				}
				return
			}
			if err != nil || got.Name != tt.want.Name || got.Prefix != tt.want.Prefix || got.Policy != tt.want.Policy ||
				strings.Join(got.Upstreams, " ") != strings.Join(tt.want.Upstreams, " ") {
				t.Fatalf("ParsePool = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestSetPolicyArg(t *testing.T) {
	c := Config{Pools: []Pool{{Name: "write"}}}
	for _, s := range []string{"alpha=0.5", "write.key=header:X-User", "write.seed=3", "key=a=b"} {
		if err := c.SetPolicyArg(s); err != nil {
			t.Fatalf("SetPolicyArg(%q): %v", s, err)
		}
	}
	if c.PolicyArgs["alpha"] != "0.5" || c.PolicyArgs["key"] != "a=b" || len(c.PolicyArgs) != 2 {
		t.Errorf("default pool args %v", c.PolicyArgs)
	}
	if w := c.Pools[0].PolicyArgs; w["key"] != "header:X-User" || w["seed"] != "3" || len(w) != 2 {
		t.Errorf("write pool args %v", w)
	}
	for _, s := range []string{"alpha", "=1", "read.alpha=1", "write.=1"} {
		if err := c.SetPolicyArg(s); err == nil {
			t.Errorf("SetPolicyArg(%q) accepted", s)
		}
	}
}

func TestParseUpstream(t *testing.T) {
	tests := []struct{ in, network, address string }{
		{"127.0.0.1:80", "tcp", "127.0.0.1:80"},
		{"[::1]:80", "tcp", "[::1]:80"},
		{"localhost:9000", "tcp", "localhost:9000"},
		{"unix:/tmp/a.sock", "unix", "/tmp/a.sock"},
		{"unix:rel.sock", "unix", "rel.sock"},
		{"unix:", "", ""},
		{"127.0.0.1", "", ""},
		{"127.0.0.1:", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		n, a, err := ParseUpstream(tt.in)
		if n != tt.network || a != tt.address || (err == nil) != (tt.network != "") {
			t.Errorf("ParseUpstream(%q) = %q, %q, %v; want %q, %q", tt.in, n, a, err, tt.network, tt.address)
		}
	}
}

// FuzzParsePool: never panics; a parsed pool prints back to an equivalent
// spec.
func FuzzParsePool(f *testing.F) {
	for _, s := range []string{"write:/event:round_robin:127.0.0.1:9003", "r:/::unix:/a,unix:/b", "::::", "a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePool(s)
		if err != nil {
			return
		}
		back := p.Name + ":" + p.Prefix + ":" + p.Policy + ":" + strings.Join(p.Upstreams, ",")
		if back != s {
			t.Fatalf("ParsePool(%q) = %+v, which prints as %q", s, p, back)
		}
		_ = Config{Pools: []Pool{p}}.WithDefaults().Validate()
	})
}

// FuzzSetPolicyArg: never panics; a stored argument is found where the
// spec says.
func FuzzSetPolicyArg(f *testing.F) {
	for _, s := range []string{"alpha=0.5", "w.key=header:X", "=", ".=", "w.=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Config{Pools: []Pool{{Name: "w"}}}
		if err := c.SetPolicyArg(s); err != nil {
			return
		}
		kv, v, _ := strings.Cut(s, "=")
		if pool, key, ok := strings.Cut(kv, "."); ok {
			if pool != "w" || c.Pools[0].PolicyArgs[key] != v {
				t.Fatalf("%q stored as %v", s, c.Pools[0].PolicyArgs)
			}
		} else if c.PolicyArgs[kv] != v {
			t.Fatalf("%q stored as %v", s, c.PolicyArgs)
		}
	})
}

// FuzzParseUpstream: never panics; what it accepts, Validate accepts.
func FuzzParseUpstream(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "unix:/a", "unix:", "[::1]:1", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, a, err := ParseUpstream(s)
		if err != nil {
			return
		}
		if (n != "tcp" && n != "unix") || a == "" {
			t.Fatalf("ParseUpstream(%q) = %q, %q", s, n, a)
		}
		if err := (Config{Upstreams: []string{s}}).WithDefaults().Validate(); err != nil {
			t.Fatalf("ParseUpstream accepts %q, Validate says %v", s, err)
		}
	})
}
