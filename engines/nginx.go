package engines

import (
	"fmt"
	"time"
)

// nginxPolicies are the upstream-block directives of each policy; round
// robin is nginx's default and needs none.
var nginxPolicies = map[string][]string{
	"round_robin": nil,
	"least_conn":  {"least_conn;"},
	"p2c":         {"random two least_conn;"},
	"random":      {"random;"},
	"hash":        {"hash $request_uri consistent;"},
}

// Files and paths of an nginx instance, relative to its working directory.
const (
	nginxConf   = "nginx.conf"
	nginxErrLog = "error.log"
)

// nginxArgs are the arguments shared by the check and the run: the prefix,
// the configuration and the error log, which nginx opens before it reads
// the configuration (without -e that is /var/log/nginx/error.log).
func nginxArgs() []string {
	dir := DirPlaceholder
	return []string{"-p", dir + "/", "-c", dir + "/" + nginxConf, "-e", dir + "/" + nginxErrLog}
}

// renderNginx renders nginx.conf for s (defaulted and valid). The file sets
// "daemon off" and "master_process on" itself, so the check (nginx -t)
// validates exactly what runs and the master stays in the foreground as the
// driver's child, its workers in its process group.
func renderNginx(s Spec) Config {
	dir := DirPlaceholder
	var c confWriter
	w := c.line
	w(0, "# nginx in front of %d upstreams: policy %s, upstream keep-alive %s.", len(s.Upstreams), s.Policy, onOff(s.UpstreamKeepAlive))
	w(0, "# Rendered by lbbench; %s is the process's working directory.", dir)
	w(0, "daemon off;")
	w(0, "master_process on;")
	if s.Threads > 0 {
		w(0, "worker_processes %d;", s.Threads)
	} else {
		w(0, "worker_processes auto;")
	}
	if s.User != "" {
		w(0, "user %s;", s.User)
	}
	w(0, "pid %s/nginx.pid;", dir)
	w(0, "error_log %s/%s warn;", dir, nginxErrLog)
	w(0, "")
	w(0, "events {")
	w(1, "worker_connections 4096;")
	w(0, "}")
	w(0, "")
	w(0, "http {")
	w(1, "access_log off;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w(1, "%s_temp_path %s/%s_temp;", t, dir, t)
	}
	w(1, "# Client connections: as many requests as the load generator sends.")
	w(1, "keepalive_requests 1000000;")
	w(1, "keepalive_timeout 75s;")
	w(0, "")
	up := Upstream{Engine: Nginx, Name: "workers", Policy: s.Policy, Servers: s.Upstreams, ServerOptions: "max_fails=0",
		Directives: []string{
			"# Shared by all worker processes, so policies see every active request.",
			"zone workers 1m;",
		}}
	if s.UpstreamKeepAlive {
		up.Directives = append(up.Directives,
			fmt.Sprintf("keepalive %d;", s.KeepAliveConns),
			"keepalive_requests 1000000;",
			"keepalive_timeout 60s;")
	}
	up.write(&c, 1)
	w(0, "")
	w(1, "server {")
	w(2, "listen %s;", s.Listen)
	w(2, "location / {")
	w(3, "proxy_pass http://workers;")
	if s.UpstreamKeepAlive {
		w(3, "# Upstream keep-alive needs HTTP/1.1 and no \"Connection: close\".")
		w(3, "proxy_http_version 1.1;")
		w(3, "proxy_set_header Connection \"\";")
	} else {
		w(3, "# nginx's default HTTP/1.0 with \"Connection: close\": a connection per request.")
	}
	w(3, "proxy_connect_timeout %s;", confDuration(s.Timeout))
	w(3, "proxy_read_timeout %s;", confDuration(s.Timeout))
	w(2, "}")
	w(1, "}")
	w(0, "")
	w(1, "server {")
	w(2, "listen %s;", s.Admin)
	w(2, "location = /healthz {")
	w(3, "return 200 \"ok\\n\";")
	w(2, "}")
	stats := ""
	if s.StubStatus {
		w(2, "location = /status {")
		w(3, "stub_status;")
		w(2, "}")
		stats = "http://" + s.Admin + "/status"
	}
	w(2, "location / {")
	w(3, "return 404;")
	w(2, "}")
	w(1, "}")
	w(0, "}")

	return Config{
		Files:     []File{{Name: nginxConf, Content: c.String()}},
		CheckArgs: append([]string{"-t", "-q"}, nginxArgs()...),
		Args:      nginxArgs(),
		Health:    "http://" + s.Admin + "/healthz",
		Stats:     stats,
	}
}

// confDuration writes d as both engines read it: "30s", or "1500ms".
func confDuration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
