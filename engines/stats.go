package engines

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stats are a proxy engine's own counters at the end of a run. They cover
// the engine's whole life, warm-up and the driver's health checks included;
// per-worker request counts come from the workers themselves.
type Stats struct {
	// Engine is Nginx or HAProxy.
	Engine string `json:"engine"`
	// Nginx is nginx's stub_status page.
	Nginx *NginxStatus `json:"nginx,omitempty"`
	// HAProxy holds the rows of HAProxy's "show stat".
	HAProxy []HAProxyRow `json:"haproxy,omitempty"`
}

// NginxStatus is nginx's stub_status page.
type NginxStatus struct {
	// Active is the number of open client connections, idle ones included.
	Active int64 `json:"active"`
	// Accepts and Handled count accepted and handled client connections;
	// they differ only when nginx ran out of connections.
	Accepts uint64 `json:"accepts"`
	Handled uint64 `json:"handled"`
	// Requests counts client requests.
	Requests uint64 `json:"requests"`
	// Reading, Writing and Waiting split Active: reading a request,
	// writing a response (or waiting for the upstream), idle.
	Reading int64 `json:"reading"`
	Writing int64 `json:"writing"`
	Waiting int64 `json:"waiting"`
}

// HAProxyRow is one row of HAProxy's "show stat": a frontend, a backend or
// a server. Counters the row's kind does not have are zero.
type HAProxyRow struct {
	// Proxy is the frontend's or backend's name (pxname): "proxy", "admin"
	// or "workers" in a rendered configuration.
	Proxy string `json:"proxy"`
	// Name is "FRONTEND", "BACKEND" or a server's name (svname), wI for
	// upstream I.
	Name string `json:"name"`
	// Status is "OPEN", "UP", "no check", ... (status).
	Status string `json:"status,omitempty"`
	// Sessions counts sessions, which for a server means requests sent to
	// it (stot); MaxSessions is the most at once (smax).
	Sessions    uint64 `json:"sessions"`
	MaxSessions uint64 `json:"max_sessions"`
	// Selected counts the times the balancer chose this server (lbtot).
	Selected uint64 `json:"selected,omitempty"`
	// Requests counts HTTP requests (req_tot).
	Requests uint64 `json:"requests,omitempty"`
	// Connects counts upstream connection attempts and Reuses requests sent
	// on an idle connection instead (connect, reuse).
	Connects uint64 `json:"connects,omitempty"`
	Reuses   uint64 `json:"reuses,omitempty"`
	// Responses2xx and Responses5xx count responses by class (hrsp_2xx,
	// hrsp_5xx).
	Responses2xx uint64 `json:"responses_2xx,omitempty"`
	Responses5xx uint64 `json:"responses_5xx,omitempty"`
	// ConnErrors and RespErrors count failed upstream connections and
	// responses (econ, eresp).
	ConnErrors uint64 `json:"conn_errors,omitempty"`
	RespErrors uint64 `json:"resp_errors,omitempty"`
}

// maxStats bounds what is read from an engine's stats source.
const maxStats = 4 << 20

// ParseNginxStatus parses nginx's stub_status page:
//
//	Active connections: 291
//	server accepts handled requests
//	 16630948 16630948 31070465
//	Reading: 6 Writing: 179 Waiting: 106
func ParseNginxStatus(r io.Reader) (NginxStatus, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStats))
	if err != nil {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: %w", err)
	}
	f := strings.Fields(string(b))
	labels := map[int]string{0: "Active", 1: "connections:", 3: "server", 4: "accepts", 5: "handled", 6: "requests", 10: "Reading:", 12: "Writing:", 14: "Waiting:"}
	if len(f) != 16 {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: want 16 fields, got %d in %q", len(f), b)
	}
	for i, l := range labels {
		if f[i] != l {
			return NginxStatus{}, fmt.Errorf("engines: stub_status: field %d is %q, want %q", i, f[i], l)
		}
	}
	var s NginxStatus
	var errs []error
	u := func(i int) uint64 {
		v, err := strconv.ParseUint(f[i], 10, 64)
		errs = append(errs, err)
		return v
	}
	n := func(i int) int64 {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err == nil && v < 0 {
			err = fmt.Errorf("negative count %d", v)
		}
		errs = append(errs, err)
		return v
	}
	s.Active = n(2)
	s.Accepts, s.Handled, s.Requests = u(7), u(8), u(9)
	s.Reading, s.Writing, s.Waiting = n(11), n(13), n(15)
	if err := errors.Join(errs...); err != nil {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: %w", err)
	}
	return s, nil
}

