package balancer

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Defaults used by Config.WithDefaults and by the CLI flags.
const (
	// DefaultPolicy is the policy used when Config.Policy is empty.
	DefaultPolicy = "least_conn"
	// DefaultUpstreamKeepAlive is the recommended Config.UpstreamKeepAlive.
	// It is the CLI default; a zero Config has keep-alive off, because a
	// bool cannot tell "unset" from false.
	DefaultUpstreamKeepAlive = true
	// DefaultTimeout is the upstream timeout used when Config.Timeout is
	// zero.
	DefaultTimeout = 30 * time.Second
)

// Config describes a Proxy. The zero value is not valid: Upstreams is
// required.
type Config struct {
	// Upstreams lists the backends as host:port, in order; a backend's index
	// is its position here. Required. A repeated address is a separate
	// backend that happens to share the upstream.
	Upstreams []string `yaml:"upstreams" json:"upstreams"`
	// Policy is the registered name of the balancing policy (see Policies).
	// Empty means DefaultPolicy.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// PolicyArgs are passed to the policy's factory. Nil means none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// UpstreamKeepAlive reuses upstream connections between requests. When
	// false (the zero value) every request opens a fresh connection, so a
	// connection never pins requests to one worker.
	UpstreamKeepAlive bool `yaml:"upstream_keepalive" json:"upstream_keepalive"`
	// Timeout bounds how long the proxy waits for an upstream to accept the
	// connection and, separately, to send response headers. The response
	// body is not bounded. Zero means DefaultTimeout; negative is invalid.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// WithDefaults returns a copy of c with empty fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Policy == "" {
		c.Policy = DefaultPolicy
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate reports the first invalid field of c, naming it. It does not
// apply defaults, so an empty Policy is an error here; New calls WithDefaults
// first. Policy arguments are checked by the policy's factory, in New.
func (c Config) Validate() error {
	if len(c.Upstreams) == 0 {
		return errors.New("balancer: upstreams: none given (list at least one host:port)")
	}
	for i, u := range c.Upstreams {
		if _, port, err := net.SplitHostPort(u); err != nil || port == "" {
			return fmt.Errorf("balancer: upstreams[%d]: %q is not host:port (e.g. 127.0.0.1:9001)", i, u)
		}
	}
	if _, ok := lookup(c.Policy); !ok {
		return unknownPolicy(c.Policy)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("balancer: timeout: %v is negative", c.Timeout)
	}
	return nil
}
