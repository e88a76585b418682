package harness

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// recorder turns vegeta results into histograms and counts. Results are
// recorded as they arrive and then dropped, so memory does not grow with run
// length. Only the goroutine that reads the results channel calls add.
type recorder struct {
	pacer  *workloads.Pacer
	warmup time.Duration
	window time.Duration

	latency, uncorrected, sendLag, errLatency *Histogram
	classes                                   []ClassResult
	workers                                   map[int]uint64

	requests, errors, warmupN, unmapped uint64
	errorKinds                          map[string]uint64
	lastSend                            time.Time
}

func newRecorder(p *workloads.Pacer, spec workloads.Spec, classes []string) *recorder {
	r := &recorder{
		pacer:       p,
		warmup:      spec.Warmup,
		window:      spec.Duration,
		latency:     NewHistogram(),
		uncorrected: NewHistogram(),
		sendLag:     NewHistogram(),
		errLatency:  NewHistogram(),
		workers:     map[int]uint64{},
		errorKinds:  map[string]uint64{},
	}
	for _, name := range classes {
		r.classes = append(r.classes, ClassResult{Name: name, Latency: NewHistogram()})
	}
	return r
}

// add records one result.
func (r *recorder) add(res *vegeta.Result) {
	off, ok := r.pacer.Offset(res.Seq)
	if !ok {
		r.unmapped++
		return
	}
	if off < r.warmup {
		r.warmupN++
		return
	}
	intended := r.pacer.Began().Add(off)
	// Timestamp is when vegeta really sent the request; it can precede
	// intended only by the clock error of recovering Began, so clamp.
	lag := max(res.Timestamp.Sub(intended), 0)
	corrected := lag + res.Latency

	r.requests++
	r.latency.RecordDuration(corrected)
	r.uncorrected.RecordDuration(res.Latency)
	r.sendLag.RecordDuration(lag)
	if res.Timestamp.After(r.lastSend) {
		r.lastSend = res.Timestamp
	}

	failed := res.Error != "" || res.Code < 200 || res.Code >= 400
	if failed {
		r.errors++
		r.errorKinds[errorKind(res)]++
		r.errLatency.RecordDuration(corrected)
	}
	if c := workloads.ClassOf(res.URL); c >= 0 && c < len(r.classes) {
		cl := &r.classes[c]
		cl.Requests++
		cl.Latency.RecordDuration(corrected)
		if failed {
			cl.Errors++
		}
	}
	if vs := res.Headers["X-Worker"]; len(vs) > 0 {
		if i, err := strconv.Atoi(vs[0]); err == nil {
			r.workers[i]++
		}
	}
}

// errorKind names a failure with few enough distinct values to count.
func errorKind(res *vegeta.Result) string {
	if res.Code != 0 && (res.Code < 200 || res.Code >= 400) {
		return strconv.Itoa(int(res.Code))
	}
	e := res.Error
	switch {
	case strings.Contains(e, "Timeout") || strings.Contains(e, "timeout"):
		return "timeout"
	case strings.Contains(e, "connection refused"):
		return "connection refused"
	case strings.Contains(e, "connection reset"):
		return "connection reset"
	case strings.Contains(e, "EOF"):
		return "eof"
	}
	return "other"
}

// fill copies the recorded figures into run and judges its validity.
func (r *recorder) fill(run *RunResult, v Validity) {
	run.Requests = r.requests
	run.Errors = r.errors
	run.WarmupRequests = r.warmupN
	run.Unmapped = r.unmapped
	if len(r.errorKinds) > 0 {
		run.ErrorKinds = r.errorKinds
	}
	run.Latency, run.Uncorrected, run.SendLag, run.ErrorLatency = r.latency, r.uncorrected, r.sendLag, r.errLatency
	run.Summary = r.latency.Summarize()
	for i := range r.classes {
		r.classes[i].Summary = r.classes[i].Latency.Summarize()
	}
	run.Classes = r.classes
	run.Duration = r.window

	if r.requests > 0 {
		run.IntendedRate = float64(r.requests) / r.window.Seconds()
		// The measured requests were due within the window; if sending them
		// took longer, the generator fell behind.
		took := r.lastSend.Sub(r.pacer.Began().Add(r.warmup))
		run.AchievedRate = float64(r.requests) / max(took, r.window).Seconds()
	}

	run.Valid = true
	invalid := func(format string, args ...any) {
		run.Valid = false
		run.Invalid = append(run.Invalid, fmt.Sprintf(format, args...))
	}
	if r.requests == 0 {
		invalid("no measured requests")
	}
	if r.unmapped > 0 {
		invalid("%d results could not be mapped to their intended send time", r.unmapped)
	}
	if run.IntendedRate > 0 {
		if e := 1 - run.AchievedRate/run.IntendedRate; e > v.MaxRateError {
			invalid("achieved rate %.1f/s is %.1f%% below intended %.1f/s (tolerance %.1f%%)",
				run.AchievedRate, 100*e, run.IntendedRate, 100*v.MaxRateError)
		}
	}
	if p99 := r.sendLag.Quantile(0.99); r.requests > 0 && p99 > v.MaxSendLagP99 {
		invalid("send lag p99 %s exceeds %s: the generator fell behind", p99, v.MaxSendLagP99)
	}
}
