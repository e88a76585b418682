package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// server is a target the self-benchmark starts and measures.
type server struct {
	name string // as the report names it
	base string // http://127.0.0.1:PORT
	c    *child
}

// nginxConf is nginx with one worker answering every request 200 from
// its configuration: the fastest server a generator can meet here.
const nginxConf = `# lbbench selftest: one nginx worker answering 200
worker_processes 1;
daemon off;
master_process on;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;
events { worker_connections 16384; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    client_body_temp_path %[1]s/tmp-body;
    proxy_temp_path %[1]s/tmp-proxy;
    fastcgi_temp_path %[1]s/tmp-fastcgi;
    uwsgi_temp_path %[1]s/tmp-uwsgi;
    scgi_temp_path %[1]s/tmp-scgi;
    server {
        listen 127.0.0.1:%[2]d;
        location / { return 200 "ok\n"; }
    }
}
`

// startNginx starts nginx (the binary at exe) with nginxConf in a
// directory of its own under dir.
func startNginx(ctx context.Context, exe, dir string) (*server, error) {
	d := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(d, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, d, port), 0o644); err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	c, err := startChild("nginx", filepath.Join(dir, "nginx.log"), exe, "-p", d, "-c", conf, "-e", filepath.Join(d, "nginx-error.log"))
	if err != nil {
		return nil, err
	}
	s := &server{name: "nginx", base: "http://127.0.0.1:" + strconv.Itoa(port), c: c}
	if err := waitOK(ctx, c, s.base+"/"); err != nil {
		c.stop()
		return nil, err
	}
	return s, nil
}

// startBuiltin starts one built-in worker ("lbbench serve --workers 1")
// that serves up to 64 requests at once, as a server with a sleep for
// service would be set up to keep pace with the rates measured here.
func startBuiltin(ctx context.Context, lbbench, dir string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	admin, err := freePort()
	if err != nil {
		return nil, err
	}
	c, err := startChild("lbbench serve", filepath.Join(dir, "serve.log"), lbbench, "serve", "--workers", "1", "--concurrency", "64",
		"--listen", "ports", "--port", strconv.Itoa(port), "--admin", "127.0.0.1:"+strconv.Itoa(admin))
	if err != nil {
		return nil, err
	}
	s := &server{name: "built-in worker", base: "http://127.0.0.1:" + strconv.Itoa(port), c: c}
	if err := waitOK(ctx, c, "http://127.0.0.1:"+strconv.Itoa(admin)+"/healthz"); err != nil {
		c.stop()
		return nil, err
	}
	return s, nil
}
