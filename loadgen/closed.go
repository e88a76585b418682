package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// closedLoop runs a closed-loop workload (spec.Closed) against entry: each
// named client sends its spec'd number of requests one after another on
// its own connection (reopened only when keep-alive is off or
// requests_per_conn says so), waiting for each answer and then the think
// time; clients run one after another or side by side. Latency is response
// time: from writing the request to reading the whole answer. There is no
// intended send time, so corrected and uncorrected latency are the same
// and send lag is zero.
func closedLoop(ctx context.Context, entry string, spec workloads.Spec) (*results.Measurement, error) {
	host, err := entryHost(entry)
	if err != nil {
		return nil, err
	}
	c := spec.Closed
	pattern := spec.PatternIndexes()
	m := results.NewMeasurement(spec)
	m.Closed = true
	for _, n := range spec.Clients.Named {
		m.Clients = append(m.Clients, results.Client{Name: n.Name, Share: float64(n.Requests), Latency: results.NewHistogram()})
	}
	rec := newClosedRecorder(&m)
	cost := startCost()
	var opened uint64
	var mu sync.Mutex
	// Requests sent so far, for a pattern over the whole sequence (whose
	// order is sequential: one client at a time touches seq).
	overSeq, seq := c.OverSequence(), 0
	runClient := func(ci int, n workloads.NamedClient) error {
		cs := spec
		cs.Seed = spec.Seed + uint64(ci+1)*0x9e3779b97f4a7c15
		tg, err := workloads.NewTargeter(cs, entry)
		if err != nil {
			return err
		}
		tr := newClientTransport(host, 1, spec.Clients.KeepAliveOn(), spec.Clients.RequestsPerConn)
		defer func() {
			tr.CloseIdleConnections()
			mu.Lock()
			opened += tr.opened.Load()
			mu.Unlock()
		}()
		for k := 0; k < n.Requests; k++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			var r workloads.Request
			if pattern != nil {
				i := k
				if overSeq {
					i = seq
				}
				err = tg.TargetClass(&r, pattern[i%len(pattern)])
			} else {
				err = tg.Target(&r)
			}
			if err != nil {
				return err
			}
			rec.do(ctx, tr, &r, spec.Timeout, ci)
			if overSeq {
				seq++
			}
			if c.Think > 0 && k+1 < n.Requests {
				select {
				case <-time.After(c.Think):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	}
	start := time.Now()
	rec.start = start
	if c.Order == workloads.Parallel {
		var wg sync.WaitGroup
		errs := make([]error, len(spec.Clients.Named))
		for i, n := range spec.Clients.Named {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = runClient(i, n)
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
	} else {
		for i, n := range spec.Clients.Named {
			if err := runClient(i, n); err != nil {
				return nil, err
			}
		}
	}
	took := time.Since(start)
	return rec.finish(took, spec, cost, opened, len(spec.Clients.Named))
}

// entryHost returns the host:port of an http://host:port entry URL.
func entryHost(entry string) (string, error) {
	u, err := url.Parse(entry)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("loadgen: entry %q is not an http://host:port URL", entry)
	}
	return u.Host, nil
}

// closedRecorder records closed-loop and burst requests into one
// measurement; it is safe for concurrent use.
type closedRecorder struct {
	mu        sync.Mutex
	m         *results.Measurement
	start     time.Time
	intervals *results.IntervalRecorder
}

func newClosedRecorder(m *results.Measurement) *closedRecorder {
	return &closedRecorder{m: m, intervals: results.NewIntervalRecorder(results.IntervalLength)}
}

// do sends r on tr, waits for the whole answer and records it for client
// ci (-1: none). It returns the worker that answered (-1: none).
func (c *closedRecorder) do(ctx context.Context, tr *clientTransport, r *workloads.Request, timeout time.Duration, ci int) int {
	w, _ := c.doFrom(ctx, tr, r, timeout, ci, time.Time{})
	return w
}

// doFrom is do with latency measured from `from` when it is not zero (a
// burst's start), else from when the request is handed to the client. It
// also returns the answer's workloads.TimesHeader ("": none), unparsed:
// only bursts read it.
func (c *closedRecorder) doFrom(ctx context.Context, tr *clientTransport, r *workloads.Request, timeout time.Duration, ci int, from time.Time) (int, string) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(rctx, r.Method, r.URL, body)
	if err != nil {
		return -1, ""
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	t0 := time.Now()
	if from.IsZero() {
		from = t0
	}
	resp, err := tr.RoundTrip(req)
	code, worker, kind := 0, -1, ""
	var stamps string
	if err == nil {
		stamps = resp.Header.Get(workloads.TimesHeader)
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
		if w, e := strconv.Atoi(resp.Header.Get("X-Worker")); e == nil {
			worker = w
		}
	}
	end := time.Now()
	lat := end.Sub(from)
	failed := err != nil || code < 200 || code >= 400
	if failed {
		switch {
		case code != 0:
			kind = strconv.Itoa(code)
		case rctx.Err() != nil:
			kind = "timeout"
		default:
			kind = "other"
		}
	}
	class := workloads.ClassOf(r.URL)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.Record(results.Sample{Latency: lat, Uncorrected: end.Sub(t0), Failed: failed, ErrorKind: kind, Class: class, Client: ci})
	if worker >= 0 && !failed {
		c.m.ByWorker[worker]++
	}
	c.intervals.Record(end.Sub(c.start), lat, failed)
	if failed {
		return -1, ""
	}
	return worker, stamps
}

// finish closes the intervals and fills the rates and generator figures.
func (c *closedRecorder) finish(took time.Duration, spec workloads.Spec, cost cost, opened uint64, streams int) (*results.Measurement, error) {
	ivs, err := c.intervals.Finish()
	if err != nil {
		return nil, err
	}
	m := c.m
	m.Intervals = ivs
	m.Duration = took
	if took > 0 {
		// No intended rate: a closed loop sends as fast as it is answered.
		m.AchievedRate = float64(m.Requests) / took.Seconds()
	}
	m.Generator = results.Generator{Streams: streams, Connections: streams, Opened: opened,
		KeepAlive: spec.Clients.KeepAliveOn(), RequestsPerConn: spec.Clients.RequestsPerConn}
	cost.fill(&m.Generator)
	m.Summarize()
	return m, nil
}

// burstTimes is when one request of a burst was written whole and when
// its answer's first byte came back (zero: never), and its worker's stamps
// (zero: none came).
type burstTimes struct {
	wrote, answered time.Time
	stamps          workloads.Times
}

// trace returns ctx with a client trace filling t.
func (t *burstTimes) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { t.wrote = time.Now() },
		GotFirstResponseByte: func() { t.answered = time.Now() },
	})
}

