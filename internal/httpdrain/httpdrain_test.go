package httpdrain

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
)

// serve starts srv on a loopback listener and returns its address.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// states records what a server's own ConnState hook saw.
type states struct {
	mu  sync.Mutex
	saw []http.ConnState
}

func (s *states) hook(_ net.Conn, st http.ConnState) {
	s.mu.Lock()
	s.saw = append(s.saw, st)
	s.mu.Unlock()
}

func (s *states) wait(t *testing.T, n int) []http.ConnState {
	t.Helper()
	var saw []http.ConnState
	testkit.WaitFor(t, fmt.Sprintf("the server's hook to see %d states", n), func() bool {
		s.mu.Lock()
		saw = append([]http.ConnState(nil), s.saw...)
		s.mu.Unlock()
		return len(saw) >= n
	})
	return saw
}

// A connection that never sends a byte is closed by the drain: Shutdown
// returns nil well before the 5 s http.Server alone waits for it (its
// context allows 4 s), the client sees its connection closed, and the
// server's own hook still sees every state.
func TestShutdownClosesSilentConnection(t *testing.T) {
	var st states
	srv := CloseFreshOnShutdown(&http.Server{
		Handler:   http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ConnState: st.hook,
	})
	addr := serve(t, srv)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st.wait(t, 1) // accepted: StateNew

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (it waited for the silent connection)", err)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("client read %d bytes, %v after the drain; want EOF", n, err)
	}
	if saw := st.wait(t, 2); saw[0] != http.StateNew || saw[len(saw)-1] != http.StateClosed {
		t.Errorf("the server's own hook saw %v, want new ... closed", saw)
	}
}

// The control: without CloseFreshOnShutdown, the same silent connection
// holds Shutdown until its context ends. If this ever stops failing,
// net/http changed and the package is no longer needed.
func TestPlainShutdownWaitsForSilentConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 1 s")
	}
	var st states
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ConnState: st.hook}
	addr := serve(t, srv)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st.wait(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err == nil {
		t.Fatal("plain http.Server.Shutdown did not wait for a silent connection: net/http changed; httpdrain may go")
	}
}

// A connection with a request in progress is still waited for: a handler
// that runs on after Shutdown starts finishes and its response reaches
// the client; an idle keep-alive connection is closed as before.
func TestShutdownWaitsForRequestInProgress(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := CloseFreshOnShutdown(&http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "done")
	})})
	addr := serve(t, srv)

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	idleR := bufio.NewReader(idle)
	if resp, err := http.ReadResponse(idleR, nil); err != nil {
		t.Fatal(err)
	} else {
		io.ReadAll(resp.Body)
	}

	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()

	idle.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idleR.ReadByte(); err != io.EOF {
		t.Errorf("idle keep-alive connection after Shutdown: %v, want EOF", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a request in progress", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the request in progress lost its response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "done" {
		t.Errorf("response %d %q, want 200 done", resp.StatusCode, body)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
