package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/prefork"
)

// waitLong is a WaitHTTP timeout no test below should come near: a call
// that returns before waitLong/2 did not wait it out.
const waitLong = time.Minute

// TestWaitHTTPReady checks that WaitHTTP keeps polling through non-200
// answers and returns nil at the first 200.
func TestWaitHTTPReady(t *testing.T) {
	const unready = 3
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= unready {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)

	if err := WaitHTTP(context.Background(), srv.URL+"/healthz", waitLong, nil); err != nil {
		t.Fatalf("WaitHTTP: %v", err)
	}
	if n := calls.Load(); n != unready+1 {
		t.Errorf("%d probes, want %d (%d answers 503, then a 200)", n, unready+1, unready)
	}
}

// closedURL returns the URL of a port on the loopback interface that was
// just free and has nothing listening.
func closedURL(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("http://127.0.0.1:%d/healthz", testkit.FreePort(t))
}

// TestWaitHTTPGivesUp checks that WaitHTTP stops polling a URL that never
// answers 200 when its timeout passes, when ctx's deadline passes, when
// ctx is cancelled and when the process exits, and that it returns
// promptly, well before waitLong.
func TestWaitHTTPGivesUp(t *testing.T) {
	exited := make(chan struct{})
	close(exited)
	tests := []struct {
		name    string
		ctx     func(t *testing.T) context.Context
		timeout time.Duration
		exited  <-chan struct{}
		check   func(t *testing.T, url string, err error)
	}{
		{
			name:    "timeout passes",
			ctx:     func(*testing.T) context.Context { return context.Background() },
			timeout: 100 * time.Millisecond,
			check:   mentionsURL,
		},
		{
			name: "ctx deadline passes",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			timeout: waitLong,
			check:   mentionsURL,
		},
		{
			name: "ctx cancelled",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			timeout: waitLong,
			check: func(t *testing.T, _ string, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, want context.Canceled", err)
				}
			},
		},
		{
			name:    "process exited",
			ctx:     func(*testing.T) context.Context { return context.Background() },
			timeout: waitLong,
			exited:  exited,
			check: func(t *testing.T, _ string, err error) {
				if !errors.Is(err, ErrExited) {
					t.Errorf("error %v, want ErrExited", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := closedURL(t)
			start := time.Now()
			err := WaitHTTP(tt.ctx(t), url, tt.timeout, tt.exited)
			if err == nil {
				t.Fatal("WaitHTTP returned nil for a port nothing listens on")
			}
			if took := time.Since(start); took > waitLong/2 {
				t.Errorf("WaitHTTP took %s to give up", took)
			}
			tt.check(t, url, err)
		})
	}
}

func mentionsURL(t *testing.T, url string, err error) {
	t.Helper()
	if !strings.Contains(err.Error(), url) {
		t.Errorf("error %q does not name %s", err, url)
	}
}

// TestWaitHTTPCancelWhilePolling cancels ctx while WaitHTTP polls a server
// that is not ready yet: it returns context.Canceled without waiting for
// its timeout.
func TestWaitHTTPCancelWhilePolling(t *testing.T) {
	probed := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			close(probed)
		}
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- WaitHTTP(ctx, srv.URL, waitLong, nil) }()
	<-probed
	cancel()
	start := time.Now()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > waitLong/2 {
		t.Errorf("WaitHTTP took %s to return after cancellation", took)
	}
}

// TestServeDrainsWithinTheStop: serve kills workers that have not drained
// before a driver, which gives it DefaultStopTimeout, kills serve.
func TestServeDrainsWithinTheStop(t *testing.T) {
	if prefork.DefaultServeStopTimeout >= DefaultStopTimeout {
		t.Errorf("serve drains for %s, the driver kills it after %s: a slow drain would be cut with serve in it", prefork.DefaultServeStopTimeout, DefaultStopTimeout)
	}
}