// lateRequests counts the requests of a burst that did not arrive
// together with the others:
//   - written after the burst's first answer came back, or more than least
//     (the shortest service time the burst's classes can draw; 0: unknown)
//     after its first request was written: the generator was held up;
//   - received by its worker after another worker was done with one of the
//     burst's requests (workers' stamps, on the host's shared clock): the
//     balancer passed it on late (its own CPU taken), which the generator
//     cannot see.
//
// Either way an earlier request may have finished, and its worker been
// freed, before this one was dispatched, so the burst's loads say nothing
// of simultaneous dispatch. The generator's times are taken just after its
// write returns and just after an answer's first byte is seen, so a
// goroutine held up before its stamp errs either way: a late write stamp
// leaves out a burst that could have counted, a late answer stamp hides a
// late request, which the workers' stamps then catch when they are sent.
func lateRequests(ts []burstTimes, least time.Duration) int {
	var first, answer time.Time
	var done int64
	for _, t := range ts {
		if !t.wrote.IsZero() && (first.IsZero() || t.wrote.Before(first)) {
			first = t.wrote
		}
		if !t.answered.IsZero() && (answer.IsZero() || t.answered.Before(answer)) {
			answer = t.answered
		}
		if t.stamps.Done > 0 && (done == 0 || t.stamps.Done < done) {
			done = t.stamps.Done
		}
	}
	n := 0
	for _, t := range ts {
		switch {
		case t.wrote.IsZero():
		case !answer.IsZero() && t.wrote.After(answer):
			n++
		case least > 0 && t.wrote.Sub(first) >= least:
			n++
		case done > 0 && t.stamps.Received > done:
			n++
		}
	}
	return n
}

// bursts runs a burst workload (spec.Bursts) against entry: each burst
// opens Size new connections at the same moment (goroutines released
// together), sends one request on each, and waits for every answer; the
// answers' X-Worker headers give the burst's per-worker load. Latency runs
// from the burst's start.
func bursts(ctx context.Context, entry string, spec workloads.Spec) (*results.Measurement, error) {
	host, err := entryHost(entry)
	if err != nil {
		return nil, err
	}
	b := spec.Bursts
	tg, err := workloads.NewTargeter(spec, entry)
	if err != nil {
		return nil, err
	}
	m := results.NewMeasurement(spec)
	m.Closed = true
	m.Bursts = &results.Bursts{Size: b.Size}
	rec := newClosedRecorder(&m)
	cost := startCost()
	var opened uint64
	rec.start = time.Now()
	reqs := make([]workloads.Request, b.Size)
	workers := make([]int, b.Size)
	times := make([]burstTimes, b.Size)
	least := time.Duration(math.MaxInt64)
	for _, c := range spec.Classes {
		least = min(least, c.Service.Least())
	}
	for k := 0; k < b.Count; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := range reqs {
			if err := tg.Target(&reqs[i]); err != nil {
				return nil, err
			}
		}
		// Keep-alive off: every request of every burst is a new connection.
		tr := newClientTransport(host, b.Size, false, 0)
		tr.traced = true
		var ready, done sync.WaitGroup
		gate := make(chan struct{})
		var t0 time.Time
		for i := range reqs {
			ready.Add(1)
			done.Add(1)
			times[i] = burstTimes{}
			go func() {
				defer done.Done()
				ready.Done()
				<-gate
				var stamps string
				workers[i], stamps = rec.doFrom(times[i].trace(ctx), tr, &reqs[i], spec.Timeout, -1, t0)
				times[i].stamps, _ = workloads.ParseTimes(stamps)
			}()
		}
		ready.Wait()
		t0 = time.Now()
		close(gate)
		done.Wait()
		opened += tr.opened.Load()
		var load []int
		un := 0
		for _, w := range workers {
			if w < 0 {
				un++
				continue
			}
			for len(load) <= w {
				load = append(load, 0)
			}
			load[w]++
		}
		m.Bursts.Loads = append(m.Bursts.Loads, load)
		m.Bursts.Unattributed = append(m.Bursts.Unattributed, un)
		m.Bursts.Late = append(m.Bursts.Late, lateRequests(times, least))
		if b.Gap > 0 && k+1 < b.Count {
			select {
			case <-time.After(b.Gap):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	took := time.Since(rec.start)
	return rec.finish(took, spec, cost, opened, b.Size)
}
