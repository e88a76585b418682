package topologies

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/scenario"
)

// seqAlloc hands out ports in sequence from 20000.
type seqAlloc struct{ next int }

func (a *seqAlloc) Host() string { return "127.0.0.1" }
func (a *seqAlloc) Ports(n int) (int, error) {
	if a.next == 0 {
		a.next = 20000
	}
	p := a.next
	a.next += n
	return p, nil
}

func arg(t *testing.T, args []string, flag string) string {
	t.Helper()
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	t.Fatalf("%v has no %s", args, flag)
	return ""
}

func TestRenderReusePort(t *testing.T) {
	w := scenario.Workers{Count: 4}.WithDefaults()
	p, err := Render(scenario.Variant{Name: "rp", Topology: scenario.ReusePort}.WithDefaults(), w, &seqAlloc{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Processes) != 1 || p.Processes[0].Role != RoleWorkers {
		t.Fatalf("processes %+v", p.Processes)
	}
	args := p.Processes[0].Args()
	if args[0] != "serve" || arg(t, args, "--listen") != "reuseport" || arg(t, args, "--workers") != "4" {
		t.Errorf("serve args %v", args)
	}
	if p.Entry != "http://127.0.0.1:"+arg(t, args, "--port") {
		t.Errorf("entry %s does not match the serve port in %v", p.Entry, args)
	}
	if p.Variant != "rp" || p.Topology != scenario.ReusePort {
		t.Errorf("plan names %q %q", p.Variant, p.Topology)
	}
}

func TestRenderProxy(t *testing.T) {
	w := scenario.Workers{Count: 3}.WithDefaults()
	off := false
	v := scenario.Variant{Name: "lc", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{UpstreamKeepAlive: &off}}.WithDefaults()
	p, err := Render(v, w, &seqAlloc{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Processes) != 2 || p.Processes[0].Role != RoleWorkers || p.Processes[1].Role != RoleProxy {
		t.Fatalf("want workers then proxy, got %+v", p.Processes)
	}
	serve, proxy := p.Processes[0].Args(), p.Processes[1].Args()
	if arg(t, serve, "--listen") != "ports" {
		t.Errorf("serve args %v", serve)
	}
	want := "127.0.0.1:20000,127.0.0.1:20001,127.0.0.1:20002"
	if got := arg(t, proxy, "--upstreams"); got != want {
		t.Errorf("upstreams %s, want %s", got, want)
	}
	if arg(t, proxy, "--policy") != scenario.DefaultPolicy || arg(t, proxy, "--upstream-keepalive") != "false" {
		t.Errorf("proxy args %v", proxy)
	}
	if p.Entry != "http://"+arg(t, proxy, "--listen") {
		t.Errorf("entry %s is not the proxy's listen address", p.Entry)
	}
	// Every address in the plan is distinct.
	addrs := []string{arg(t, serve, "--admin"), arg(t, proxy, "--listen"), arg(t, proxy, "--admin")}
	addrs = append(addrs, strings.Split(want, ",")...)
	slices.Sort(addrs)
	if len(slices.Compact(addrs)) != 6 {
		t.Errorf("addresses reused: %v", addrs)
	}
}

func TestValidateVariant(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     scenario.Variant
		field string
	}{
		{"no name", scenario.Variant{Topology: scenario.ReusePort}, "name"},
		{"no topology", scenario.Variant{Name: "x"}, "topology"},
		{"unknown topology", scenario.Variant{Name: "x", Topology: "mesh"}, "topology"},
		{"unknown policy", scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Policy: "leastconn"}}, "proxy.policy"},
		{"unknown engine", scenario.Variant{Name: "x", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: "envoy"}}, "proxy.engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.WithDefaults().Validate(Catalog())
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate() = %v, want an error on %s", err, tc.field)
			}
		})
	}
}

// TestRendersEveryScenarioTopology: the scenario format's topology names
// and this package's renderers are the same set.
func TestRendersEveryScenarioTopology(t *testing.T) {
	if got, want := Names(), scenario.Topologies(); !slices.Equal(got, want) {
		t.Errorf("topologies render %v; scenarios name %v", got, want)
	}
}

// TestCatalogEngines: the engine names a scenario uses are package
// engines' names, and each engine's policies reach the catalog.
func TestCatalogEngines(t *testing.T) {
	cat := Catalog()
	for _, e := range []string{scenario.Nginx, scenario.HAProxy} {
		if len(cat.EnginePolicies[e]) == 0 {
			t.Errorf("engine %q has no policies in the catalog (engines knows %v)", e, engines.Names())
		}
	}
	if len(cat.EnginePolicies) != 2 || len(cat.Policies) == 0 || len(cat.Accept) == 0 {
		t.Errorf("catalog %+v", cat)
	}
}
