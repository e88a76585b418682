package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/lbbench/lbbench/results"
)

// ErrExited is WaitHTTP's error when the process it waited for exited.
var ErrExited = errors.New("exited before it was ready")

// WaitHTTP polls url every 20 ms until it answers 200. It gives up when
// timeout passes, ctx ends, or exited (if not nil) is closed (ErrExited).
// Both drivers wait for readiness with it: the local one from here, the
// docker one through "lbbench probe" inside the run's network.
func WaitHTTP(ctx context.Context, url string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err != nil {
			last = err
		} else {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		select {
		case <-exited:
			return ErrExited
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("no 200 from %s within %s (last: %v)", url, timeout, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Fetch returns the body of a GET of url, which must answer 200 within
// timeout. On another status the error is an *HTTPStatusError that holds
// the body (a workers' supervisor answers 503 with the dead worker named).
func Fetch(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, &HTTPStatusError{URL: url, Status: resp.Status, Body: body}
	}
	return io.ReadAll(resp.Body)
}

// HTTPStatusError is Fetch's error for an answer other than 200.
type HTTPStatusError struct {
	URL, Status string
	Body        []byte // the answer's body, at most 1 MiB
}

func (e *HTTPStatusError) Error() string { return "GET " + e.URL + ": " + e.Status }

// StatsTimeout bounds a driver's wait for one process's stats. A
// supervisor asks its workers within prefork.StatsTimeout, well inside it.
const StatsTimeout = 5 * time.Second

// TimedOut reports whether err says that a process did not answer in
// time (a deadline, or a network timeout), as opposed to refusing.
func TimedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Unresponsive is the failure of a process that is alive but gave no
// answer within StatsTimeout, with how it looks (from /proc, or the
// container's state), after which it was killed.
func Unresponsive(process, looks string) results.Failure {
	return results.Failure{Process: process, Exit: "stopped answering: no stats within " + StatsTimeout.String() + "; it was " + looks + "; killed", Alive: true}
}
