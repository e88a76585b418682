package topologies

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/scenario"
)

func TestRenderShared(t *testing.T) {
	tests := []struct {
		name       string
		v          scenario.Variant
		w          scenario.Workers
		wantAccept string
		wantMax    int
	}{
		{name: "default accept", v: scenario.Variant{Name: "s", Topology: scenario.Shared}, w: scenario.Workers{Count: 4}, wantAccept: "netpoll", wantMax: 0},
		{name: "epoll exclusive", v: scenario.Variant{Name: "s", Topology: scenario.Shared, Accept: "epoll-exclusive", MaxConns: 1}, w: scenario.Workers{Count: 4}, wantAccept: "epoll-exclusive", wantMax: 1},
		{name: "exec target", v: scenario.Variant{Name: "s", Topology: scenario.Shared}, w: scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "srv --fd {fd} -w {workers}", Probe: "/h"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Render(tt.v.WithDefaults(), tt.w.WithDefaults(), &seqAlloc{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Processes) != 1 || p.Processes[0].Role != RoleWorkers {
				t.Fatalf("processes %+v", p.Processes)
			}
			args := p.Processes[0].Args()
			if arg(t, args, "--listen") != "shared" || p.Entry != "http://127.0.0.1:"+arg(t, args, "--port") {
				t.Errorf("args %v, entry %s", args, p.Entry)
			}
			if tt.w.Target != nil {
				if strings.Contains(strings.Join(args, " "), "--accept") {
					t.Errorf("--accept given to an exec target: %v", args)
				}
				if arg(t, args, "--exec") != tt.w.Target.Exec || arg(t, args, "--probe") != "/h" || !filepath.IsAbs(arg(t, args, "--exec-dir")) {
					t.Errorf("exec args %v", args)
				}
				return
			}
			if w := p.Processes[0].Serve.Worker; w.Accept != tt.wantAccept || w.MaxConns != tt.wantMax {
				t.Errorf("worker config %+v, want accept %s, max_conns %d", w, tt.wantAccept, tt.wantMax)
			}
			if arg(t, args, "--accept") != tt.wantAccept {
				t.Errorf("args %v, want --accept %s", args, tt.wantAccept)
			}
		})
	}
	_, err := Render(scenario.Variant{Name: "s", Topology: scenario.Shared, Accept: "blocking"}, scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "x {port}"}}.WithDefaults(), &seqAlloc{})
	if err == nil || !strings.Contains(err.Error(), "accept and max_conns need the built-in worker") {
		t.Errorf("accept with an exec target: %v", err)
	}
}

