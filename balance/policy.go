package balance

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Policy chooses the backend for one request. Pick is called once per
// request (layer 7) or per client connection (layer 4, where r is nil),
// concurrently, so it must be safe for concurrent use and should not
// allocate. It must not retain pool, and must skip backends whose
// Available reports false. It returns nil when no backend is available (for
// example when pool is empty).
type Policy interface {
	Pick(pool []*Backend, r *http.Request) *Backend
}

// Acquirer is implemented by policies whose pick and the acquisition of
// the picked backend are one step (least_conn), so that concurrent
// requests cannot all take the backend they saw least loaded. It must be
// safe for concurrent use and should not allocate.
type Acquirer interface {
	Policy
	// PickAcquire picks a backend as Pick does and acquires it, or
	// returns nil if none is available.
	PickAcquire(pool []*Backend, r *http.Request) *Backend
}

// PickAcquire picks a backend of pool with pol and acquires it (the caller
// releases it when the request or connection ends), in one step when pol
// is an Acquirer. It returns nil if none is available.
func PickAcquire(pol Policy, pool []*Backend, r *http.Request) *Backend {
	if a, ok := pol.(Acquirer); ok {
		return a.PickAcquire(pool, r)
	}
	b := pol.Pick(pool, r)
	if b != nil {
		b.Acquire()
	}
	return b
}

// maxAcquireRetries bounds an Acquirer's scans when concurrent requests
// keep taking the backend it saw least loaded.
const maxAcquireRetries = 8

// Observer is implemented by policies that learn from response times
// (peak_ewma). The proxy calls Observe after each layer-7 response's
// headers arrived from b, rtt after the request was handed to it. It must
// be safe for concurrent use and should not allocate.
type Observer interface {
	Observe(b *Backend, rtt time.Duration)
}

// requestPolicy is implemented by policies that need the request (hash) and
// so cannot decide per layer-4 connection.
type requestPolicy interface {
	needsRequest()
}

// NeedsRequest reports whether p decides from the request itself (hash),
// and so cannot decide once per layer-4 connection.
func NeedsRequest(p Policy) bool {
	_, ok := p.(requestPolicy)
	return ok
}

// ErrUnknownPolicy is returned (wrapped) by NewPolicy, Config.Validate and
// New for a policy name that is not registered.
var ErrUnknownPolicy = errors.New("balance: unknown policy")

var registry = struct {
	sync.RWMutex
	factories map[string]func(args map[string]string) (Policy, error)
}{factories: map[string]func(args map[string]string) (Policy, error){}}

// Register makes a policy available under name to NewPolicy, Config and the
// CLI. f builds a new policy from its arguments (nil or empty when none are
// given) and should reject arguments it does not know. Register is meant to be
// called from init functions; it is safe for concurrent use. It panics if name
// is not snake_case ([a-z][a-z0-9_]*), is already registered, or f is nil.
func Register(name string, f func(args map[string]string) (Policy, error)) {
	if !isSnakeCase(name) {
		panic(fmt.Sprintf("balance: Register: policy name %q is not snake_case", name))
	}
	if f == nil {
		panic(fmt.Sprintf("balance: Register: nil factory for policy %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.factories[name]; dup {
		panic(fmt.Sprintf("balance: Register: policy %q registered twice", name))
	}
	registry.factories[name] = f
}

// NewPolicy builds a new instance of the policy registered under name with
// the given arguments. An unknown name gives an error wrapping
// ErrUnknownPolicy that lists the known names. It is safe for concurrent use.
func NewPolicy(name string, args map[string]string) (Policy, error) {
	f, ok := lookup(name)
	if !ok {
		return nil, unknownPolicy(name)
	}
	return f(args)
}

// Policies returns the registered policy names, sorted. It is safe for
// concurrent use.
func Policies() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.factories))
	for name := range registry.factories {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func lookup(name string) (func(args map[string]string) (Policy, error), bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.factories[name]
	return f, ok
}

func unknownPolicy(name string) error {
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownPolicy, name, strings.Join(Policies(), ", "))
}

// noArgs is the argument check of policies that take no arguments.
func noArgs(policy string, args map[string]string) error {
	for k := range args {
		return fmt.Errorf("balance: policy %s: unknown argument %q (it takes none)", policy, k)
	}
	return nil
}

// policyArgs reads a policy's arguments, remembering the names it knows so
// that done can reject the others.
type policyArgs struct {
	policy string
	args   map[string]string
	known  []string
	err    error
}

func newArgs(policy string, args map[string]string) *policyArgs {
	return &policyArgs{policy: policy, args: args}
}

// get returns the argument's value and whether it was given.
func (a *policyArgs) get(name string) (string, bool) {
	a.known = append(a.known, name)
	v, ok := a.args[name]
	return v, ok
}

func (a *policyArgs) fail(name, value, want string) {
	if a.err == nil {
		a.err = fmt.Errorf("balance: policy %s: argument %s: %q %s", a.policy, name, value, want)
	}
}

// float reads a number in (lo, hi], or def when absent.
func (a *policyArgs) float(name string, def, lo, hi float64) float64 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > lo && f <= hi) {
		a.fail(name, v, fmt.Sprintf("is not a number in (%g, %g]", lo, hi))
		return def
	}
	return f
}

// duration reads a positive duration such as 500ms, or def when absent.
func (a *policyArgs) duration(name string, def time.Duration) time.Duration {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		a.fail(name, v, "is not a positive duration (for example 500ms)")
		return def
	}
	return d
}

// uint reads an unsigned integer, or def when absent.
func (a *policyArgs) uint(name string, def uint64) uint64 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		a.fail(name, v, "is not an unsigned integer")
		return def
	}
	return n
}

// done returns the first bad value, or an error for an unknown argument.
func (a *policyArgs) done() error {
	if a.err != nil {
		return a.err
	}
	for k := range a.args {
		if !slices.Contains(a.known, k) {
			return fmt.Errorf("balance: policy %s: unknown argument %q (known: %s)", a.policy, k, strings.Join(a.known, ", "))
		}
	}
	return nil
}

// DefaultSeed seeds random and p2c when their seed argument is absent, so
// two runs of the same scenario draw the same sequence.
const DefaultSeed = 1

// rng is a lock-free random source: splitmix64 over an atomic counter. One
// caller sees the same sequence for the same seed; concurrent callers
// share it. It does not allocate.
type rng struct {
	seed uint64
	n    atomic.Uint64
}

func (g *rng) next() uint64 { return mix64(g.seed + g.n.Add(1)*0x9e3779b97f4a7c15) }

// below maps 32 random bits to [0, n) by multiplication (Lemire), which is
// unbiased enough for n far below 2^32 and cheaper than a division.
func below(r uint64, n int) int { return int((r & 0xffffffff) * uint64(n) >> 32) }

// rotation is the shared round-robin counter of the policies that break
// ties in turn, so that an idle pool is used evenly.
type rotation struct{ next atomic.Uint64 }

// start returns the position a scan of n backends begins at.
func (r *rotation) start(n int) int { return int((r.next.Add(1) - 1) % uint64(n)) }

func isSnakeCase(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
