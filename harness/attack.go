package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/internal/syncio"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// attack offers spec's load to entry, open loop, from this process, and
// returns what it recorded. Each of spec's streams (workloads.Spec.Streams:
// one, or one per named client) has its own schedule, class draws,
// connections and recorder. Warm-up requests go over the same connections
// and are discarded. If raw is not nil, one line per measured request is
// written to it. Each stream keeps at most spec.InFlightCap() requests
// outstanding (cappedPacer). On ctx cancellation it stops sending at once
// (even in the middle of a long wait for the next arrival), gives
// outstanding requests CancelGrace to end, then closes their connections
// (they count as errors), and returns ctx's error.
func attack(ctx context.Context, entry string, spec workloads.Spec, raw io.Writer) (*results.Measurement, error) {
	return attackWith(ctx, entry, spec, AttackOptions{Raw: raw})
}

// attackWith is attack with o's options (targets, TLS, vegeta results).
func attackWith(ctx context.Context, entry string, spec workloads.Spec, o AttackOptions) (*results.Measurement, error) {
	raw := o.Raw
	// The deterministic modes have no arrival process (closed.go).
	if (spec.Closed != nil || spec.Bursts != nil) && (len(o.Targets) > 0 || o.Results != nil || strings.HasPrefix(entry, "https:")) {
		return nil, fmt.Errorf("harness: literal targets, https and vegeta results need an open-loop arrival, not a closed-loop or burst-client workload")
	}
	switch {
	case spec.Closed != nil:
		return closedLoop(ctx, entry, spec)
	case spec.Bursts != nil:
		return bursts(ctx, entry, spec)
	}
	u, err := url.Parse(entry)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("harness: entry %q is not an http:// or https:// URL", entry)
	}
	sink := resultSink(o.Results)
	ss := spec.Streams()
	recs := make([]*recorder, len(ss))
	trs := make([]*clientTransport, len(ss))
	var rawW io.Writer
	var rawBuf *bufio.Writer
	if raw != nil {
		rawBuf = bufio.NewWriterSize(raw, 64<<10)
		rawBuf.WriteString(RawHeader)
		rawW = syncio.NewWriter(rawBuf) // streams share it, a line per Write
	}
	cpu0 := processCPU()
	live := startLive(ctx, spec) // live.go: nil (a no-op) unless WithLiveStats
	defer live.stop()
	var wg sync.WaitGroup
	attackDone := make(chan struct{})
	// Every targeter first: one that fails must not leave streams started
	// before it running.
	tgs := make([]*workloads.Targeter, len(ss))
	vtgs := make([]vegeta.Targeter, len(ss))
	for i, s := range ss {
		if len(o.Targets) > 0 {
			vtgs[i] = staticTargeter(o.Targets)
			continue
		}
		tg, err := workloads.NewTargeter(s.Spec, entry)
		if err != nil {
			return nil, err
		}
		tgs[i] = tg
		vtgs[i] = vegetaTargeter(tg)
	}
	pacers := make([]*cappedPacer, len(ss))
	for i, s := range ss {
		c := s.Spec.Clients
		tg := vtgs[i]
		pacer := workloads.NewPacer(s.Spec)
		capped := newCappedPacer(ctx, pacer, s.Spec.InFlightCap())
		pacers[i] = capped
		recs[i] = newRecorder(pacer, s.Spec, rawW)
		recs[i].sink = sink
		recs[i].literal = len(o.Targets) > 0
		if s.Name != "" {
			recs[i].forClient(s.Name, s.Share)
		}
		trs[i] = newClientTransport(hostPort(u), c.Connections, c.KeepAliveOn(), c.RequestsPerConn)
		trs[i].tls = tlsConfig(u, o.Insecure)
		recs[i].sentAt = trs[i].sentAt
		atk := vegeta.NewAttacker(
			vegeta.Client(&http.Client{
				Transport: trs[i],
				Timeout:   s.Spec.Timeout,
				CheckRedirect: func(*http.Request, []*http.Request) error {
					return http.ErrUseLastResponse
				},
			}),
			vegeta.Workers(uint64(min(c.Connections, capped.limit()))),
			// A few more workers than slots: a worker whose result was
			// just taken (freeing its slot) may not be back at vegeta's
			// tick channel yet when the next tick goes out.
			vegeta.MaxWorkers(uint64(capped.limit()+inFlightSlack)),
			// The body is never needed; vegeta would otherwise keep it.
			vegeta.MaxBody(0),
		)
		wg.Add(1)
		go func(rec *recorder) {
			defer wg.Done()
			results := atk.Attack(tg, capped, 0, "")
			stop := context.AfterFunc(ctx, func() { atk.Stop() })
			defer stop()
			for res := range results {
				capped.done()
				rec.add(res)
				live.observe(pacer, res)
			}
		}(recs[i])
	}
	// On cancellation, requests still outstanding get CancelGrace, then
	// their connections are closed: a stuck target must not hold Ctrl-C
	// for a whole request timeout.
	abort := context.AfterFunc(ctx, func() {
		t := time.NewTimer(CancelGrace)
		defer t.Stop()
		select {
		case <-t.C:
			for _, tr := range trs {
				tr.abort()
			}
		case <-attackDone:
		}
	})
	wg.Wait()
	close(attackDone)
	abort()
	if rawBuf != nil {
		if err := rawBuf.Flush(); err != nil {
			return nil, fmt.Errorf("harness: raw results: %w", err)
		}
	}

	var total results.Measurement
	for i, rec := range recs {
		trs[i].CloseIdleConnections()
		rec.cut = ctx.Err() != nil
		m, err := rec.finish()
		if err != nil {
			return nil, err
		}
		c := ss[i].Spec.Clients
		m.Generator = results.Generator{Streams: 1, Connections: c.Connections, Opened: trs[i].opened.Load(),
			KeepAlive: c.KeepAliveOn(), RequestsPerConn: c.RequestsPerConn,
			MaxInFlight: pacers[i].limit(), PeakInFlight: pacers[i].peak, Held: pacers[i].held}
		if err := total.Merge(m); err != nil {
			return nil, err
		}
	}
	total.Generator.CPU = processCPU() - cpu0
	total.Generator.MaxRSS = maxRSS()
	total.Generator.Processes = 1
	total.Summarize()
	if err := ctx.Err(); err != nil {
		return &total, err
	}
	return &total, nil
}

// CancelGrace is how long requests outstanding when an attack is cancelled
// may take to end before their connections are closed.
const CancelGrace = 500 * time.Millisecond

// inFlightSlack is how many vegeta workers an attack may have beyond its
// in-flight cap; see attack.
const inFlightSlack = 16

// processCPU is this process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is this process's peak resident set size in bytes.
func maxRSS() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}

// The workload's pacer is a vegeta.Pacer: its schedule is what vegeta's
// attack loop follows.
var _ vegeta.Pacer = (*workloads.Pacer)(nil)

// vegetaTargeter hands tg's requests to vegeta, one Target per request.
func vegetaTargeter(tg *workloads.Targeter) vegeta.Targeter {
	return func(tgt *vegeta.Target) error {
		var r workloads.Request
		if err := tg.Target(&r); err != nil {
			return err
		}
		tgt.Method, tgt.URL, tgt.Header, tgt.Body = r.Method, r.URL, r.Header, r.Body
		return nil
	}
}
