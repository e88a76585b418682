package engines

import (
	"fmt"
	"strconv"
	"strings"
)

// Upstream is a group of servers as an engine declares it: an nginx
// "upstream" block or an HAProxy "backend" section. Render writes one into
// each full configuration, and `lbbench serve --print-config` writes one on
// its own (prefork.WriteProxyConfig), so both list servers, name them and
// spell their addresses alike. It is a plain value.
type Upstream struct {
	// Engine is Nginx or HAProxy.
	Engine string
	// Name names the block or section, the target of nginx's proxy_pass
	// or HAProxy's default_backend.
	Name string
	// Policy is an lbbench policy name the engine supports (see Policies);
	// its directives open the block.
	Policy string
	// Directives follow the policy's, one per element, before the servers,
	// written as they are (nginx's with their ";"; "#" starts a comment).
	Directives []string
	// Servers are the upstreams, in index order, each "host:port" or
	// "unix:/absolute/path"; at least one. HAProxy names server i
	// HAProxyServerName(i), which its stats report.
	Servers []string
	// ServerOptions are appended to every server line, for example
	// "max_fails=0" (nginx) or "check" (HAProxy); empty adds none.
	ServerOptions string
}

// HAProxyServerName returns the name HAProxy's configuration and stats give
// upstream i: "w0", "w1", ...
func HAProxyServerName(i int) string { return "w" + strconv.Itoa(i) }

// Block validates u and returns its block (nginx) or section (HAProxy),
// indented by indent levels of four spaces, its contents one level deeper.
// The error names the problem: an unknown engine or policy, no servers, or
// a server that is not host:port or unix:/absolute/path.
func (u Upstream) Block(indent int) (string, error) {
	if err := CheckPolicy(u.Engine, u.Policy); err != nil {
		return "", err
	}
	if len(u.Servers) == 0 {
		return "", fmt.Errorf("engines: upstream %s: at least one server is required", u.Name)
	}
	for i, s := range u.Servers {
		if err := checkUpstream(s); err != nil {
			return "", fmt.Errorf("engines: upstream %s: servers[%d]: %w", u.Name, i, err)
		}
	}
	if strings.ContainsAny(u.Name, unsafe) || u.Name == "" {
		return "", fmt.Errorf("engines: upstream name %q must be one word", u.Name)
	}
	var c confWriter
	u.write(&c, indent)
	return c.String(), nil
}

// write writes u (valid) to c at indent.
func (u Upstream) write(c *confWriter, indent int) {
	nginx := u.Engine == Nginx
	policies := haproxyPolicies // not registry's: Render, which registry holds, calls write
	if nginx {
		c.line(indent, "upstream %s {", u.Name)
		policies = nginxPolicies
	} else {
		c.line(indent, "backend %s", u.Name)
	}
	for _, d := range policies[u.Policy] {
		c.line(indent+1, "%s", d)
	}
	for _, d := range u.Directives {
		c.line(indent+1, "%s", d)
	}
	opts := ""
	if u.ServerOptions != "" {
		opts = " " + u.ServerOptions
	}
	for i, s := range u.Servers {
		if nginx {
			// nginx takes "unix:/path" as it is.
			c.line(indent+1, "server %s%s;", s, opts)
			continue
		}
		if path, ok := strings.CutPrefix(s, "unix:"); ok {
			s = "unix@" + path
		}
		c.line(indent+1, "server %s %s%s", HAProxyServerName(i), s, opts)
	}
	if nginx {
		c.line(indent, "}")
	}
}

// confWriter builds a configuration file a line at a time.
type confWriter struct{ strings.Builder }

// line writes one line indented by indent levels of four spaces.
func (c *confWriter) line(indent int, format string, args ...any) {
	c.WriteString(strings.Repeat("    ", indent))
	fmt.Fprintf(c, format, args...)
	c.WriteByte('\n')
}
