package worker_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/worker"
)

// socketFD makes a listening socket of the given network ("tcp" or
// "unix") and returns a descriptor of it for ListenFD, and its address.
func socketFD(t *testing.T, network string) (int, string) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "w.sock")
		if len(addr) > 100 {
			dir, err := os.MkdirTemp("", "lbb-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			addr = filepath.Join(dir, "w.sock")
		}
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fd, ln.Addr().String()
}

func TestListenFD(t *testing.T) {
	t.Parallel()
	for _, network := range []string{"tcp", "unix"} {
		for _, accept := range worker.AcceptStrategies() {
			t.Run(network+"/"+accept, func(t *testing.T) {
				t.Parallel() // each its own socket and worker
				fd, addr := socketFD(t, network)
				ln, err := worker.ListenFD(fd, accept)
				if err != nil {
					t.Fatal(err)
				}
				if ln.Addr().String() != addr {
					t.Errorf("Addr() = %s, want %s", ln.Addr(), addr)
				}
				w, err := worker.New(worker.Config{Concurrency: 2})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				served := make(chan error, 1)
				go func() { served <- w.Serve(ctx, ln, nil) }()
				client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
					DisableKeepAlives: true,
					DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
						var d net.Dialer
						return d.DialContext(ctx, network, addr)
					},
				}}
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for range 5 {
							got, err := testkit.Fetch(client, "http://w/work?ms=1")
							if err != nil || got.Status != 200 {
								t.Errorf("GET = %+v, %v", got, err)
							}
						}
					})
				}
				wg.Wait()
				if st := w.Stats(); st.Connections != 20 || st.Requests != 20 {
					t.Errorf("stats %+v, want 20 connections and requests", st)
				}
				// Serve stops within a few accept wake-ups, not at the
				// drain timeout.
				begin := time.Now()
				cancel()
				select {
				case err := <-served:
					if err != nil {
						t.Errorf("Serve = %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Serve did not return 10 s after its context was cancelled")
				}
				t.Logf("stopped in %v", time.Since(begin))
				if c, err := net.Dial(network, addr); err == nil {
					c.Close()
					t.Error("the socket still accepts after Serve returned")
				}
			})
		}
	}
}

func TestListenFDBad(t *testing.T) {
	fd, _ := socketFD(t, "tcp")
	if _, err := worker.ListenFD(fd, "fifo"); err == nil {
		t.Error("unknown strategy accepted")
	}
	// ListenFD closed fd on error.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("fd %d still open after a failed ListenFD: %v", fd, err)
	}
	for _, accept := range worker.AcceptStrategies() {
		f, err := os.CreateTemp(t.TempDir(), "x")
		if err != nil {
			t.Fatal(err)
		}
		fd, err := syscall.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := worker.ListenFD(fd, accept); err == nil {
			t.Errorf("%s: a regular file accepted as a listener", accept)
		}
	}
}

// TestBlockingCloseSparesPeers: closing one of two blocking listeners on a
// shared socket (one worker draining) leaves the other accepting.
func TestBlockingCloseSparesPeers(t *testing.T) {
	for _, accept := range []string{worker.AcceptBlocking, worker.AcceptEpollExclusive} {
		t.Run(accept, func(t *testing.T) {
			fd, addr := socketFD(t, "tcp")
			fd2, err := syscall.Dup(fd)
			if err != nil {
				t.Fatal(err)
			}
			// probe shows whether the shared socket listens.
			probe, err := syscall.Dup(fd)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(probe)
			a, err := worker.ListenFD(fd, accept)
			if err != nil {
				t.Fatal(err)
			}
			b, err := worker.ListenFD(fd2, accept)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			accepted := make(chan error, 1)
			go func() {
				// Blocked in accept before a closes, then a connection.
				c, err := b.Accept()
				if err == nil {
					c.Close()
				}
				accepted <- err
			}()
			testkit.WaitFor(t, "the other listener to block in accept", func() bool { return inRawAccept("TestBlockingCloseSparesPeers") })
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			// A blocking listener's Close stopped the socket listening;
			// the other one makes it listen again.
			testkit.WaitFor(t, "the socket to listen again", func() bool {
				on, err := unix.GetsockoptInt(probe, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
				return err == nil && on == 1
			})
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatalf("dial after one listener closed: %v", err)
			}
			defer c.Close()
			select {
			case err := <-accepted:
				if err != nil {
					t.Fatalf("the other listener: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the other listener accepted nothing")
			}
		})
	}
}

// inRawAccept reports whether a goroutine started by the test function
// named test (or a closure in it) is in a system call of a raw listener's
// Accept: accept4, or epoll_wait. A goroutine's status says "syscall" from
// just before the call.
func inRawAccept(test string) bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	creator := "created by github.com/lbbench/lbbench/targets/worker_test." + test + "."
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[syscall") && strings.Contains(g, "(*rawListener).Accept(") && strings.Contains(g, creator) {
			return true
		}
	}
	return false
}
