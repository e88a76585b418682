package balancer

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigWithDefaults(t *testing.T) {
	got := Config{Upstreams: []string{"127.0.0.1:1"}}.WithDefaults()
	if got.Policy != DefaultPolicy || got.Timeout != DefaultTimeout {
		t.Errorf("WithDefaults() = policy %q, timeout %v; want %q, %v", got.Policy, got.Timeout, DefaultPolicy, DefaultTimeout)
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
		{name: "missing port", cfg: valid(func(c *Config) { c.Upstreams[1] = "localhost" }), wantErr: `balancer: upstreams[1]: "localhost" is not host:port`},
		{name: "empty port", cfg: valid(func(c *Config) { c.Upstreams[0] = "127.0.0.1:" }), wantErr: "balancer: upstreams[0]"},
		{name: "unknown policy", cfg: valid(func(c *Config) { c.Policy = "leastconn" }), wantErr: `unknown policy "leastconn"`, is: ErrUnknownPolicy},
		{name: "negative timeout", cfg: valid(func(c *Config) { c.Timeout = -time.Second }), wantErr: "balancer: timeout: -1s is negative"},
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
