package prefork

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Formats of WriteProxyConfig.
const (
	// FormatNginx is an nginx "upstream" block (http context).
	FormatNginx = "nginx"
	// FormatHAProxy is an HAProxy "backend" section.
	FormatHAProxy = "haproxy"
)

// ProxyConfigFormats lists the formats WriteProxyConfig writes.
func ProxyConfigFormats() []string { return []string{FormatNginx, FormatHAProxy} }

// ProxyConfigName names the upstream block or backend section.
const ProxyConfigName = "lbbench_workers"

// WriteProxyConfig writes an upstream block in format listing each distinct
// endpoint (as Supervisor.Endpoints returns them: "host:port" or
// "unix:/path") as a server, balanced by least connections. health is the
// HTTP path HAProxy checks (nginx's open-source edition has no active
// checks). Include the block in a full configuration and point a
// proxy_pass (nginx) or default_backend (HAProxy) at ProxyConfigName.
func WriteProxyConfig(w io.Writer, format string, endpoints []string, health string) error {
	eps := slices.Compact(slices.Clone(endpoints)) // reuseport and shared list one address N times
	if len(eps) == 0 {
		return fmt.Errorf("prefork: proxy config: no endpoints")
	}
	var b strings.Builder
	switch format {
	case FormatNginx:
		fmt.Fprintf(&b, "# %d endpoints from lbbench serve\n", len(eps))
		fmt.Fprintf(&b, "upstream %s {\n    least_conn;\n", ProxyConfigName)
		for _, ep := range eps {
			fmt.Fprintf(&b, "    server %s;\n", ep) // nginx takes unix:/path as it is
		}
		b.WriteString("}\n")
	case FormatHAProxy:
		fmt.Fprintf(&b, "# %d endpoints from lbbench serve\n", len(eps))
		fmt.Fprintf(&b, "backend %s\n    mode http\n    balance leastconn\n", ProxyConfigName)
		fmt.Fprintf(&b, "    option httpchk GET %s\n", health)
		for i, ep := range eps {
			addr := ep
			if path, ok := strings.CutPrefix(ep, UnixPrefix); ok {
				addr = "unix@" + path
			}
			fmt.Fprintf(&b, "    server worker%d %s check\n", i, addr)
		}
	default:
		return fmt.Errorf("prefork: proxy config: format must be one of %v, got %q", ProxyConfigFormats(), format)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
