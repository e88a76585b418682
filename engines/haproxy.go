package engines

// haproxyPolicies are the backend directives of each policy.
var haproxyPolicies = map[string][]string{
	"round_robin": {"balance roundrobin"},
	"least_conn":  {"balance leastconn"},
	"p2c":         {"balance random(2)"},
	"random":      {"balance random(1)"},
	// "whole" hashes the query string too, as nginx's $request_uri does.
	"hash": {"balance uri whole", "hash-type consistent"},
}

// Files of an HAProxy instance, relative to its working directory.
const (
	haproxyConf = "haproxy.cfg"
	// haproxySock is bound relative to the working directory: a Unix
	// socket address holds at most 107 bytes, which a deep working
	// directory's absolute path can exceed.
	haproxySock = "haproxy.sock"
)

// renderHAProxy renders haproxy.cfg for s (defaulted and valid). HAProxy
// runs with -db: in the foreground, one process with as many threads as
// CPUs, and no pid file (only daemon and master-worker modes write one; the
// driver knows the pid).
func renderHAProxy(s Spec) Config {
	var c confWriter
	w := c.line
	w(0, "# HAProxy in front of %d upstreams: policy %s, upstream keep-alive %s.", len(s.Upstreams), s.Policy, onOff(s.UpstreamKeepAlive))
	w(0, "# Rendered by lbbench; run in its working directory %s.", DirPlaceholder)
	w(0, "global")
	w(1, "# Relative to the working directory; \"show stat\" gives the counters as CSV.")
	w(1, "stats socket unix@%s mode 600 level user", haproxySock)
	if s.Threads > 0 {
		w(1, "nbthread %d", s.Threads)
	}
	w(0, "")
	w(0, "defaults")
	w(1, "mode http")
	w(1, "timeout connect %s", confDuration(s.Timeout))
	w(1, "timeout server %s", confDuration(s.Timeout))
	w(1, "timeout client 75s")
	w(1, "timeout http-keep-alive 75s")
	w(0, "")
	w(0, "frontend proxy")
	w(1, "bind %s", s.Listen)
	w(1, "default_backend workers")
	w(0, "")
	w(0, "frontend admin")
	w(1, "bind %s", s.Admin)
	w(1, "http-request return status 200 content-type text/plain string ok if { path /healthz }")
	w(1, "http-request return status 404")
	w(0, "")
	up := Upstream{Engine: HAProxy, Name: "workers", Policy: s.Policy, Servers: s.Upstreams}
	if s.UpstreamKeepAlive {
		up.Directives = []string{"# Idle server connections are shared by all client connections.", "http-reuse always"}
	} else {
		up.Directives = []string{"# A new server connection for every request.", "option http-server-close", "http-reuse never"}
	}
	up.write(&c, 0)
	return Config{
		Files:     []File{{Name: haproxyConf, Content: c.String()}},
		CheckArgs: []string{"-c", "-f", DirPlaceholder + "/" + haproxyConf},
		Args:      []string{"-db", "-f", DirPlaceholder + "/" + haproxyConf},
		Health:    "http://" + s.Admin + "/healthz",
		Stats:     DirPlaceholder + "/" + haproxySock,
	}
}
