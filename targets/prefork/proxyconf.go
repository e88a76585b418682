package prefork

import (
	"fmt"
	"io"
	"slices"

	"github.com/lbbench/lbbench/engines"
)

// Formats of WriteProxyConfig.
const (
	// FormatNginx is an nginx "upstream" block (http context).
	FormatNginx = engines.Nginx
	// FormatHAProxy is an HAProxy "backend" section.
	FormatHAProxy = engines.HAProxy
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
// proxy_pass (nginx) or default_backend (HAProxy) at ProxyConfigName. The
// block is rendered as the engines' own configurations render theirs
// (engines.Upstream): HAProxy server i is named engines.HAProxyServerName(i).
func WriteProxyConfig(w io.Writer, format string, endpoints []string, health string) error {
	eps := slices.Compact(slices.Clone(endpoints)) // reuseport and shared list one address N times
	if len(eps) == 0 {
		return fmt.Errorf("prefork: proxy config: no endpoints")
	}
	up := engines.Upstream{Engine: format, Name: ProxyConfigName, Policy: "least_conn", Servers: eps}
	switch format {
	case FormatNginx:
	case FormatHAProxy:
		up.Directives = []string{"mode http", "option httpchk GET " + health}
		up.ServerOptions = "check"
	default:
		return fmt.Errorf("prefork: proxy config: format must be one of %v, got %q", ProxyConfigFormats(), format)
	}
	block, err := up.Block(0)
	if err != nil {
		return fmt.Errorf("prefork: proxy config: %w", err)
	}
	_, err = fmt.Fprintf(w, "# %d endpoints from lbbench serve\n%s", len(eps), block)
	return err
}
