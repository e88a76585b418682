// Package engines renders configurations for real proxy engines, nginx and
// HAProxy, from the same few settings the built-in proxy takes: a balancing
// policy by its lbbench name, upstream keep-alive on or off, upstreams given
// as "host:port" or "unix:/path", a listen address and an admin address.
//
// A rendered Config is the engine's configuration file plus the arguments
// that check it (nginx -t, haproxy -c) and run it in the foreground, with
// every path it writes (pid file, logs, temp files, HAProxy's stats socket)
// inside the process's own working directory, written as DirPlaceholder.
// Nothing goes to /etc or /var. The package starts nothing: a driver
// (harness.LocalDriver or docker.Driver) writes the files, runs the check,
// starts the engine, waits for Config.Health and reads its counters with
// ReadNginxStatus or ReadHAProxyStats.
//
// Upstream renders the upstream block (nginx) or backend section (HAProxy)
// alone: Render uses it, and so does `lbbench serve --print-config`
// (prefork.WriteProxyConfig), so that both spell servers alike and HAProxy
// names server i HAProxyServerName(i) ("w0", "w1", ...) in both.
//
// Policies map to the engines as follows (see Policies):
//
//	lbbench       nginx                          HAProxy
//	round_robin   (default round robin)          balance roundrobin
//	least_conn    least_conn                     balance leastconn
//	p2c           random two least_conn          balance random(2)
//	random        random                         balance random(1)
//	hash          hash $request_uri consistent   balance uri whole + hash-type consistent
//
// The built-in proxy's other policies (ewma_least_conn, peak_ewma) have no
// equivalent in these engines and are rejected by CheckPolicy with an error
// naming the engine. The hash key is the whole request URI, query string
// included; the built-in hash policy hashes the path by default.
//
// Upstream keep-alive on means, for nginx, "keepalive N" in the upstream
// block with "proxy_http_version 1.1" and an empty Connection header (nginx
// 1.22 otherwise speaks HTTP/1.0 with "Connection: close" to upstreams); for
// HAProxy, "http-reuse always", so idle server connections are shared by all
// clients as in the other two proxies. Off means, for nginx, no keepalive
// directive (one connection per request); for HAProxy, "option
// http-server-close" and "http-reuse never".
//
// Both engines run with their state shared between worker processes or
// threads (nginx "zone", HAProxy threads), so least_conn counts every active
// request, not only those of one nginx worker process. Passive health checks
// are off (nginx max_fails=0), so one failed request does not take a worker
// out of rotation, and access logs are off, as the built-in proxy keeps no
// per-request log.
package engines
