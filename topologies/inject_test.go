package topologies

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/scenario"
)

// TestRenderInjectedCosts: a variant's ProxyCost reaches its built-in
// proxy's command line and its WorkerCost its built-in workers', in every
// topology that runs them; a variant without them renders neither flag.
func TestRenderInjectedCosts(t *testing.T) {
	const proxyCost, workerCost = 40 * time.Microsecond, 20 * time.Microsecond
	pools := scenario.ProxySpec{Pools: []scenario.Pool{{Name: "all", Prefix: "/", Workers: []int{0, 1}}}}
	for _, v := range []scenario.Variant{
		{Name: "proxy", Topology: scenario.Proxy},
		{Name: "unix", Topology: scenario.Unix},
		{Name: "l4", Topology: scenario.L4},
		{Name: "l7", Topology: scenario.L7},
		{Name: "pools", Topology: scenario.L7Pools, Proxy: pools},
		{Name: "shared-unix", Topology: scenario.SharedUnix},
		{Name: "reuseport", Topology: scenario.ReusePort},
		{Name: "shared", Topology: scenario.Shared},
	} {
		t.Run(v.Name, func(t *testing.T) {
			w := scenario.Workers{Count: 2}.WithDefaults()
			proxied := v.Topology != scenario.ReusePort && v.Topology != scenario.Shared
			costly := v
			costly.WorkerCost = workerCost
			if proxied {
				costly.ProxyCost = proxyCost
			}
			for _, tc := range []struct {
				v               scenario.Variant
				proxyAt, workAt string // the flag's value ("": absent)
			}{
				{v, "", ""},
				{costly, map[bool]string{true: proxyCost.String()}[proxied], workerCost.String()},
			} {
				v := tc.v.WithDefaults()
				if err := v.Validate(Catalog()); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				p, err := Render(v, w, &seqAlloc{})
				if err != nil {
					t.Fatal(err)
				}
				for _, proc := range p.Processes {
					want := map[string]string{RoleProxy: tc.proxyAt, RoleWorkers: tc.workAt}[proc.Role]
					if got := flagValue(proc.Args(), "--inject-cost"); got != want {
						t.Errorf("costs %s/%s: %s's --inject-cost %q, want %q (%v)", tc.v.ProxyCost, tc.v.WorkerCost, proc.Role, got, want, proc.Args())
					}
				}
			}
		})
	}
}

// flagValue is the value of flag in args, "" when it is absent.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestRenderInjectedCostsRefused: Render, which may be called without
// Validate, refuses a cost nobody would spend.
func TestRenderInjectedCostsRefused(t *testing.T) {
	w := scenario.Workers{Count: 2}.WithDefaults()
	target := w
	target.Target = &scenario.Target{Exec: "srv --port {port}"}
	for _, tc := range []struct {
		name string
		v    scenario.Variant
		w    scenario.Workers
		want string
	}{
		{"proxy cost without a proxy", scenario.Variant{Name: "rp", Topology: scenario.ReusePort, ProxyCost: time.Millisecond}, w,
			"topologies: rp: an injected proxy cost needs the built-in proxy, which topology reuseport does not run here"},
		{"worker cost on a target", scenario.Variant{Name: "t", Topology: scenario.ReusePort, WorkerCost: time.Millisecond}, target,
			"topologies: t: an injected worker cost needs the built-in worker, not a foreign target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.v.WithDefaults(), tc.w, &seqAlloc{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render: %v, want %q", err, tc.want)
			}
		})
	}
}
