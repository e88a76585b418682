package engines

import (
	"errors"
	"strings"
	"testing"
)

func TestUpstreamBlock(t *testing.T) {
	servers := []string{"127.0.0.1:9000", "unix:/run/lbb/worker-1.sock"}
	for _, tc := range []struct {
		name   string
		u      Upstream
		indent int
		want   string
	}{
		{
			name: "nginx",
			u:    Upstream{Engine: Nginx, Name: "pool", Policy: "least_conn", Servers: servers, Directives: []string{"keepalive 8;"}},
			want: "upstream pool {\n    least_conn;\n    keepalive 8;\n    server 127.0.0.1:9000;\n    server unix:/run/lbb/worker-1.sock;\n}\n",
		},
		{
			name:   "nginx indented, server options",
			u:      Upstream{Engine: Nginx, Name: "pool", Policy: "round_robin", Servers: servers[:1], ServerOptions: "max_fails=0"},
			indent: 1,
			want:   "    upstream pool {\n        server 127.0.0.1:9000 max_fails=0;\n    }\n",
		},
		{
			name: "haproxy names servers as its stats do",
			u:    Upstream{Engine: HAProxy, Name: "pool", Policy: "p2c", Servers: servers, Directives: []string{"mode http"}, ServerOptions: "check"},
			want: "backend pool\n    balance random(2)\n    mode http\n    server " + HAProxyServerName(0) + " 127.0.0.1:9000 check\n    server " +
				HAProxyServerName(1) + " unix@/run/lbb/worker-1.sock check\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.u.Block(tc.indent)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestUpstreamBlockRejects(t *testing.T) {
	ok := Upstream{Engine: HAProxy, Name: "pool", Policy: "least_conn", Servers: []string{"127.0.0.1:9000"}}
	for _, tc := range []struct {
		name string
		edit func(*Upstream)
		want string
		is   error
	}{
		{"unknown engine", func(u *Upstream) { u.Engine = "envoy" }, "envoy", ErrUnknownEngine},
		{"unsupported policy", func(u *Upstream) { u.Policy = "peak_ewma" }, "peak_ewma", ErrUnsupportedPolicy},
		{"no servers", func(u *Upstream) { u.Servers = nil }, "at least one server", nil},
		{"bad server", func(u *Upstream) { u.Servers = []string{"127.0.0.1:1", "unix:relative.sock"} }, "servers[1]", nil},
		{"directive in the name", func(u *Upstream) { u.Name = "pool\n    server evil 10.0.0.1:80" }, "one word", nil},
		{"no name", func(u *Upstream) { u.Name = "" }, "one word", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ok
			tc.edit(&u)
			_, err := u.Block(0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Block = %v, want an error containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}