func TestRenderUnix(t *testing.T) {
	w := scenario.Workers{Count: 3}.WithDefaults()
	p, err := Render(scenario.Variant{Name: "u", Topology: scenario.Unix}.WithDefaults(), w, &seqAlloc{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Processes) != 2 {
		t.Fatalf("processes %+v", p.Processes)
	}
	serve, proxy := p.Processes[0].Args(), p.Processes[1].Args()
	dir := arg(t, serve, "--socket-dir")
	if arg(t, serve, "--listen") != "unix" || !filepath.IsAbs(dir) || len(dir)+len("/worker-99.sock") > 107 {
		t.Errorf("serve args %v", serve)
	}
	want := strings.Join([]string{"unix:" + dir + "/worker-0.sock", "unix:" + dir + "/worker-1.sock", "unix:" + dir + "/worker-2.sock"}, ",")
	if got := arg(t, proxy, "--upstreams"); got != want {
		t.Errorf("upstreams %s, want %s", got, want)
	}
	if arg(t, proxy, "--policy") != scenario.DefaultPolicy || p.Entry != "http://"+arg(t, proxy, "--listen") {
		t.Errorf("proxy args %v, entry %s", proxy, p.Entry)
	}
	// Two plans never share a socket dir.
	a := &seqAlloc{}
	p1, _ := Render(scenario.Variant{Name: "u", Topology: scenario.Unix}.WithDefaults(), w, a)
	p2, _ := Render(scenario.Variant{Name: "u", Topology: scenario.Unix}.WithDefaults(), w, a)
	if arg(t, p1.Processes[0].Args(), "--socket-dir") == arg(t, p2.Processes[0].Args(), "--socket-dir") {
		t.Error("two plans got the same socket dir")
	}
}

func TestValidateWorkerOptionsAndTarget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     scenario.Variant
		field string
	}{
		{"accept on reuseport", scenario.Variant{Name: "x", Topology: scenario.ReusePort, Accept: "blocking"}, "accept"},
		{"unknown accept", scenario.Variant{Name: "x", Topology: scenario.Shared, Accept: "fifo"}, "accept"},
		{"max conns on proxy", scenario.Variant{Name: "x", Topology: scenario.Proxy, MaxConns: 1}, "max_conns"},
		{"negative max conns", scenario.Variant{Name: "x", Topology: scenario.Shared, MaxConns: -1}, "max_conns"},
		{"unknown unix policy", scenario.Variant{Name: "x", Topology: scenario.Unix, Proxy: scenario.ProxySpec{Policy: "leastconn"}}, "proxy.policy"},
		{"unknown accept_when", scenario.Variant{Name: "x", Topology: scenario.Unix, AcceptWhen: "busy"}, "accept_when"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.WithDefaults().Validate(Catalog())
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate() = %v, want an error on %s", err, tc.field)
			}
		})
	}
	if err := (scenario.Variant{Name: "x", Topology: scenario.Shared, Accept: "epoll-exclusive", MaxConns: 2}).WithDefaults().Validate(Catalog()); err != nil {
		t.Errorf("valid shared variant: %v", err)
	}
	for _, tc := range []struct {
		name  string
		w     scenario.Workers
		field string
	}{
		{"no exec", scenario.Workers{Count: 2, Target: &scenario.Target{}}, "target.exec"},
		{"bad quote", scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "srv '{port}"}}, "target.exec"},
		{"blank", scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "  "}}, "target.exec"},
		{"bad probe", scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "srv {port}", Probe: "healthz"}}, "target.probe"},
		{"slow", scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "srv {port}"}, Slow: []scenario.Slow{{Index: 0, Factor: 2}}}, "slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.WithDefaults().Validate()
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate() = %v, want an error on %s", err, tc.field)
			}
		})
	}
}

// TestRenderAcceptWhen: workers.accept_when and a variant's override reach
// the serve command line in every topology with built-in workers, and an
// exec target refuses idle.
func TestRenderAcceptWhen(t *testing.T) {
	for _, topo := range []string{scenario.Shared, scenario.ReusePort, scenario.Proxy, scenario.Unix} {
		for _, tc := range []struct{ workers, variant, want string }{
			{"", "", ""},
			{"idle", "", "idle"},
			{"idle", "always", "always"},
			{"", "idle", "idle"},
		} {
			w := scenario.Workers{Count: 2, AcceptWhen: tc.workers}.WithDefaults()
			v := scenario.Variant{Name: "v", Topology: topo, AcceptWhen: tc.variant}.WithDefaults()
			p, err := Render(v, w, &seqAlloc{})
			if err != nil {
				t.Fatal(err)
			}
			args := p.Processes[0].Args()
			got := ""
			for i, a := range args {
				if a == "--accept-when" && i+1 < len(args) {
					got = args[i+1]
				}
			}
			if got != tc.want {
				t.Errorf("%s, workers %q, variant %q: serve args %v, want --accept-when %q", topo, tc.workers, tc.variant, args, tc.want)
			}
		}
	}
	w := scenario.Workers{Count: 2, Target: &scenario.Target{Exec: "x {port}"}}.WithDefaults()
	if _, err := Render(scenario.Variant{Name: "s", Topology: scenario.Shared, AcceptWhen: "idle"}, w, &seqAlloc{}); err == nil || !strings.Contains(err.Error(), "accept_when idle needs the built-in worker") {
		t.Errorf("accept_when idle with an exec target: %v", err)
	}
	// A variant's target replaces the built-in worker; the workers' idle
	// setting stays with the built-in worker.
	tw := scenario.Workers{Count: 2, AcceptWhen: "idle"}.WithDefaults()
	p, err := Render(scenario.Variant{Name: "g", Topology: scenario.Shared, Target: &scenario.Target{Exec: "gunicorn -w {workers} --bind fd://{fd} busyapp:app", Probe: "/healthz"}}, tw, &seqAlloc{})
	if err != nil {
		t.Fatal(err)
	}
	if args := p.Processes[0].Args(); arg(t, args, "--exec") != "gunicorn -w {workers} --bind fd://{fd} busyapp:app" || strings.Contains(strings.Join(args, " "), "--accept-when") {
		t.Errorf("variant target: serve args %v", args)
	}
	if err := (scenario.Variant{Name: "g", Topology: scenario.Shared, AcceptWhen: "idle", Target: &scenario.Target{Exec: "x"}}).WithDefaults().Validate(Catalog()); err == nil || !strings.Contains(err.Error(), "accept_when") {
		t.Errorf("variant target with accept_when idle: %v", err)
	}
	var fe *field.Error
	if err := (scenario.Workers{Count: 2, AcceptWhen: "sometimes"}).WithDefaults().Validate(); !errors.As(err, &fe) || fe.Field != "accept_when" {
		t.Errorf("workers accept_when sometimes: %v, want an error on accept_when", err)
	}
}

