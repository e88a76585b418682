package prefork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

const (
	healthRetry   = 20 * time.Millisecond // between health checks during Start
	healthTimeout = 2 * time.Second       // for one periodic health check
)

// waitHealthy waits until every child is healthy, one after the other.
// Connections to a child that has not started serving yet wait in its
// socket's backlog (or are refused, for an Exec that binds its own).
func (s *Supervisor) waitHealthy(ctx context.Context) error {
	for _, sl := range s.slots {
		p := sl.cur.Load()
		for {
			err := s.get(ctx, sl, p, sl.health, nil)
			if err == nil {
				break
			}
			if xerr := p.exitErr(sl.index); xerr != nil {
				return fmt.Errorf("prefork: worker %d (pid %d) exited before it was healthy: %v", sl.index, p.pid, p.cmd.ProcessState)
			}
			select {
			case <-p.done:
				return fmt.Errorf("prefork: worker %d (pid %d) exited before it was healthy: %v", sl.index, p.pid, p.cmd.ProcessState)
			case <-ctx.Done():
				return fmt.Errorf("prefork: worker %d (pid %d) not healthy: %w", sl.index, p.pid, err)
			case <-time.After(healthRetry):
			}
		}
	}
	return nil
}

// checkHealth probes every running worker each HealthInterval until Stop,
// and logs each change between healthy and unhealthy.
func (s *Supervisor) checkHealth() {
	t := time.NewTicker(s.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopc:
			return
		case <-t.C:
		}
		for _, sl := range s.slots {
			p := sl.cur.Load()
			if p.exitErr(sl.index) != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), min(healthTimeout, s.cfg.HealthInterval))
			err := s.get(ctx, sl, p, sl.health, nil)
			cancel()
			if s.phase.Load() != phaseRunning || p.exitErr(sl.index) != nil || sl.cur.Load() != p {
				continue // it exited meanwhile: the reaper reports that
			}
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			sl.mu.Lock()
			changed := sl.healthErr != msg || (!sl.healthKnown && msg != "")
			sl.healthErr, sl.healthKnown = msg, true
			sl.mu.Unlock()
			switch {
			case changed && err != nil:
				fmt.Fprintf(s.stderr, "prefork: worker %d (pid %d) failed its health check: %v\n", sl.index, p.pid, err)
			case changed:
				fmt.Fprintf(s.stderr, "prefork: worker %d (pid %d) is healthy again\n", sl.index, p.pid)
			}
		}
	}
}

// Healthy returns nil if every worker is healthy now (answers its admin
// /healthz, or for an Exec the probe on its endpoint), and otherwise an
// error naming each worker that is not.
func (s *Supervisor) Healthy(ctx context.Context) error {
	var errs []error
	for _, sl := range s.slots {
		errs = append(errs, s.ask(ctx, sl, sl.health, nil))
	}
	return errors.Join(errs...)
}

// ask is get with errors that name the worker.
func (s *Supervisor) ask(ctx context.Context, sl *slot, url string, v any) error {
	p := sl.cur.Load()
	if err := p.exitErr(sl.index); err != nil {
		return err
	}
	err := s.get(ctx, sl, p, url, v)
	if err == nil {
		return nil
	}
	if xerr := p.exitErr(sl.index); xerr != nil {
		return xerr
	}
	return fmt.Errorf("prefork: worker %d (pid %d): %w", sl.index, p.pid, err)
}

// get fetches url of process p with sl's client and, unless v is nil,
// decodes the JSON body into v. The request ends when p exits: one waiting
// in the backlog of a socket the supervisor keeps would wait forever.
func (s *Supervisor) get(ctx context.Context, sl *slot, p *proc, url string, v any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.exitCtx, cancel)()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := sl.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// unixClient is an HTTP client whose every request goes to the Unix socket
// at path.
func unixClient(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
	}}
}
