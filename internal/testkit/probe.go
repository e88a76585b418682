package testkit

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// WorkerHeader is the response header in which lbbench's worker names
// itself (its index).
const WorkerHeader = "X-Worker"

// ProbeTimeout bounds one probe: a safety net, not a timing assertion.
const ProbeTimeout = 20 * time.Second

// Probe sends GET path on a fresh connection dialled to addr over network
// ("tcp" or "unix") and returns the status and the WorkerHeader, the body
// read and discarded.
func Probe(network, addr, path string) (status int, worker string, err error) {
	c := &http.Client{Timeout: ProbeTimeout, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	resp, err := c.Get("http://lbbench" + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get(WorkerHeader), nil
}

// Worker sends GET rawURL (http://host:port/path) on a fresh connection and
// returns the status and the WorkerHeader; a request that gets no answer
// fails the test.
func Worker(t testing.TB, rawURL string) (status int, worker string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	status, worker, err = Probe("tcp", u.Host, u.RequestURI())
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	return status, worker
}

// ServedBy is Worker for a request that must succeed: any status but 200
// fails the test.
func ServedBy(t testing.TB, rawURL string) string {
	t.Helper()
	status, worker := Worker(t, rawURL)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d", rawURL, status)
	}
	return worker
}

// Response is what Fetch read of one response.
type Response struct {
	Status int
	// Worker is the WorkerHeader, "" when there is none.
	Worker string
	Body   string
}

// Fetch sends GET rawURL with c, the test's own client (keep-alive
// connections, a dialler of its own), and reads the whole response. An
// error reading the body is returned with what was read.
func Fetch(c *http.Client, rawURL string) (Response, error) {
	resp, err := c.Get(rawURL)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Worker: resp.Header.Get(WorkerHeader), Body: string(body)}, err
}
