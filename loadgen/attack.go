package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/internal/syncio"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// Attack offers spec's load to entry from this process and returns what it
// recorded: the instrument behind "lbbench attack" and every driver's
// generator. spec must have been through WithDefaults and Validate. The
// workload says the mode: open loop (an arrival process), closed loop
// (spec.Closed) or bursts (spec.Bursts), see closed.go.
//
// Open loop: each of spec's streams (workloads.Spec.Streams: one, or one
// per named client) has its own schedule, class draws, connections and
// recorder. Warm-up requests go over the same connections and are
// discarded. Each stream keeps at most spec.InFlightCap() requests
// outstanding (cappedPacer). On ctx cancellation it stops sending at once
// (even in the middle of a long wait for the next arrival), gives
// outstanding requests CancelGrace to end, then closes their connections
// (they count as errors), and returns what it recorded with ctx's error.
//
// Live figures go to the callback ctx carries (LiveContext).
func Attack(ctx context.Context, entry string, spec workloads.Spec, o Options) (*results.Measurement, error) {
	deterministic := spec.Closed != nil || spec.Bursts != nil
	if deterministic && (len(o.Targets) > 0 || o.Results != nil || o.Raw != nil || len(o.Header) > 0 || strings.HasPrefix(entry, "https:")) {
		return nil, fmt.Errorf("loadgen: literal targets, https, extra headers, raw lines and vegeta results need an open-loop arrival, not a closed-loop or burst-client workload")
	}
	switch {
	case spec.Closed != nil:
		return closedLoop(ctx, entry, spec)
	case spec.Bursts != nil:
		return bursts(ctx, entry, spec)
	}
	return openLoop(ctx, entry, spec, o)
}

// stream is one open-loop stream of an attack: its pacer, connections,
// vegeta attacker and recorder.
type stream struct {
	spec   workloads.Spec
	pacer  *workloads.Pacer
	capped *cappedPacer
	tr     *clientTransport
	rec    *recorder
	tg     vegeta.Targeter
	atk    *vegeta.Attacker
	name   string // the attack's name in vegeta's results
}

// openLoop is Attack's open-loop mode.
func openLoop(ctx context.Context, entry string, spec workloads.Spec, o Options) (*results.Measurement, error) {
	u, err := url.Parse(entry)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("loadgen: entry %q is not an http:// or https:// URL", entry)
	}
	var rawW io.Writer
	var rawBuf *bufio.Writer
	if o.Raw != nil {
		rawBuf = bufio.NewWriterSize(o.Raw, 64<<10)
		rawBuf.WriteString(RawHeader)
		rawW = syncio.NewWriter(rawBuf) // streams share it, a line per Write
	}
	streams, err := newStreams(ctx, entry, u, spec, o, rawW)
	if err != nil {
		return nil, err
	}
	if spec.Clients.Preopen {
		for _, st := range streams {
			if err := st.tr.preopen(ctx); err != nil {
				for _, st := range streams {
					st.tr.abort()
				}
				return nil, err
			}
		}
	}
	if o.OwnProcess {
		release := holdProcs(spec.Arrival.PeakRate()) // procs.go: the CPUs the attack's Go code may use
		defer release()
	}
	cost := startCost()
	live := startLive(ctx, spec) // live.go: nil (a no-op) unless LiveContext
	defer live.stop()
	send(ctx, streams, live, spec.WarmupTime()+spec.Duration+spec.Timeout)
	if rawBuf != nil {
		if err := rawBuf.Flush(); err != nil {
			return nil, fmt.Errorf("loadgen: raw results: %w", err)
		}
	}
	total, err := collect(streams, ctx.Err() != nil)
	if err != nil {
		return nil, err
	}
	cost.fill(&total.Generator)
	total.Summarize()
	return total, ctx.Err()
}

// newStreams builds every stream of spec. Every targeter comes first: one
// that fails must not leave streams started before it running.
func newStreams(ctx context.Context, entry string, u *url.URL, spec workloads.Spec, o Options, raw io.Writer) ([]*stream, error) {
	ss := spec.Streams()
	out := make([]*stream, len(ss))
	for i, s := range ss {
		st := &stream{spec: s.Spec}
		if len(o.Targets) > 0 {
			st.tg = staticTargeter(o.Targets)
		} else {
			tg, err := workloads.NewTargeter(s.Spec, entry)
			if err != nil {
				return nil, err
			}
			st.tg = vegetaTargeter(tg, o.Header)
		}
		out[i] = st
	}
	sink := resultSink(o.Results)
	for i, s := range ss {
		st, c := out[i], s.Spec.Clients
		st.pacer = workloads.NewPacer(s.Spec)
		st.capped = newCappedPacer(ctx, st.pacer, s.Spec.InFlightCap(), s.Spec.Timeout)
		st.rec = newRecorder(st.pacer, s.Spec, raw)
		st.rec.sink = sink
		st.rec.literal = len(o.Targets) > 0
		if s.Name != "" {
			st.rec.forClient(s.Name, s.Share)
		}
		st.tr = newClientTransport(hostPort(u), c.Connections, c.KeepAliveOn(), c.RequestsPerConn)
		st.tr.timeout = s.Spec.Timeout // not http.Client's Timeout: see clientTransport.timeout
		st.tr.tls = tlsConfig(u, o.Insecure)
		st.tr.counted = o.Results != nil
		st.name = o.Name
		st.rec.sentAt = st.tr.sentAt
		st.atk = vegeta.NewAttacker(
			vegeta.Client(&http.Client{
				Transport: st.tr,
				CheckRedirect: func(*http.Request, []*http.Request) error {
					return http.ErrUseLastResponse
				},
			}),
			vegeta.Workers(uint64(min(c.Connections, st.capped.limit()))),
			// A few more workers than slots: a worker whose result was
			// just taken (freeing its slot) may not be back at vegeta's
			// tick channel yet when the next tick goes out.
			vegeta.MaxWorkers(uint64(st.capped.limit()+inFlightSlack)),
			// The body is needed only when asked for; vegeta would
			// otherwise keep it all.
			vegeta.MaxBody(min(max(o.MaxBody, 0), MaxBodyCap)),
		)
	}
	return out, nil
}

