package loadgen

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/internal/csvcell"
	"github.com/lbbench/lbbench/internal/monoclock"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// recorder turns one stream's vegeta results into histograms and counts.
// Results are recorded as they arrive and then dropped, so memory does not
// grow with run length (intervals are kept encoded). Only the goroutine that
// reads the stream's results channel calls add.
type recorder struct {
	pacer  *workloads.Pacer
	warmup time.Duration
	window time.Duration
	raw    io.Writer            // per-request lines (one Write per line), or nil
	sink   func(*vegeta.Result) // gets every measured request (Options.Results), or nil
	// literal: the requests are Options.Targets, all of class 0.
	literal bool
	// cut: the attack was cancelled before its window ended.
	cut bool

	sentAt   func(map[string][]string) (time.Time, bool) // wire send time of a response's request
	m        results.Measurement
	client   int // index of the stream's named client in m.Clients, or -1
	lastSend time.Time

	// Latency by completion time since the window's start.
	intervals *results.IntervalRecorder
}

func newRecorder(p *workloads.Pacer, spec workloads.Spec, raw io.Writer) *recorder {
	return &recorder{
		pacer:     p,
		warmup:    spec.WarmupTime(),
		window:    spec.Duration,
		raw:       raw,
		m:         results.NewMeasurement(spec),
		client:    -1,
		intervals: results.NewIntervalRecorder(results.IntervalLength),
	}
}

// RawHeader is the first line of a raw per-request file: intended send time
// since the start of the measured window, send lag and corrected latency in
// microseconds, status code (0: no response), class, worker (-1: unknown),
// error.
const RawHeader = "intended_us,send_lag_us,latency_us,code,class,worker,error\n"

// forClient makes the recorder count its results for a named client too.
func (r *recorder) forClient(name string, share float64) {
	r.m.Clients = []results.Client{{Name: name, Share: share, Latency: results.NewHistogram()}}
	r.client = 0
}

// add records one result.
func (r *recorder) add(res *vegeta.Result) {
	off, ok := r.pacer.Offset(res.Seq)
	if !ok {
		r.m.Unmapped++
		return
	}
	if off < r.warmup {
		r.m.WarmupRequests++
		return
	}
	intended := r.pacer.Began().Add(off)
	// Timestamp is when vegeta really sent the request; it can precede
	// intended only by the clock error of recovering Began, so clamp.
	lag := max(res.Timestamp.Sub(intended), 0)
	corrected := lag + res.Latency

	// Uncorrected latency runs from when the request went on the wire, as
	// a closed-loop tool would measure it; without a response, from when
	// vegeta handed it to the client.
	uncorrected := res.Latency
	if r.sentAt != nil {
		if sent, ok := r.sentAt(res.Headers); ok {
			uncorrected = max(res.Timestamp.Add(res.Latency).Sub(sent), 0)
		}
	}

	m := &r.m
	if res.Timestamp.After(r.lastSend) {
		r.lastSend = res.Timestamp
	}
	class := workloads.ClassOf(res.URL)
	if r.literal {
		class = 0
	}
	failed := res.Error != "" || res.Code < 200 || res.Code >= 400
	sample := results.Sample{
		Scheduled: off - r.warmup, // the step a request belongs to is the one it was scheduled in
		Latency:   corrected, Uncorrected: uncorrected, SendLag: lag,
		Failed: failed, Class: class, Client: r.client,
	}
	if failed {
		sample.ErrorKind = errorKind(res)
	} else {
		sample.Wait, sample.ConnWait, sample.Waited, sample.ConnWaited = waits(res.Headers, intended, corrected)
	}
	m.Record(sample)
	worker := -1
	if vs := res.Headers["X-Worker"]; len(vs) > 0 {
		if i, err := strconv.Atoi(vs[0]); err == nil {
			worker = i
			m.ByWorker[i]++
		}
	}
	// Results arrive in about completion order; the interval recorder puts
	// one that arrives after its interval was closed into the open one.
	r.intervals.Record(res.Timestamp.Add(res.Latency).Sub(r.pacer.Began().Add(r.warmup)), corrected, failed)
	if r.sink != nil {
		r.sink(vegetaResult(res, intended, corrected))
	}
	if r.raw != nil {
		fmt.Fprintf(r.raw, "%d,%d,%d,%d,%d,%d,%s\n", (off - r.warmup).Microseconds(), lag.Microseconds(),
			corrected.Microseconds(), res.Code, class, worker, csvField(res.Error))
	}
}

