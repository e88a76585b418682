package topologies

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/scenario"
)

// args returns every value of a repeated flag.
func allArgs(args []string, flag string) []string {
	var out []string
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

func TestRenderBalancerTopologies(t *testing.T) {
	off := false
	tests := []struct {
		name  string
		v     scenario.Variant
		want  map[string]string   // single flags
		multi map[string][]string // repeated flags
		none  []string            // flags that must be absent
	}{
		{
			name: "l4",
			v:    scenario.Variant{Name: "a", Topology: scenario.L4, Proxy: scenario.ProxySpec{Policy: "round_robin", Retries: 1}},
			want: map[string]string{"--mode": "l4", "--policy": "round_robin", "--retries": "1",
				"--upstreams": "127.0.0.1:20000,127.0.0.1:20001,127.0.0.1:20002,127.0.0.1:20003"},
			none: []string{"--pool", "--close-after", "--max-idle", "--policy-arg", "--threads"},
		},
		{
			name: "l4 on one thread",
			v:    scenario.Variant{Name: "t", Topology: scenario.L4, Proxy: scenario.ProxySpec{Threads: 1}},
			want: map[string]string{"--mode": "l4", "--threads": "1"},
		},
		{
			name: "l7 with connection controls",
			v: scenario.Variant{Name: "b", Topology: scenario.L7, Proxy: scenario.ProxySpec{Policy: "p2c", CloseAfter: 5, MaxIdle: 2,
				PolicyArgs: map[string]string{"seed": "3"}}},
			want: map[string]string{"--mode": "l7", "--policy": "p2c", "--close-after": "5", "--max-idle": "2",
				"--upstream-keepalive": "true", "--policy-arg": "seed=3"},
			none: []string{"--pool", "--retries"},
		},
		{
			name: "l7 keep-alive off, default policy",
			v:    scenario.Variant{Name: "c", Topology: scenario.L7, Proxy: scenario.ProxySpec{UpstreamKeepAlive: &off}},
			want: map[string]string{"--policy": scenario.DefaultPolicy, "--upstream-keepalive": "false"},
		},
		{
			name: "l7-pools",
			v: scenario.Variant{Name: "d", Topology: scenario.L7Pools, Proxy: scenario.ProxySpec{Policy: "least_conn", Pools: []scenario.Pool{
				{Name: "read", Prefix: "/", Workers: []int{0, 1, 2}},
				{Name: "write", Prefix: "/event", Policy: "hash", PolicyArgs: map[string]string{"key": "header:X-User"}, Workers: []int{3}},
			}}},
			want: map[string]string{"--mode": "l7", "--policy-arg": "write.key=header:X-User"},
			multi: map[string][]string{"--pool": {
				"read:/:least_conn:127.0.0.1:20000,127.0.0.1:20001,127.0.0.1:20002",
				"write:/event:hash:127.0.0.1:20003",
			}},
			none: []string{"--upstreams"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := scenario.Workers{Count: 4}.WithDefaults()
			v := tt.v.WithDefaults()
			if err := v.Validate(Catalog()); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			p, err := Render(v, w, &seqAlloc{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Processes) != 2 || p.Processes[1].Role != RoleProxy || p.Processes[1].StatsKind != StatsProxy {
				t.Fatalf("processes %+v", p.Processes)
			}
			if arg(t, p.Processes[0].Args(), "--listen") != "ports" {
				t.Errorf("serve args %v", p.Processes[0].Args())
			}
			args := p.Processes[1].Args()
			if args[0] != "proxy" || p.Entry != "http://"+arg(t, args, "--listen") {
				t.Errorf("proxy args %v, entry %s", args, p.Entry)
			}
			for flag, want := range tt.want {
				if got := arg(t, args, flag); got != want {
					t.Errorf("%s = %q, want %q (args %v)", flag, got, want, args)
				}
			}
			for flag, want := range tt.multi {
				if got := allArgs(args, flag); !slices.Equal(got, want) {
					t.Errorf("%s = %q, want %q", flag, got, want)
				}
			}
			for _, flag := range tt.none {
				if slices.Contains(args, flag) {
					t.Errorf("unexpected %s in %v", flag, args)
				}
			}
			again, _ := Render(v, w, &seqAlloc{})
			if !slices.Equal(again.Processes[1].Args(), args) {
				t.Errorf("rendering twice differs:\n%v\n%v", args, again.Processes[1].Args())
			}
		})
	}
}

func TestRenderPoolsWorkerOutOfRange(t *testing.T) {
	v := scenario.Variant{Name: "p", Topology: scenario.L7Pools, Proxy: scenario.ProxySpec{Pools: []scenario.Pool{{Name: "all", Prefix: "/", Workers: []int{0, 4}}}}}.WithDefaults()
	if err := v.Validate(Catalog()); err != nil {
		t.Fatal(err)
	}
	_, err := Render(v, scenario.Workers{Count: 4}.WithDefaults(), &seqAlloc{})
	if err == nil || !strings.Contains(err.Error(), "proxy.pools[0].workers[1]: worker 4 does not exist (workers.count is 4)") {
		t.Fatalf("Render = %v", err)
	}
}

func TestValidateBalancerVariants(t *testing.T) {
	off := false
	pools := func(ps ...scenario.Pool) scenario.ProxySpec { return scenario.ProxySpec{Pools: ps} }
	all := scenario.Pool{Name: "all", Prefix: "/", Workers: []int{0}}
	for _, tc := range []struct {
		name  string
		v     scenario.Variant
		field string // "" means valid
		msg   string
	}{
		{"l4 ok", scenario.Variant{Name: "x", Topology: scenario.L4}, "", ""},
		{"l7-pools ok", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(all, scenario.Pool{Name: "w-1", Prefix: "/e", Workers: []int{0, 1}})}, "", ""},
		{"proxy keeps working", scenario.Variant{Name: "x", Topology: scenario.Proxy}, "", ""},
		{"close_after on proxy", scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{CloseAfter: 2}}, "proxy.close_after", "only for topologies l4, l7, l7-pools and shared-unix"},
		{"pools on reuseport", scenario.Variant{Name: "x", Topology: scenario.ReusePort, Proxy: pools(all)}, "proxy.pools", ""},
		{"other engine", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Engine: "nginx"}}, "proxy.engine", "built-in proxy only"},
		{"unknown policy", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{Policy: "fastest"}}, "proxy.policy", `unknown policy "fastest"`},
		{"bad argument name", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{PolicyArgs: map[string]string{"a.b": "1"}}}, "proxy.policy_args", `"a.b"`},
		{"hash in l4", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{Policy: "hash"}}, "proxy.policy", "hash needs the request"},
		{"close_after in l4", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{CloseAfter: 3}}, "proxy.close_after", "layer 4"},
		{"max_idle in l4", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{MaxIdle: 3}}, "proxy.max_idle", "layer 4"},
		{"close_after without keep-alive", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{CloseAfter: 3, UpstreamKeepAlive: &off}}, "proxy.close_after", "upstream_keepalive"},
		{"negative retries", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Retries: -1}}, "proxy.retries", ""},
		{"negative close_after", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{CloseAfter: -1}}, "proxy.close_after", ""},
		{"preopen on proxy", scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Preopen: 8}}, "proxy.preopen", "only for topologies"},
		{"preopen in l4", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{Preopen: 8}}, "proxy.preopen", "layer 4"},
		{"preopen without keep-alive", scenario.Variant{Name: "x", Topology: scenario.SharedUnix, Proxy: scenario.ProxySpec{Preopen: 8, UpstreamKeepAlive: &off}}, "proxy.preopen", "upstream_keepalive"},
		{"preopen with close_after", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Preopen: 8, CloseAfter: 5}}, "proxy.preopen", "close_after"},
		{"preopen over max_idle", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Preopen: 8, MaxIdle: 4}}, "proxy.preopen", "max_idle"},
		{"pools in l7", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: pools(all)}, "proxy.pools", "l7-pools"},
		{"l7-pools without pools", scenario.Variant{Name: "x", Topology: scenario.L7Pools}, "proxy.pools", "at least one pool"},
		{"no catch-all", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "w", Prefix: "/e", Workers: []int{0}})}, "proxy.pools", "prefix /"},
		{"pool named default", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "default", Prefix: "/", Workers: []int{0}})}, "proxy.pools[0].name", ""},
		{"duplicate pool name", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(all, scenario.Pool{Name: "all", Prefix: "/e", Workers: []int{0}})}, "proxy.pools[1].name", "duplicate"},
		{"duplicate prefix", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(all, scenario.Pool{Name: "b", Prefix: "/", Workers: []int{0}})}, "proxy.pools[1].prefix", "duplicate"},
		{"prefix with a colon", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(all, scenario.Pool{Name: "b", Prefix: "/a:b", Workers: []int{0}})}, "proxy.pools[1].prefix", ""},
		{"pool policy unknown", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "a", Prefix: "/", Policy: "x", Workers: []int{0}})}, "proxy.pools[0].policy", ""},
		{"pool without workers", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "a", Prefix: "/"})}, "proxy.pools[0].workers", ""},
		{"negative worker", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "a", Prefix: "/", Workers: []int{-1}})}, "proxy.pools[0].workers[0]", ""},
		{"worker twice", scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: pools(scenario.Pool{Name: "a", Prefix: "/", Workers: []int{1, 1}})}, "proxy.pools[0].workers[1]", "twice"},
		{"threads on l7", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Threads: 1}}, "", ""},
		{"threads on an engine", scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: "nginx", Policy: "least_conn", Threads: 2}}, "", ""},
		{"threads without a proxy", scenario.Variant{Name: "x", Topology: scenario.ReusePort, Proxy: scenario.ProxySpec{Threads: 1}}, "proxy.threads", "only for topologies with a proxy"},
		{"negative threads", scenario.Variant{Name: "x", Topology: scenario.L4, Proxy: scenario.ProxySpec{Threads: -1}}, "proxy.threads", "between 0 and 256"},
		{"too many threads", scenario.Variant{Name: "x", Topology: scenario.L7, Proxy: scenario.ProxySpec{Threads: 257}}, "proxy.threads", "between 0 and 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.WithDefaults().Validate(Catalog())
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("Validate() = %v, want an error on %s containing %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestBalancerDefaults(t *testing.T) {
	v := scenario.Variant{Name: "x", Topology: scenario.L7Pools, Proxy: scenario.ProxySpec{Policy: "p2c", Pools: []scenario.Pool{{Name: "a"}, {Name: "b", Policy: "hash"}}}}
	d := v.WithDefaults()
	if d.Proxy.Engine != scenario.Builtin || d.Proxy.Pools[0].Policy != "p2c" || d.Proxy.Pools[1].Policy != "hash" {
		t.Errorf("defaults %+v", d.Proxy)
	}
	if v.Proxy.Pools[0].Policy != "" {
		t.Error("WithDefaults changed its receiver's pools")
	}
	if d := (scenario.Variant{Topology: scenario.L4}).WithDefaults(); d.Proxy.Policy != scenario.DefaultPolicy || d.Proxy.Engine != scenario.Builtin {
		t.Errorf("l4 defaults %+v", d.Proxy)
	}
}