// send runs every stream's attack until its schedule ends or ctx does,
// recording each result as it comes. At the latest after limit (the
// schedule's length plus the request timeout) the requests still
// outstanding are cut off: they count as errors, and the run ends.
func send(ctx context.Context, streams []*stream, live *liveMeter, limit time.Duration) {
	var wg sync.WaitGroup
	attackDone := make(chan struct{})
	cut := time.AfterFunc(limit, func() {
		for _, st := range streams {
			st.atk.Stop()
			st.tr.abort()
		}
	})
	defer cut.Stop()
	for _, st := range streams {
		wg.Go(func() {
			results := st.atk.Attack(st.tg, st.capped, 0, st.name)
			stop := context.AfterFunc(ctx, func() { st.atk.Stop() })
			defer stop()
			for res := range results {
				st.capped.done()
				st.rec.add(res)
				live.observe(st.pacer, res)
			}
		})
	}
	// On cancellation, requests still outstanding get CancelGrace, then
	// their connections are closed: a stuck target must not hold Ctrl-C
	// for a whole request timeout.
	abort := context.AfterFunc(ctx, func() {
		t := time.NewTimer(CancelGrace)
		defer t.Stop()
		select {
		case <-t.C:
			for _, st := range streams {
				st.tr.abort()
			}
		case <-attackDone:
		}
	})
	wg.Wait()
	close(attackDone)
	abort()
}

// collect closes every stream's recorder and merges their measurements.
// cut says the attack was cancelled before its window ended.
func collect(streams []*stream, cut bool) (*results.Measurement, error) {
	var total results.Measurement
	for _, st := range streams {
		st.tr.CloseIdleConnections()
		st.rec.cut = cut
		if st.capped.backlog {
			st.rec.unsent(st.capped.handed, st.spec.Timeout)
		}
		m, err := st.rec.finish()
		if err != nil {
			return nil, err
		}
		c := st.spec.Clients
		m.Generator = results.Generator{Streams: 1, Connections: c.Connections, Opened: st.tr.opened.Load(),
			KeepAlive: c.KeepAliveOn(), RequestsPerConn: c.RequestsPerConn, Preopen: c.Preopen,
			MaxInFlight: st.capped.limit(), PeakInFlight: st.capped.peak, Held: st.capped.held, Unsent: st.rec.m.Generator.Unsent}
		if err := total.Merge(m); err != nil {
			return nil, err
		}
	}
	return &total, nil
}

// CancelGrace is how long requests outstanding when an attack is cancelled
// may take to end before their connections are closed.
const CancelGrace = 500 * time.Millisecond

// inFlightSlack is how many vegeta workers an attack may have beyond its
// in-flight cap; see attack.
const inFlightSlack = 16

// cost measures what an attack costs this process, from startCost to
// fill: its CPU time, and the host's steal time on the CPUs it may run on.
type cost struct {
	cpu0     time.Duration
	steal    proccpu.StealClock
	steal0   time.Duration
	stealErr error
}

func startCost() cost {
	c := cost{cpu0: processCPU(), steal: proccpu.NewStealClock()}
	c.steal0, c.stealErr = c.steal.Now()
	return c
}

// fill sets g's CPU, MaxRSS, Processes (1), CPUs and Steal: what this
// process cost since startCost.
func (c cost) fill(g *results.Generator) {
	g.CPU = processCPU() - c.cpu0
	g.MaxRSS = maxRSS()
	g.Processes = 1
	// The CPUs it may run on, over which steal is summed too: not
	// GOMAXPROCS, which holdProcs lowers at low rates (the runtime's
	// other threads still run on the rest).
	g.CPUs = c.steal.CPUs()
	if g.CPUs == 0 {
		g.CPUs = runtime.NumCPU()
	}
	if st, err := c.steal.Now(); err == nil && c.stealErr == nil {
		g.Steal = st - c.steal0
	}
}

// processCPU is this process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is this process's peak resident set size in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}

// The workload's pacer is a vegeta.Pacer: its schedule is what vegeta's
// attack loop follows.
var _ vegeta.Pacer = (*workloads.Pacer)(nil)

// vegetaTargeter hands tg's requests to vegeta, one Target per request,
// with extra added to each request's header.
func vegetaTargeter(tg *workloads.Targeter, extra http.Header) vegeta.Targeter {
	return func(tgt *vegeta.Target) error {
		var r workloads.Request
		if err := tg.Target(&r); err != nil {
			return err
		}
		tgt.Method, tgt.URL, tgt.Header, tgt.Body = r.Method, r.URL, r.Header, r.Body
		if len(extra) > 0 {
			h := r.Header.Clone()
			if h == nil {
				h = make(http.Header, len(extra))
			}
			for k, vs := range extra {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			tgt.Header = h
		}
		return nil
	}
}
