package engines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Engine names, as written in a scenario's proxy.engine.
const (
	// Nginx is nginx, run from its Debian package's /usr/sbin/nginx.
	Nginx = "nginx"
	// HAProxy is HAProxy, run from its Debian package's /usr/sbin/haproxy.
	HAProxy = "haproxy"
)

// DirPlaceholder stands for the engine process's working directory in a
// Config's arguments, files and Stats. It is the same string as
// topologies.DirPlaceholder, which the driver replaces.
const DirPlaceholder = "{dir}"

// Defaults applied by Spec.WithDefaults.
const (
	// DefaultKeepAliveConns is how many idle upstream connections nginx
	// keeps per worker process when upstream keep-alive is on: enough for
	// every connection a benchmark's concurrency opens, so keep-alive is
	// not undone by closing connections the cache has no room for.
	DefaultKeepAliveConns = 128
	// DefaultTimeout bounds connecting to an upstream and waiting for its
	// response, as balancer.DefaultTimeout does for the built-in proxy.
	DefaultTimeout = 30 * time.Second
)

// Errors, wrapped by the functions that return them; test with errors.Is.
var (
	// ErrUnknownEngine is returned for an engine name that is not Nginx or
	// HAProxy.
	ErrUnknownEngine = errors.New("engines: unknown engine")
	// ErrUnsupportedPolicy is returned for an lbbench policy the engine
	// has no equivalent of.
	ErrUnsupportedPolicy = errors.New("engines: unsupported policy")
	// ErrNotInstalled is returned by Find when the engine's binary is
	// missing.
	ErrNotInstalled = errors.New("engines: not installed")
)

// engine is what one engine contributes: its policy directives, its
// renderer and how to find out what the installed binary is.
type engine struct {
	// policies maps an lbbench policy name to the engine's directives,
	// one per line, for the upstream (nginx) or backend (HAProxy) section.
	policies map[string][]string
	render   func(Spec) Config
	// versionArg prints the version (first line) and, for nginx, the
	// configure arguments.
	versionArg string
	// pkg is the Debian package that installs the engine.
	pkg string
}

var registry = map[string]*engine{
	Nginx:   {policies: nginxPolicies, render: renderNginx, versionArg: "-V", pkg: "nginx"},
	HAProxy: {policies: haproxyPolicies, render: renderHAProxy, versionArg: "-v", pkg: "haproxy"},
}

