package engines

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
)

// backend is an HTTP server standing in for one worker: it answers with
// its index in X-Worker and counts requests and connections.
type backend struct {
	addr  string // upstream form: host:port or unix:/path
	reqs  atomic.Int64
	conns atomic.Int64
}

// startBackends starts n backends on loopback TCP ports or, with unix, on
// Unix sockets in a short temporary directory.
func startBackends(t *testing.T, n int, unix bool) []*backend {
	t.Helper()
	var sockDir string
	if unix {
		// t.TempDir can be longer than a socket address holds.
		d, err := os.MkdirTemp("", "lbe")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		sockDir = d
	}
	bs := make([]*backend, n)
	for i := range bs {
		b := &backend{}
		var ln net.Listener
		var err error
		if unix {
			path := filepath.Join(sockDir, fmt.Sprintf("w%d.sock", i))
			ln, err = net.Listen("unix", path)
			b.addr = "unix:" + path
		} else {
			ln, err = net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				b.addr = ln.Addr().String()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b.reqs.Add(1)
				w.Header().Set("X-Worker", strconv.Itoa(i))
				io.WriteString(w, "ok\n")
			}),
			ConnState: func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					b.conns.Add(1)
				}
			},
		}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		bs[i] = b
	}
	return bs
}

// startEngine renders spec, checks it with the engine and runs the engine
// in its own process group until the test ends. It returns the Config with
// placeholders replaced.
func startEngine(t *testing.T, spec Spec) Config {
	t.Helper()
	bin := findOrFail(t, spec.Engine)
	spec.StubStatus, spec.User = bin.StubStatus, currentUser()
	ports := testkit.FreePorts(t, 2)
	spec.Listen, spec.Admin = "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	cfg, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir, check, run := materialize(t, cfg)
	c := exec.Command(bin.Path, check...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	cmd := exec.Command(bin.Path, run...)
	cmd.Dir = dir
	out, err := os.Create(filepath.Join(dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop on SIGTERM", spec.Engine)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		out.Close()
	})
	testkit.WaitFor(t, fmt.Sprintf("%s: %s to be healthy", spec.Engine, cfg.Health), func() bool {
		if resp, err := http.Get(cfg.Health); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("%s exited early:\n%s", spec.Engine, b)
		default:
		}
		return false
	})
	sub := func(s string) string { return strings.ReplaceAll(s, DirPlaceholder, dir) }
	cfg.Stats = sub(cfg.Stats)
	cfg.Args = run
	cfg.CheckArgs = check
	return cfg
}

// TestRunningEngineStats runs each engine round robin in front of three
// backends, sends requests one at a time over one client connection, and
// checks the engine's own counters against what the backends saw.
func TestRunningEngineStats(t *testing.T) {
	const n, perBackend = 3, 10
	for _, e := range Names() {
		for _, ka := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s-keepalive=%v", e, ka), func(t *testing.T) {
				bs := startBackends(t, n, false)
				var ups []string
				for _, b := range bs {
					ups = append(ups, b.addr)
				}
				cfg := startEngine(t, Spec{Engine: e, Policy: "round_robin", UpstreamKeepAlive: ka, Upstreams: ups})
				listen := listenOf(t, cfg)
				client := &http.Client{Timeout: 10 * time.Second}
				for range n * perBackend {
					resp, err := client.Get("http://" + listen + "/work")
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				var conns int64
				for i, b := range bs {
					if got := b.reqs.Load(); got != perBackend {
						t.Errorf("backend %d got %d requests, want %d (round robin)", i, got, perBackend)
					}
					conns += b.conns.Load()
				}
				if ka && conns > n*2 {
					t.Errorf("keep-alive on: %d upstream connections for %d requests", conns, n*perBackend)
				}
				if !ka && conns != n*perBackend {
					t.Errorf("keep-alive off: %d upstream connections for %d requests", conns, n*perBackend)
				}

				ctx := context.Background()
				switch e {
				case Nginx:
					st, err := ReadNginxStatus(ctx, cfg.Stats)
					if err != nil {
						t.Fatal(err)
					}
					// Proxied requests, the health checks and this request.
					if st.Requests < n*perBackend+2 || st.Accepts < 2 || st.Writing < 1 {
						t.Errorf("stub_status %+v after %d requests", st, n*perBackend)
					}
				case HAProxy:
					rows, err := ReadHAProxyStats(ctx, cfg.Stats)
					if err != nil {
						t.Fatal(err)
					}
					if *update && ka {
						saveShowStat(t, cfg.Stats)
					}
					var connects, reuses uint64
					seen := 0
					for _, r := range rows {
						if r.Proxy != "workers" || r.Name == "BACKEND" {
							continue
						}
						i, err := strconv.Atoi(strings.TrimPrefix(r.Name, "w"))
						if err != nil || r.Name != HAProxyServerName(i) || i >= n {
							t.Fatalf("unexpected server row %+v", r)
						}
						seen++
						if r.Sessions != perBackend || r.Selected != perBackend || r.Responses2xx != perBackend {
							t.Errorf("server %s: %+v, want %d requests", r.Name, r, perBackend)
						}
						connects += r.Connects
						reuses += r.Reuses
					}
					if seen != n {
						t.Errorf("%d server rows, want %d: %+v", seen, n, rows)
					}
					if int64(connects) != conns {
						t.Errorf("HAProxy counts %d connects, backends accepted %d", connects, conns)
					}
					if ka && reuses < n*perBackend-n*2 || !ka && reuses != 0 {
						t.Errorf("keep-alive %v: %d reuses of %d requests", ka, reuses, n*perBackend)
					}
				}
			})
		}
	}
}