func csvField(s string) string {
	if s == "" {
		return ""
	}
	return `"` + strings.ReplaceAll(csvcell.Cell(s), `"`, `""`) + `"`
}

// errorKind names a failure with few enough distinct values to count.
func errorKind(res *vegeta.Result) string {
	if res.Code != 0 && (res.Code < 200 || res.Code >= 400) {
		return strconv.Itoa(int(res.Code))
	}
	e := res.Error
	switch {
	case strings.Contains(e, "Timeout") || strings.Contains(e, "timeout") || strings.Contains(e, "deadline exceeded"):
		return "timeout"
	case strings.Contains(e, errAborted.Error()):
		return "cancelled"
	case strings.Contains(e, "connection refused"):
		return "connection refused"
	case strings.Contains(e, "connection reset"):
		return "connection reset"
	case strings.Contains(e, "EOF"):
		return "eof"
	}
	return "other"
}

// unsent records the requests the attack never sent, those after the
// first handed (see cappedPacer): each one in the measured window is a
// failure ("unsent") whose latency is at least the request timeout it
// waited past; a warm-up one is counted as warm-up.
func (r *recorder) unsent(handed uint64, timeout time.Duration) {
	r.m.Generator.Unsent = r.pacer.Abandon(handed, func(off time.Duration) {
		if off < r.warmup {
			r.m.WarmupRequests++
			return
		}
		r.m.Record(results.Sample{Scheduled: off - r.warmup, Latency: timeout, Uncorrected: timeout, SendLag: timeout,
			Failed: true, ErrorKind: ErrorUnsent, Class: -1, Client: r.client})
	})
}

// ErrorUnsent is the error kind of a request the generator never sent: it
// was due while the backlog at the in-flight cap was older than the
// request timeout, so the attack ended there (the target could not keep
// up).
const ErrorUnsent = "unsent"

// finish closes the open interval and the raw stream and returns the
// stream's measurement with its rates.
func (r *recorder) finish() (*results.Measurement, error) {
	ivs, err := r.intervals.Finish()
	if err != nil {
		return nil, err
	}
	m := &r.m
	m.Intervals = ivs
	// A cancelled attack (Ctrl-C, or --duration 0 run until interrupted)
	// ended before its window did: its duration and rates are the time it
	// ran.
	if ran := time.Since(r.pacer.Began().Add(r.warmup)); r.cut && ran > 0 && ran < r.window {
		r.window = ran
		m.Duration = ran
	}
	if m.Requests > 0 {
		m.IntendedRate = float64(m.Requests) / r.window.Seconds()
		// The measured requests were due within the window; if sending them
		// took longer, the generator fell behind.
		took := r.lastSend.Sub(r.pacer.Began().Add(r.warmup))
		m.AchievedRate = float64(m.Requests) / max(took, r.window).Seconds()
	}
	return m, nil
}

// waits reads a worker's stamps (workloads.TimesHeader) from an answer's
// headers: how long after its intended send time the request began, and
// its connection was accepted (0 if before). ok is false without stamps,
// for stamps that name another clock than this process's (monoclock.Host:
// another host, another boot, a time namespace) or none, and for stamps
// that still cannot be of this clock: a start before the request was due
// (by more than a clock reading's error) or after its answer came back. connOK is false, and connWait 0, when the server did
// not stamp when it accepted the connection (an app behind a WSGI or ASGI
// server cannot know).
func waits(h map[string][]string, intended time.Time, corrected time.Duration) (wait, connWait time.Duration, ok, connOK bool) {
	v := h[workloads.TimesHeader]
	if len(v) == 0 || !monoclock.Valid() {
		return 0, 0, false, false
	}
	st, ok := workloads.ParseTimes(v[0])
	if !ok || st.Clock == "" || st.Clock != monoclock.Host() {
		// Not stamped on this process's clock, or not saying which clock:
		// another host's stamps cannot be compared with ours.
		return 0, 0, false, false
	}
	due := monoclock.Of(intended)
	wait = time.Duration(st.Began - due)
	if wait < -clockSlop || wait > corrected+clockSlop {
		return 0, 0, false, false
	}
	wait = max(wait, 0)
	if st.Accepted == 0 {
		return wait, 0, true, false
	}
	if st.Accepted > due {
		connWait = time.Duration(st.Accepted - due)
	}
	return wait, min(connWait, wait), true, true
}

// clockSlop is how far a worker's stamp may fall outside the request's
// own span on one clock: the calibration of monoclock.Of in each process
// is a few microseconds.
const clockSlop = 100 * time.Microsecond
