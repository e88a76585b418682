package balancer

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Policy chooses the backend for one request. Pick is called once per
// request, concurrently, so it must be safe for concurrent use and should
// not allocate. It must not retain pool. It returns nil when no backend is
// available (for example when pool is empty).
type Policy interface {
	Pick(pool []*Backend, r *http.Request) *Backend
}

// ErrUnknownPolicy is returned (wrapped) by NewPolicy, Config.Validate and
// New for a policy name that is not registered.
var ErrUnknownPolicy = errors.New("balancer: unknown policy")

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
		panic(fmt.Sprintf("balancer: Register: policy name %q is not snake_case", name))
	}
	if f == nil {
		panic(fmt.Sprintf("balancer: Register: nil factory for policy %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.factories[name]; dup {
		panic(fmt.Sprintf("balancer: Register: policy %q registered twice", name))
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
		return fmt.Errorf("balancer: policy %s: unknown argument %q (it takes none)", policy, k)
	}
	return nil
}

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
