package topologies

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/internal/guard"
	"github.com/lbbench/lbbench/scenario"

	"github.com/lbbench/lbbench/engines"
)

func TestDirPlaceholderMatchesEngines(t *testing.T) {
	if engines.DirPlaceholder != DirPlaceholder {
		t.Fatalf("engines.DirPlaceholder %q != topologies.DirPlaceholder %q", engines.DirPlaceholder, DirPlaceholder)
	}
}

func TestRenderProxyEngines(t *testing.T) {
	w := scenario.Workers{Count: 3}.WithDefaults()
	for _, tc := range []struct {
		engine, kind, check string
	}{
		{scenario.Nginx, StatsNginx, "-t"},
		{scenario.HAProxy, StatsHAProxy, "-c"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			off := false
			v := scenario.Variant{Name: "e", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: tc.engine, Policy: "p2c", UpstreamKeepAlive: &off}}.WithDefaults()
			if err := v.Validate(Catalog()); err != nil {
				t.Fatal(err)
			}
			p, err := Render(v, w, &seqAlloc{})
			if errors.Is(err, engines.ErrNotInstalled) && testing.Short() && os.Getenv("CI") == "" {
				// make test installs the engines first (make setup).
				t.Skipf("%v; make setup installs it", err)
			}
			if err != nil {
				t.Fatalf("%v (the engines are installed by make setup)", err)
			}
			if len(p.Processes) != 2 || p.Processes[0].Role != RoleWorkers || p.Processes[1].Role != RoleProxy {
				t.Fatalf("want workers then proxy, got %+v", p.Processes)
			}
			proxy := p.Processes[1]
			en := proxy.Engine
			if proxy.Exe != "" || proxy.Serve != nil || proxy.Proxy != nil || en == nil || en.Engine != tc.engine ||
				!filepath.IsAbs(en.Path) || filepath.Base(en.Path) != tc.engine || len(en.Args) == 0 {
				t.Fatalf("process %+v: want the %s binary as an engine command", proxy, tc.engine)
			}
			if len(en.Check) == 0 || en.Check[0] != tc.check {
				t.Errorf("check args %v, want %s first", en.Check, tc.check)
			}
			// lbbench guard -- /usr/sbin/ENGINE ARGS..., and its check likewise.
			if want := append([]string{guard.Subcommand, "--", en.Path}, en.Args...); !slices.Equal(proxy.Args(), want) {
				t.Errorf("args %q, want %q", proxy.Args(), want)
			}
			if want := append([]string{guard.Subcommand, "--", en.Path}, en.Check...); !slices.Equal(proxy.CheckArgs(), want) {
				t.Errorf("check args %q, want %q", proxy.CheckArgs(), want)
			}
			if proxy.StatsKind != tc.kind || proxy.Stats == "" {
				t.Errorf("stats %q of kind %q", proxy.Stats, proxy.StatsKind)
			}
			if len(proxy.Files) != 1 {
				t.Fatalf("files %+v", proxy.Files)
			}
			conf := proxy.Files[0].Content
			for _, up := range []string{"127.0.0.1:20000", "127.0.0.1:20001", "127.0.0.1:20002"} {
				if !strings.Contains(conf, up) {
					t.Errorf("config does not list upstream %s:\n%s", up, conf)
				}
			}
			listen := strings.TrimPrefix(p.Entry, "http://")
			if !strings.Contains(conf, listen) || !strings.Contains(proxy.Health, "/healthz") {
				t.Errorf("entry %s or health %s not in the config:\n%s", p.Entry, proxy.Health, conf)
			}
		})
	}
}

func TestValidateEngines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  scenario.ProxySpec
		field string
		want  string
	}{
		{"nginx ewma", scenario.ProxySpec{Engine: scenario.Nginx, Policy: "ewma_least_conn"}, "proxy.policy", `engine nginx does not support policy "ewma_least_conn" (nginx supports: [hash least_conn p2c random round_robin])`},
		{"haproxy peak_ewma", scenario.ProxySpec{Engine: scenario.HAProxy, Policy: "peak_ewma"}, "proxy.policy", "engine haproxy does not support"},
		{"envoy", scenario.ProxySpec{Engine: "envoy"}, "proxy.engine", `unknown engine "envoy" (known: builtin, haproxy, nginx)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: tc.spec}.WithDefaults().Validate(Catalog())
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
				t.Fatalf("Validate() = %v, want %s: ...%s", err, tc.field, tc.want)
			}
		})
	}
	// Every policy an engine supports validates.
	for _, e := range []string{scenario.Nginx, scenario.HAProxy} {
		for _, p := range engines.Policies(e) {
			if err := (scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: e, Policy: p}}).Validate(Catalog()); err != nil {
				t.Errorf("%s %s: %v", e, p, err)
			}
		}
	}
}