// TestRenderSharedUnix: the workers share one Unix socket (serve --listen
// shared --socket-dir DIR, with the variant's accept strategy) and the
// built-in layer-7 proxy in front has that socket as its one upstream,
// with the variant's upstream keep-alive and close_after.
func TestRenderSharedUnix(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name      string
		proxy     scenario.ProxySpec
		keepalive string
		close     string
	}{
		{"keep-alive", scenario.ProxySpec{}, "true", ""},
		{"close after 5", scenario.ProxySpec{CloseAfter: 5}, "true", "5"},
		{"keep-alive off", scenario.ProxySpec{UpstreamKeepAlive: &off}, "false", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := scenario.Variant{Name: "f", Topology: scenario.SharedUnix, Accept: "poll", Proxy: tc.proxy}.WithDefaults()
			if err := v.Validate(Catalog()); err != nil {
				t.Fatal(err)
			}
			p, err := Render(v, scenario.Workers{Count: 4, AcceptWhen: "idle"}.WithDefaults(), &seqAlloc{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Processes) != 2 || p.Processes[0].Role != RoleWorkers || p.Processes[1].Role != RoleProxy {
				t.Fatalf("processes %+v", p.Processes)
			}
			w, px := p.Processes[0].Args(), p.Processes[1].Args()
			dir := arg(t, w, "--socket-dir")
			if arg(t, w, "--listen") != "shared" || arg(t, w, "--accept") != "poll" || arg(t, w, "--accept-when") != "idle" || !strings.HasPrefix(dir, "/") {
				t.Errorf("serve args %v", w)
			}
			if got, want := arg(t, px, "--upstreams"), "unix:"+filepath.Join(dir, "shared.sock"); got != want {
				t.Errorf("proxy upstreams %s, want %s", got, want)
			}
			if arg(t, px, "--mode") != "l7" || p.Entry != "http://"+arg(t, px, "--listen") {
				t.Errorf("proxy args %v, entry %s", px, p.Entry)
			}
			cmd := p.Processes[1].Proxy
			if fmt.Sprint(cmd.UpstreamKeepAlive) != tc.keepalive || (tc.close != "" && fmt.Sprint(cmd.CloseAfter) != tc.close) {
				t.Errorf("proxy keep-alive %v close after %d, want %s %s", cmd.UpstreamKeepAlive, cmd.CloseAfter, tc.keepalive, tc.close)
			}
		})
	}
	for _, tc := range []struct {
		v    scenario.Variant
		want string
	}{
		{scenario.Variant{Name: "f", Topology: scenario.SharedUnix, Proxy: scenario.ProxySpec{Retries: 1}}, "no other worker to retry on"},
		{scenario.Variant{Name: "f", Topology: scenario.SharedUnix, Proxy: scenario.ProxySpec{Engine: "nginx"}}, "built-in proxy only"},
		{scenario.Variant{Name: "f", Topology: scenario.SharedUnix, Proxy: scenario.ProxySpec{Pools: []scenario.Pool{{Name: "a", Prefix: "/", Workers: []int{0}}}}}, "routing by path needs topology l7-pools"},
		{scenario.Variant{Name: "f", Topology: scenario.L7, Accept: "poll"}, "accept: is an option of the shared and shared-unix topologies only"},
	} {
		if err := tc.v.WithDefaults().Validate(Catalog()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.v, err, tc.want)
		}
	}
}