// saveShowStat writes HAProxy's raw "show stat" answer to the fixture that
// TestParseHAProxyCSV and FuzzParseHAProxyCSV read.
func saveShowStat(t *testing.T, sock string) {
	t.Helper()
	c, err := dialUnix(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "show stat\n")
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "show-stat.csv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// listenOf reads the engine's listen address back from its configuration.
func listenOf(t *testing.T, cfg Config) string {
	t.Helper()
	for _, line := range strings.Split(cfg.Files[0].Content, "\n") {
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
		if len(f) == 2 && (f[0] == "listen" || f[0] == "bind") {
			return f[1] // the first one is the proxy's
		}
	}
	t.Fatal("no listen address in the configuration")
	return ""
}

func TestParseNginxStatus(t *testing.T) {
	good := "Active connections: 291 \nserver accepts handled requests\n 16630948 16630948 31070465 \nReading: 6 Writing: 179 Waiting: 106 \n"
	st, err := ParseNginxStatus(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := NginxStatus{Active: 291, Accepts: 16630948, Handled: 16630948, Requests: 31070465, Reading: 6, Writing: 179, Waiting: 106}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
	for name, bad := range map[string]string{
		"empty":     "",
		"truncated": "Active connections: 1\nserver accepts handled requests\n 1 1 1\n",
		"label":     strings.Replace(good, "Writing", "Sending", 1),
		"number":    strings.Replace(good, "31070465", "3x", 1),
		"negative":  strings.Replace(good, "Reading: 6", "Reading: -6", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if st, err := ParseNginxStatus(strings.NewReader(bad)); err == nil {
				t.Errorf("parsed %q as %+v", bad, st)
			}
		})
	}
}

func TestParseHAProxyCSV(t *testing.T) {
	// Captured from HAProxy 2.6 ("show stat") after 30 requests.
	data, err := os.ReadFile(filepath.Join("testdata", "show-stat.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseHAProxyCSV(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Proxy+"/"+r.Name)
	}
	if got := strings.Join(names, " "); got != "proxy/FRONTEND admin/FRONTEND workers/w0 workers/w1 workers/w2 workers/BACKEND" {
		t.Fatalf("rows %s", got)
	}
	w0, be := rows[2], rows[5]
	if w0.Sessions != 10 || w0.Selected != 10 || w0.Responses2xx != 10 || w0.Connects != 1 || w0.Reuses != 9 || w0.Status != "no check" {
		t.Errorf("w0: %+v", w0)
	}
	if be.Requests != 30 || be.Sessions != 30 {
		t.Errorf("backend: %+v", be)
	}
	// Columns are found by name, not position.
	reordered := "# svname,stot,pxname,\nw0,7,workers,\n"
	rows, err = ParseHAProxyCSV(strings.NewReader(reordered))
	if err != nil || len(rows) != 1 || rows[0].Proxy != "workers" || rows[0].Sessions != 7 {
		t.Errorf("reordered: %+v, %v", rows, err)
	}
	for name, bad := range map[string]string{
		"empty":      "",
		"no header":  "workers,w0,1\n",
		"no pxname":  "# svname,stot\nw0,1\n",
		"bad number": "# pxname,svname,stot\nworkers,w0,x\n",
		"no name":    "# pxname,svname,stot\nworkers,,1\n",
		"bad quote":  "# pxname,svname\n\"workers,w0\n",
	} {
		t.Run(name, func(t *testing.T) {
			if rows, err := ParseHAProxyCSV(strings.NewReader(bad)); err == nil {
				t.Errorf("parsed %q as %+v", bad, rows)
			}
		})
	}
}

func FuzzParseNginxStatus(f *testing.F) {
	f.Add("Active connections: 1 \nserver accepts handled requests\n 2 2 3 \nReading: 0 Writing: 1 Waiting: 0 \n")
	f.Add("Active connections: -1")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseNginxStatus(strings.NewReader(s))
		if err == nil && (st.Active < 0 || st.Reading < 0 || st.Writing < 0 || st.Waiting < 0) {
			t.Errorf("negative gauge accepted: %+v", st)
		}
	})
}

func FuzzParseHAProxyCSV(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "show-stat.csv")); err == nil {
		f.Add(string(data))
	}
	f.Add("# pxname,svname,stot\nworkers,w0,1\n")
	f.Add("# pxname,svname\n\"a\"\"b\",c\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ParseHAProxyCSV(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Proxy == "" || r.Name == "" {
				t.Errorf("row without names accepted: %+v", r)
			}
		}
	})
}

// TestDialUnixLongPath reaches a socket whose path is longer than a socket
// address holds, as HAProxy's stats socket in a deep working directory is.
func TestDialUnixLongPath(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(deep, "s.sock")
	if len(path) <= maxSockPath {
		t.Fatalf("path %d bytes is not too long", len(path))
	}
	// Bind it the way HAProxy does, relative to its directory: through
	// /proc/self/fd, since a test cannot change directory per goroutine.
	d, err := os.Open(deep)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/s.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			io.WriteString(c, "hello")
			c.Close()
		}
	}()
	c, err := dialUnix(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	if string(b) != "hello" {
		t.Errorf("read %q", b)
	}
}