// Names returns the engine names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Policies returns the lbbench policy names engine supports, sorted, or nil
// for an unknown engine.
func Policies(engine string) []string {
	e, ok := registry[engine]
	if !ok {
		return nil
	}
	names := make([]string, 0, len(e.policies))
	for n := range e.policies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// CheckPolicy reports whether engine supports the lbbench policy. The error
// names the engine and lists what it supports; it wraps ErrUnknownEngine or
// ErrUnsupportedPolicy.
func CheckPolicy(engine, policy string) error {
	e, ok := registry[engine]
	if !ok {
		return fmt.Errorf("%w %q (known: %v)", ErrUnknownEngine, engine, Names())
	}
	if _, ok := e.policies[policy]; !ok {
		return fmt.Errorf("%w: %s has no equivalent of policy %q (%s supports: %s)",
			ErrUnsupportedPolicy, engine, policy, engine, strings.Join(Policies(engine), ", "))
	}
	return nil
}

// Spec describes one engine instance in front of a set of upstreams. It is
// a plain value; Render applies WithDefaults and Validate.
type Spec struct {
	// Engine is Nginx or HAProxy; required.
	Engine string `yaml:"engine" json:"engine"`
	// Policy is an lbbench policy name the engine supports (see Policies);
	// required.
	Policy string `yaml:"policy" json:"policy"`
	// UpstreamKeepAlive reuses proxy-to-upstream connections between
	// requests; false opens a new connection for every request.
	UpstreamKeepAlive bool `yaml:"upstream_keepalive" json:"upstream_keepalive"`
	// KeepAliveConns is nginx's "keepalive" cache size: idle upstream
	// connections kept per nginx worker process. Zero means
	// DefaultKeepAliveConns. HAProxy's idle pool has no such cap.
	KeepAliveConns int `yaml:"keepalive_conns,omitempty" json:"keepalive_conns,omitempty"`
	// Upstreams are the workers, in index order, each "host:port" or
	// "unix:/absolute/path"; at least one. Upstream i is named wI in
	// HAProxy's stats.
	Upstreams []string `yaml:"upstreams" json:"upstreams"`
	// Listen is the "host:port" proxied traffic arrives on; required.
	Listen string `yaml:"listen" json:"listen"`
	// Admin is the "host:port" serving /healthz (200 once the engine is up)
	// and, for nginx with StubStatus, /status; required.
	Admin string `yaml:"admin" json:"admin"`
	// Timeout bounds connecting to an upstream and waiting for its response
	// (nginx proxy_connect_timeout and proxy_read_timeout, HAProxy timeout
	// connect and timeout server). Zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// User is the account nginx's worker processes run as when nginx is
	// started by root; nginx ignores it otherwise. Empty renders no "user"
	// directive, so nginx as root would use "nobody", which may not reach
	// Unix sockets or working directories private to the current user: set
	// it to the current user's name. HAProxy ignores it (it never changes
	// user unless told to).
	User string `yaml:"user,omitempty" json:"user,omitempty"`
	// StubStatus serves nginx's stub_status page on Admin at /status. Set it
	// only when the binary has the module (Binary.StubStatus). HAProxy
	// ignores it: its counters are always on its stats socket.
	StubStatus bool `yaml:"stub_status,omitempty" json:"stub_status,omitempty"`
	// Threads is nginx's worker_processes or HAProxy's nbthread; zero
	// means the engine's default (nginx auto, HAProxy one per CPU).
	Threads int `yaml:"threads,omitempty" json:"threads,omitempty"`
}

// MaxThreads bounds Spec.Threads.
const MaxThreads = 256

// WithDefaults returns a copy of s with zero values filled in.
func (s Spec) WithDefaults() Spec {
	if s.KeepAliveConns == 0 {
		s.KeepAliveConns = DefaultKeepAliveConns
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	return s
}

// Validate reports the first problem in s, naming the field. Call it on the
// result of WithDefaults. Every string that reaches a configuration file is
// checked, so no value can add a directive of its own.
func (s Spec) Validate() error {
	if err := CheckPolicy(s.Engine, s.Policy); err != nil {
		return err
	}
	if len(s.Upstreams) == 0 {
		return errors.New("engines: upstreams: at least one upstream is required")
	}
	for i, u := range s.Upstreams {
		if err := checkUpstream(u); err != nil {
			return fmt.Errorf("engines: upstreams[%d]: %w", i, err)
		}
	}
	if err := checkHostPort(s.Listen); err != nil {
		return fmt.Errorf("engines: listen: %w", err)
	}
	if err := checkHostPort(s.Admin); err != nil {
		return fmt.Errorf("engines: admin: %w", err)
	}
	if s.Listen == s.Admin {
		return fmt.Errorf("engines: admin: %q is also the listen address", s.Admin)
	}
	if s.KeepAliveConns < 1 {
		return fmt.Errorf("engines: keepalive_conns: must be >= 1, got %d", s.KeepAliveConns)
	}
	if s.Timeout < time.Millisecond {
		return fmt.Errorf("engines: timeout: must be at least 1ms, got %s", s.Timeout)
	}
	if s.Threads < 0 || s.Threads > MaxThreads {
		return fmt.Errorf("engines: threads: must be between 0 and %d, got %d", MaxThreads, s.Threads)
	}
	if s.User != "" && strings.ContainsFunc(s.User, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		return fmt.Errorf("engines: user: %q is not a plain account name", s.User)
	}
	return nil
}

// unsafe holds characters that could end or extend a directive in either
// engine's configuration syntax.
const unsafe = " \t\r\n;{}\"'#\\$"

func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" || port == "" || strings.ContainsAny(a, unsafe) {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8080)", a)
	}
	return nil
}

func checkUpstream(u string) error {
	if path, ok := strings.CutPrefix(u, "unix:"); ok {
		if !filepath.IsAbs(path) || strings.ContainsAny(path, unsafe) {
			return fmt.Errorf("%q is not unix:/absolute/path", u)
		}
		return nil
	}
	if err := checkHostPort(u); err != nil {
		return fmt.Errorf("%q is not host:port or unix:/absolute/path", u)
	}
	return nil
}

// File is a file an engine reads, written into its working directory.
type File struct {
	// Name is relative to the working directory.
	Name string `json:"name"`
	// Content may use DirPlaceholder.
	Content string `json:"content"`
}

