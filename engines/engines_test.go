package engines

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func tcpUpstreams(n int) []string {
	ups := make([]string, n)
	for i := range ups {
		ups[i] = fmt.Sprintf("127.0.0.1:%d", 20000+i)
	}
	return ups
}

func unixUpstreams(n int) []string {
	ups := make([]string, n)
	for i := range ups {
		ups[i] = fmt.Sprintf("unix:/run/lbbench/worker-%d.sock", i)
	}
	return ups
}

// goldenCases are the specs whose rendering is kept under testdata: every
// policy of every engine with keep-alive on, and keep-alive off, Unix
// upstreams, a user and no stub_status once each.
func goldenCases() map[string]Spec {
	cases := map[string]Spec{}
	for _, e := range Names() {
		for _, p := range Policies(e) {
			cases[e+"-"+p] = Spec{Engine: e, Policy: p, UpstreamKeepAlive: true, Upstreams: tcpUpstreams(3),
				Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", StubStatus: true}
		}
		cases[e+"-least_conn-no_keepalive-unix"] = Spec{Engine: e, Policy: "least_conn", Upstreams: unixUpstreams(2),
			Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", User: "lbbench", StubStatus: e == Nginx}
	}
	cases["nginx-round_robin-no_stub_status"] = Spec{Engine: Nginx, Policy: "round_robin", UpstreamKeepAlive: true,
		KeepAliveConns: 16, Upstreams: tcpUpstreams(2), Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000"}
	return cases
}

func TestRenderGolden(t *testing.T) {
	for name, spec := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			cfg, err := Render(spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Files) != 1 {
				t.Fatalf("want one file, got %d", len(cfg.Files))
			}
			got := cfg.Files[0].Content
			path := filepath.Join("testdata", name+"."+cfg.Files[0].Name)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./engines -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the rendering (go test ./engines -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// TestRenderDirectives checks the directives each setting must produce,
// independent of the golden files' layout.
func TestRenderDirectives(t *testing.T) {
	base := Spec{Upstreams: []string{"127.0.0.1:20000", "unix:/tmp/w1.sock"}, Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000"}
	for _, tc := range []struct {
		engine, policy string
		keepAlive      bool
		want, notWant  []string
	}{
		{Nginx, "round_robin", true,
			[]string{"keepalive 128;", "proxy_http_version 1.1;", `proxy_set_header Connection "";`, "server unix:/tmp/w1.sock max_fails=0;", "zone workers"},
			[]string{"least_conn", "random", "hash"}},
		{Nginx, "least_conn", false, []string{"least_conn;"}, []string{"keepalive 128", "proxy_http_version", "proxy_set_header Connection"}},
		{Nginx, "p2c", true, []string{"random two least_conn;"}, nil},
		{Nginx, "random", true, []string{"random;"}, []string{"two"}},
		{Nginx, "hash", true, []string{"hash $request_uri consistent;"}, nil},
		{HAProxy, "round_robin", true, []string{"balance roundrobin", "http-reuse always", "server w1 unix@/tmp/w1.sock"}, []string{"http-server-close"}},
		{HAProxy, "least_conn", false, []string{"balance leastconn", "option http-server-close", "http-reuse never"}, []string{"http-reuse always"}},
		{HAProxy, "p2c", true, []string{"balance random(2)"}, nil},
		{HAProxy, "random", true, []string{"balance random(1)"}, nil},
		{HAProxy, "hash", true, []string{"balance uri whole", "hash-type consistent"}, nil},
	} {
		t.Run(fmt.Sprintf("%s-%s-%v", tc.engine, tc.policy, tc.keepAlive), func(t *testing.T) {
			s := base
			s.Engine, s.Policy, s.UpstreamKeepAlive = tc.engine, tc.policy, tc.keepAlive
			cfg, err := Render(s)
			if err != nil {
				t.Fatal(err)
			}
			conf := cfg.Files[0].Content
			for _, w := range tc.want {
				if !strings.Contains(conf, w) {
					t.Errorf("config lacks %q:\n%s", w, conf)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(conf, w) {
					t.Errorf("config has %q:\n%s", w, conf)
				}
			}
			// Nothing outside the working directory is named.
			for _, a := range append(append([]string{}, cfg.Args...), cfg.CheckArgs...) {
				if strings.HasPrefix(a, "/") {
					t.Errorf("argument %q is outside %s", a, DirPlaceholder)
				}
			}
			for _, bad := range []string{"/etc/", "/var/"} {
				if strings.Contains(conf, bad) {
					t.Errorf("config names %s:\n%s", bad, conf)
				}
			}
		})
	}
}

// materialize writes cfg's files into a new directory and returns it with
// the arguments, placeholders replaced.
func materialize(t *testing.T, cfg Config) (dir string, check, run []string) {
	t.Helper()
	dir = t.TempDir()
	sub := func(s string) string { return strings.ReplaceAll(s, DirPlaceholder, dir) }
	for _, f := range cfg.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(sub(f.Content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range cfg.CheckArgs {
		check = append(check, sub(a))
	}
	for _, a := range cfg.Args {
		run = append(run, sub(a))
	}
	return dir, check, run
}

func findOrFail(t *testing.T, engine string) Binary {
	t.Helper()
	b, err := Find(context.Background(), engine)
	if err != nil {
		t.Fatalf("%v (the engines are installed by make setup)", err)
	}
	return b
}

// TestEngineAcceptsEveryRendering runs the installed engine's own check on
// every combination of policy, keep-alive and upstream kind.
func TestEngineAcceptsEveryRendering(t *testing.T) {
	for _, e := range Names() {
		bin := findOrFail(t, e)
		for _, p := range Policies(e) {
			for _, ka := range []bool{true, false} {
				for kind, ups := range map[string][]string{"tcp": tcpUpstreams(4), "unix": unixUpstreams(4)} {
					t.Run(fmt.Sprintf("%s-%s-keepalive=%v-%s", e, p, ka, kind), func(t *testing.T) {
						t.Parallel()
						cfg, err := Render(Spec{Engine: e, Policy: p, UpstreamKeepAlive: ka, Upstreams: ups,
							Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", StubStatus: bin.StubStatus, User: currentUser()})
						if err != nil {
							t.Fatal(err)
						}
						dir, check, _ := materialize(t, cfg)
						cmd := exec.Command(bin.Path, check...)
						cmd.Dir = dir
						if out, err := cmd.CombinedOutput(); err != nil {
							t.Fatalf("%s %v: %v\n%s\n%s", bin.Path, check, err, out, cfg.Files[0].Content)
						}
					})
				}
			}
		}
	}
}

// currentUser is the user name to render when tests run as root.
func currentUser() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return ""
}

// TestEngineRejects shows that what lbbench cannot check, the engine does:
// a Unix socket path longer than a socket address holds passes Validate and
// fails the engine's check with the engine's own message.
func TestEngineRejects(t *testing.T) {
	long := "unix:/" + strings.Repeat("x", 120) + "/w.sock"
	for e, want := range map[string]string{Nginx: "[emerg]", HAProxy: "[ALERT]"} {
		t.Run(e, func(t *testing.T) {
			bin := findOrFail(t, e)
			cfg, err := Render(Spec{Engine: e, Policy: "least_conn", Upstreams: []string{long},
				Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", User: currentUser()})
			if err != nil {
				t.Fatal(err)
			}
			dir, check, _ := materialize(t, cfg)
			cmd := exec.Command(bin.Path, check...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("%s accepted a %d-byte socket path:\n%s", e, len(long), out)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("%s's message lacks %q:\n%s", e, want, out)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Spec{Engine: Nginx, Policy: "least_conn", Upstreams: tcpUpstreams(2), Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000"}
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		want  string
		isErr error
	}{
		{"unknown engine", func(s *Spec) { s.Engine = "envoy" }, `unknown engine "envoy"`, ErrUnknownEngine},
		{"unsupported policy nginx", func(s *Spec) { s.Policy = "ewma" }, `nginx has no equivalent of policy "ewma" (nginx supports: hash, least_conn, p2c, random, round_robin)`, ErrUnsupportedPolicy},
		{"unsupported policy haproxy", func(s *Spec) { s.Engine, s.Policy = HAProxy, "leastconn" }, `haproxy has no equivalent of policy "leastconn"`, ErrUnsupportedPolicy},
		{"no upstreams", func(s *Spec) { s.Upstreams = nil }, "upstreams: at least one", nil},
		{"bad upstream", func(s *Spec) { s.Upstreams = []string{"127.0.0.1:1", "localhost"} }, "upstreams[1]:", nil},
		{"relative unix", func(s *Spec) { s.Upstreams = []string{"unix:w.sock"} }, "unix:/absolute/path", nil},
		{"injection", func(s *Spec) { s.Upstreams = []string{"127.0.0.1:1; include /etc/passwd"} }, "upstreams[0]:", nil},
		{"bad listen", func(s *Spec) { s.Listen = ":8000" }, "listen:", nil},
		{"bad admin", func(s *Spec) { s.Admin = "127.0.0.1" }, "admin:", nil},
		{"admin is listen", func(s *Spec) { s.Admin = s.Listen }, "admin:", nil},
		{"negative conns", func(s *Spec) { s.KeepAliveConns = -1 }, "keepalive_conns:", nil},
		{"bad user", func(s *Spec) { s.User = "root; daemon on" }, "user:", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			_, err := Render(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render() = %v, want an error containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "engines: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if tc.isErr != nil && !errors.Is(err, tc.isErr) {
				t.Errorf("error %v does not wrap %v", err, tc.isErr)
			}
		})
	}
	if _, err := Render(ok); err != nil {
		t.Errorf("valid spec: %v", err)
	}
}

func TestFind(t *testing.T) {
	for e, want := range map[string]string{Nginx: "nginx/", HAProxy: "HAProxy version"} {
		t.Run(e, func(t *testing.T) {
			b := findOrFail(t, e)
			if !filepath.IsAbs(b.Path) || !strings.Contains(b.Version, want) {
				t.Errorf("Find(%s) = %+v", e, b)
			}
		})
	}
	if _, err := Find(context.Background(), "envoy"); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("Find(envoy) = %v", err)
	}
}

func TestFindMissingSaysHowToInstall(t *testing.T) {
	empty := t.TempDir()
	for _, e := range Names() {
		_, err := find(context.Background(), e, empty, []string{empty})
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("find(%s) in an empty directory = %v, want ErrNotInstalled", e, err)
		}
		for _, want := range []string{"make setup", "apt-get install " + e} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
}

// TestRenderThreads: Threads becomes nginx's worker_processes and HAProxy's
// nbthread, zero keeps each engine's default, and the real engine accepts
// the result; out-of-range values are refused by Validate.
func TestRenderThreads(t *testing.T) {
	for _, tc := range []struct {
		engine        string
		threads       int
		want, notWant string
	}{
		{Nginx, 0, "worker_processes auto;", "worker_processes 1;"},
		{Nginx, 1, "worker_processes 1;", "worker_processes auto;"},
		{HAProxy, 0, "stats socket", "nbthread"},
		{HAProxy, 2, "nbthread 2", ""},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.engine, tc.threads), func(t *testing.T) {
			bin := findOrFail(t, tc.engine)
			cfg, err := Render(Spec{Engine: tc.engine, Policy: "least_conn", UpstreamKeepAlive: true, Upstreams: tcpUpstreams(2),
				Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", StubStatus: bin.StubStatus, User: currentUser(), Threads: tc.threads})
			if err != nil {
				t.Fatal(err)
			}
			conf := cfg.Files[0].Content
			if !strings.Contains(conf, tc.want) || tc.notWant != "" && strings.Contains(conf, tc.notWant) {
				t.Fatalf("config with threads %d: want %q, not %q:\n%s", tc.threads, tc.want, tc.notWant, conf)
			}
			dir, check, _ := materialize(t, cfg)
			cmd := exec.Command(bin.Path, check...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s\n%s", bin.Path, check, err, out, conf)
			}
		})
	}
	for _, n := range []int{-1, MaxThreads + 1} {
		s := Spec{Engine: Nginx, Policy: "least_conn", Upstreams: tcpUpstreams(1), Listen: "127.0.0.1:8000", Admin: "127.0.0.1:9000", Threads: n}
		if _, err := Render(s); err == nil || !strings.Contains(err.Error(), "threads") {
			t.Errorf("threads %d: %v, want an error naming threads", n, err)
		}
	}
}

// FuzzParseVersion reads arbitrary version output: what it accepts has a
// trimmed version line that says "version", and only nginx may have
// stub_status.
func FuzzParseVersion(f *testing.F) {
	f.Add(Nginx, []byte("nginx version: nginx/1.22.1\nbuilt with OpenSSL 3.0.9\nconfigure arguments: --with-http_stub_status_module\n"))
	f.Add(HAProxy, []byte("HAProxy version 2.6.12-1+deb12u1 2023/12/16 - https://haproxy.org/\nStatus: long-term supported branch\n"))
	f.Add(Nginx, []byte("nginx: [emerg] unknown option\n"))
	f.Add("envoy", []byte("VERSION\r\n"))
	f.Add(HAProxy, []byte("\n\n  version  \n"))
	f.Add(Nginx, []byte("\xff\xfeversion\x00"))
	f.Fuzz(func(t *testing.T, engine string, out []byte) {
		b, err := ParseVersion(engine, "/usr/sbin/"+engine, out)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "engines: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		if b.Version == "" || b.Version != strings.TrimSpace(b.Version) || !strings.Contains(strings.ToLower(b.Version), "version") {
			t.Fatalf("%q read as version %q", out, b.Version)
		}
		if b.Engine != engine || (b.StubStatus && engine != Nginx) {
			t.Fatalf("%q for %s read as %+v", out, engine, b)
		}
	})
}
