package main

import (
	"context"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

// The packages that own a subcommand's configuration write its command
// line (Args); cmd/lbbench parses it. These tests parse what each writes
// with the real flag set and compare with what went in, so the two cannot
// drift apart.

func TestServeArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    prefork.ServeConfig
	}{
		{"defaults", prefork.ServeConfig{}},
		{"everything", prefork.ServeConfig{
			Config: prefork.Config{
				Workers: 3, Listen: prefork.Shared, Host: "127.0.0.2", Port: 9000, SocketDir: "/tmp/s",
				Restart: true, HealthInterval: 250 * time.Millisecond,
				Worker:   worker.Config{Concurrency: 2, Mode: "spin", Service: 3 * time.Millisecond, Accept: "epoll-exclusive", MaxConns: 4, HeaderTimeout: 3 * time.Second, IdleTimeout: time.Minute, AcceptWhen: "idle", InjectCost: 40 * time.Microsecond},
				Slowdown: map[int]float64{0: 3, 2: 1.5},
				Exec:     &prefork.Exec{Command: "srv --port {port} 'a b'", Probe: "/h", Dir: "/srv"},
			},
			Admin: "127.0.0.1:0", PrintConfig: "nginx",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.c.Args()
			if args[0] != prefork.ServeSubcommand {
				t.Fatalf("args %q do not start with the subcommand", args)
			}
			var got prefork.ServeConfig
			cmd := serveCmd(func(_ context.Context, _, _ io.Writer, c prefork.ServeConfig) error { got = c; return nil })
			cmd.SetArgs(args[1:])
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			// Flags the config left at zero parse to the command's defaults.
			want := tc.c
			want.Config = tc.c.Config.WithDefaults()
			got.Config = got.Config.WithDefaults()
			want.Command, got.Command = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parsed %+v\nwant   %+v\nfrom %q", got, want, args)
			}
		})
	}
}

func TestProxyArgsRoundTrip(t *testing.T) {
	c := balancer.Command{Listen: "127.0.0.1:8081", Admin: "127.0.0.1:8082", Config: balancer.Config{
		Mode: balancer.L7, Policy: "ewma_least_conn", PolicyArgs: map[string]string{"alpha": "0.2"},
		Pools: []balancer.Pool{
			{Name: "read", Prefix: "/", Policy: "least_conn", Upstreams: []string{"127.0.0.1:9000", "unix:/tmp/w1.sock"}},
			{Name: "write", Prefix: "/event", Policy: "hash", PolicyArgs: map[string]string{"key": "header:X-User"}, Upstreams: []string{"127.0.0.1:9002"}},
		},
		UpstreamKeepAlive: true, CloseAfter: 5, MaxIdle: 3, Retries: 2, DownFor: time.Second, Timeout: 4 * time.Second, L4IdleTimeout: 7 * time.Second,
		HeaderTimeout: 3 * time.Second, IdleTimeout: 7 * time.Second, ReadTimeout: 2 * time.Second,
		InjectCost: 40 * time.Microsecond,
	}}
	args := c.Args()
	if args[0] != balancer.Subcommand {
		t.Fatalf("args %q do not start with the subcommand", args)
	}
	var got balancer.Command
	cmd := proxyCmd(func(_ context.Context, _ io.Writer, c balancer.Command) error { got = c; return nil })
	cmd.SetArgs(args[1:])
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("parsed %+v\nwant   %+v\nfrom %q", got, c, args)
	}
	// Keep-alive off must survive too: it is the flag's non-default value.
	c.UpstreamKeepAlive, c.CloseAfter = false, 0
	cmd = proxyCmd(func(_ context.Context, _ io.Writer, c balancer.Command) error { got = c; return nil })
	cmd.SetArgs(c.Args()[1:])
	if err := cmd.Execute(); err != nil || got.UpstreamKeepAlive {
		t.Errorf("keep-alive off parsed as %v (%v)", got.UpstreamKeepAlive, err)
	}
}

func TestAttackAndProbeArgsParse(t *testing.T) {
	a := loadgen.AttackCommand{Target: "http://127.0.0.1:1", Spec: "/s.json", Out: "/o.json", Quiet: true, Live: true}
	cmd := newAttackCmd()
	if err := cmd.ParseFlags(a.Args()[1:]); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	for flag, want := range map[string]string{loadgen.FlagTarget: a.Target, loadgen.FlagSpec: a.Spec, loadgen.FlagOut: a.Out, loadgen.FlagQuiet: "true", loadgen.FlagLive: "true"} {
		if got := f.Lookup(flag); got == nil || got.Value.String() != want {
			t.Errorf("attack --%s = %v, want %q", flag, got, want)
		}
	}
	if cmd.Name() != loadgen.AttackSubcommand {
		t.Errorf("attack command is named %q", cmd.Name())
	}
	p := driver.ProbeCommand{URL: "http://x/healthz", Timeout: 3 * time.Second, Get: true}
	pc := newProbeCmd()
	if err := pc.ParseFlags(p.Args()[1:]); err != nil {
		t.Fatal(err)
	}
	if pc.Name() != driver.ProbeSubcommand || pc.Flags().Lookup(driver.FlagTimeout).Value.String() != "3s" ||
		pc.Flags().Lookup(driver.FlagGet).Value.String() != "true" || pc.Flags().Arg(0) != p.URL {
		t.Errorf("probe parsed %v from %q", pc.Flags().Args(), p.Args())
	}
}