// ParseHAProxyCSV parses the CSV of HAProxy's "show stat": a header line
// "# pxname,svname,..." naming the columns, then one row per frontend,
// backend and server. Columns are found by name, so their order and any
// columns added by other versions do not matter; pxname and svname are
// required.
func ParseHAProxyCSV(r io.Reader) ([]HAProxyRow, error) {
	br := bufio.NewReader(io.LimitReader(r, maxStats))
	header, err := br.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && header != "") {
		return nil, fmt.Errorf("engines: show stat: no header line: %w", err)
	}
	header, ok := strings.CutPrefix(header, "# ")
	if !ok {
		return nil, fmt.Errorf("engines: show stat: header %q does not start with \"# \"", strings.TrimSpace(header))
	}
	col := map[string]int{}
	for i, name := range strings.Split(strings.TrimRight(header, "\r\n"), ",") {
		if _, dup := col[name]; !dup && name != "" {
			col[name] = i
		}
	}
	if _, ok := col["pxname"]; !ok {
		return nil, errors.New("engines: show stat: no pxname column")
	}
	if _, ok := col["svname"]; !ok {
		return nil, errors.New("engines: show stat: no svname column")
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var rows []HAProxyRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("engines: show stat: %w", err)
		}
		field := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		var errs []error
		num := func(name string) uint64 {
			s := field(name)
			if s == "" {
				return 0
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			return v
		}
		row := HAProxyRow{
			Proxy:        field("pxname"),
			Name:         field("svname"),
			Status:       field("status"),
			Sessions:     num("stot"),
			MaxSessions:  num("smax"),
			Selected:     num("lbtot"),
			Requests:     num("req_tot"),
			Connects:     num("connect"),
			Reuses:       num("reuse"),
			Responses2xx: num("hrsp_2xx"),
			Responses5xx: num("hrsp_5xx"),
			ConnErrors:   num("econ"),
			RespErrors:   num("eresp"),
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("engines: show stat: row %d: %w", line, err)
		}
		if row.Proxy == "" || row.Name == "" {
			return nil, fmt.Errorf("engines: show stat: row %d has no pxname or svname", line)
		}
		rows = append(rows, row)
	}
}

// ReadNginxStatus fetches and parses the stub_status page at url.
func ReadNginxStatus(ctx context.Context, url string) (NginxStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return NginxStatus{}, fmt.Errorf("engines: stub_status: GET %s: %s", url, resp.Status)
	}
	return ParseNginxStatus(resp.Body)
}

// ReadHAProxyStats sends "show stat" to HAProxy's stats socket at path and
// parses the answer.
func ReadHAProxyStats(ctx context.Context, path string) ([]HAProxyRow, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := dialUnix(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("engines: stats socket: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// Without "prompt", HAProxy answers one command and closes.
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, fmt.Errorf("engines: stats socket: %w", err)
	}
	return ParseHAProxyCSV(conn)
}

// maxSockPath is the longest path a Unix socket address holds (sun_path is
// 108 bytes with the terminating NUL).
const maxSockPath = 107

// dialUnix connects to the Unix socket at path. A path too long for a
// socket address is reached through /proc/self/fd and a descriptor of its
// directory, which keeps the address short.
func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	if len(path) <= maxSockPath {
		return d.DialContext(ctx, "unix", path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	short := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	if len(short) > maxSockPath {
		return nil, fmt.Errorf("socket name %q is too long", filepath.Base(path))
	}
	return d.DialContext(ctx, "unix", short)
}
