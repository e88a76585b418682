package topologies

import (
	"fmt"
	"slices"
	"strings"
)

// L7Pools gives each worker its own port behind the built-in layer-7 proxy,
// which routes each request by path prefix to one of ProxySpec.Pools, each
// with its own workers and policy: for example /event to a write pool and
// everything else to a read pool.
const L7Pools = "l7-pools"

func init() { renderers[L7Pools] = renderL7Pools }

// Pool is a set of workers serving the requests whose path starts with
// Prefix (topology l7-pools).
type Pool struct {
	// Name labels the pool in the proxy's counters; required, unique, made
	// of a-z, 0-9, _ and -, and not "default".
	Name string `yaml:"name" json:"name"`
	// Prefix is a plain path prefix starting with "/" (/event also matches
	// /events); required and unique. The longest matching prefix wins; one
	// pool must have prefix "/" to take every other path.
	Prefix string `yaml:"prefix" json:"prefix"`
	// Policy is the pool's policy; empty means the variant's proxy.policy.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// PolicyArgs are the pool's policy arguments; nil means none.
	PolicyArgs map[string]string `yaml:"policy_args,omitempty" json:"policy_args,omitempty"`
	// Workers are the indexes (from 0) of the pool's workers; at least one.
	// A worker may be in several pools.
	Workers []int `yaml:"workers" json:"workers"`
}

// renderL7Pools: one "lbbench serve" with worker i on port base+i, and the
// built-in layer-7 proxy with one --pool per pool.
func renderL7Pools(v Variant, w Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l7")
}

// validatePools checks the pools of an l7-pools variant. Worker indexes are
// checked against workers.count when the variant is rendered.
func validatePools(pools []Pool, policies []string) error {
	if len(pools) == 0 {
		return fieldErr("proxy.pools", "topology %s needs at least one pool (for example {name: read, prefix: /, workers: [0, 1, 2]})", L7Pools)
	}
	names, prefixes := map[string]bool{}, map[string]bool{}
	for i, pl := range pools {
		f := fmt.Sprintf("proxy.pools[%d]", i)
		if !validName(pl.Name, true) || pl.Name == "default" {
			return fieldErr(f+".name", "%q must be made of a-z, 0-9, _ and - and not be \"default\"", pl.Name)
		}
		if names[pl.Name] {
			return fieldErr(f+".name", "duplicate pool name %q", pl.Name)
		}
		names[pl.Name] = true
		if !strings.HasPrefix(pl.Prefix, "/") || strings.Contains(pl.Prefix, ":") {
			return fieldErr(f+".prefix", "must start with / and hold no ':', got %q", pl.Prefix)
		}
		if prefixes[pl.Prefix] {
			return fieldErr(f+".prefix", "duplicate prefix %q", pl.Prefix)
		}
		prefixes[pl.Prefix] = true
		if err := checkPolicy(f, pl.Policy, pl.PolicyArgs, policies); err != nil {
			return err
		}
		if len(pl.Workers) == 0 {
			return fieldErr(f+".workers", "at least one worker index is required")
		}
		for j, wi := range pl.Workers {
			if wi < 0 {
				return fieldErr(fmt.Sprintf("%s.workers[%d]", f, j), "must be a worker index >= 0, got %d", wi)
			}
			if slices.Index(pl.Workers, wi) != j {
				return fieldErr(fmt.Sprintf("%s.workers[%d]", f, j), "worker %d listed twice", wi)
			}
		}
	}
	if !prefixes["/"] {
		return fieldErr("proxy.pools", "one pool needs prefix / to take the paths no other pool matches")
	}
	return nil
}