// Config is a rendered engine configuration. Args, CheckArgs, Files and
// Stats use DirPlaceholder for the process's working directory, which must
// also be the directory the engine runs in (HAProxy's stats socket is bound
// relative to it, so that a long directory path does not overflow a Unix
// socket address).
type Config struct {
	// Files are written into the working directory before CheckArgs runs.
	Files []File `json:"files"`
	// CheckArgs run the engine to validate Files without serving: exit
	// status 0 means valid; otherwise its output is the engine's message.
	CheckArgs []string `json:"check_args"`
	// Args run the engine in the foreground until SIGTERM, which stops
	// every process it started (they share its process group).
	Args []string `json:"args"`
	// Health is a URL on the admin address that answers 200 once the
	// engine serves.
	Health string `json:"health"`
	// Stats is where the engine's counters are read: for nginx the URL of
	// its stub_status page (ReadNginxStatus), empty without StubStatus; for
	// HAProxy the path of its stats socket (ReadHAProxyStats).
	Stats string `json:"stats,omitempty"`
}

// Render validates s (after WithDefaults) and renders its engine's
// configuration. It is a pure function of s.
func Render(s Spec) (Config, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return Config{}, err
	}
	return registry[s.Engine].render(s), nil
}

// Binary is an installed engine.
type Binary struct {
	// Engine is Nginx or HAProxy.
	Engine string `json:"engine"`
	// Path is the executable's absolute path.
	Path string `json:"path"`
	// Version is the first line the engine prints about its version, for
	// example "nginx version: nginx/1.22.1".
	Version string `json:"version"`
	// StubStatus is true when nginx was built with its stub_status module.
	StubStatus bool `json:"stub_status,omitempty"`
}

// searchDirs are searched after PATH: Debian installs both engines in
// /usr/sbin, which an ordinary user's PATH often lacks.
var searchDirs = []string{"/usr/sbin", "/usr/local/sbin", "/sbin"}

var found = struct {
	sync.Mutex
	m map[string]Binary
}{m: map[string]Binary{}}

// Find locates engine's binary on PATH or in /usr/sbin, /usr/local/sbin or
// /sbin, and reads its version. A binary found once is remembered for the
// life of the process. A missing one gives an error wrapping
// ErrNotInstalled that says how to install it. Find is safe for concurrent
// use.
func Find(ctx context.Context, engine string) (Binary, error) {
	if _, ok := registry[engine]; !ok {
		return Binary{}, fmt.Errorf("%w %q (known: %v)", ErrUnknownEngine, engine, Names())
	}
	found.Lock()
	defer found.Unlock()
	if b, ok := found.m[engine]; ok {
		return b, nil
	}
	b, err := find(ctx, engine, os.Getenv("PATH"), searchDirs)
	if err != nil {
		return Binary{}, err
	}
	found.m[engine] = b
	return b, nil
}

func find(ctx context.Context, engine, pathEnv string, dirs []string) (Binary, error) {
	e := registry[engine]
	exe := lookPath(engine, append(filepath.SplitList(pathEnv), dirs...))
	if exe == "" {
		return Binary{}, fmt.Errorf("%w: %s: no %q on PATH or in %s; install it with \"make setup\" (or \"apt-get install %s\")",
			ErrNotInstalled, engine, engine, strings.Join(dirs, ", "), e.pkg)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Both engines print their version on stderr (nginx) or stdout
	// (HAProxy); take both.
	out, err := exec.CommandContext(ctx, exe, e.versionArg).CombinedOutput()
	if err != nil {
		return Binary{}, fmt.Errorf("engines: %s %s: %w: %s", exe, e.versionArg, err, bytes.TrimSpace(out))
	}
	return ParseVersion(engine, exe, out)
}

// VersionArg is the flag that makes engine print its version (nginx: -V,
// which also lists its build options).
func VersionArg(engine string) string {
	if e, ok := registry[engine]; ok {
		return e.versionArg
	}
	return ""
}

// ParseVersion describes the engine at path from what it printed for
// VersionArg: its version line and, for nginx, whether it has stub_status.
func ParseVersion(engine, path string, out []byte) (Binary, error) {
	b := Binary{Engine: engine, Path: path}
	for _, line := range strings.Split(string(out), "\n") {
		if b.Version == "" && strings.Contains(strings.ToLower(line), "version") {
			b.Version = strings.TrimSpace(line)
		}
	}
	if b.Version == "" {
		return Binary{}, fmt.Errorf("engines: %s %s printed no version: %q", path, VersionArg(engine), out)
	}
	b.StubStatus = engine == Nginx && bytes.Contains(out, []byte("--with-http_stub_status_module"))
	return b, nil
}

// lookPath returns the first executable regular file called name in dirs.
func lookPath(name string, dirs []string) string {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	return ""
}
