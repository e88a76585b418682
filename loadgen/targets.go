package loadgen

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Options are the optional parts of an attack. The zero value is an
// attack of the workload's classes on the entry's base URL over plain
// HTTP, with nothing written per request.
type Options struct {
	// Raw, if not nil, receives a line per measured request (see
	// RawHeader). It is lbbench's own CSV, not vegeta's.
	Raw io.Writer
	// Targets, if not empty, are sent instead of the workload's classes:
	// request i goes to Targets[i mod len(Targets)], as vegeta's static
	// targeter does, with its URL, method, headers and body exactly as
	// given (the entry is then the Targets' common scheme and host, see
	// TargetsEntry). Their results have no class.
	Targets []vegeta.Target
	// Insecure skips the verification of an https entry's certificate.
	Insecure bool
	// Results, if not nil, is called with every measured request as a
	// vegeta result, one call at a time: Timestamp is the request's
	// intended send time and Latency runs from it (lbbench's corrected
	// latency), so vegeta's tools report what lbbench measures. The
	// result is the callee's to keep. BytesIn counts every byte of body
	// read; Body holds at most MaxBody of them.
	Results func(*vegeta.Result)
	// MaxBody is how many bytes of each response body a result given to
	// Results keeps (vegeta's -max-body); 0 keeps none. At most
	// MaxBodyCap.
	MaxBody int64
	// Header is added to every request of the workload's classes (literal
	// Targets carry their own).
	Header http.Header
	// Name is the attack's name in the results given to Results (vegeta's
	// -name).
	Name string
	// OwnProcess says the attack is all its process does (lbbench attack,
	// a generator of its own): an open-loop attack then sets GOMAXPROCS
	// for its peak rate (procs.go). An attack run beside a harness, as
	// the local driver's in lbbench run, leaves it alone: the harness's
	// goroutines would share the attack's few Ps and hold back its pacer.
	OwnProcess bool
}

// MaxBodyCap bounds Options.MaxBody: a result is kept until it is
// written, and each of thousands in flight may hold a body.
const MaxBodyCap = 1 << 20

// ReadTargets reads every target of src in vegeta's http format (a
// "METHOD URL" line, then header lines, then an optional "@path" body
// file, targets separated by blank lines, "#" comments), as "vegeta
// attack" reads them: it is vegeta's own parser.
func ReadTargets(src io.Reader) ([]vegeta.Target, error) {
	return ReadTargetsAs(src, TargetsHTTP, nil, nil)
}

// The targets formats of ReadTargetsAs: vegeta's -format values.
const (
	TargetsHTTP = vegeta.HTTPTargetFormat // "METHOD URL", header lines, "@body"
	TargetsJSON = vegeta.JSONTargetFormat // a JSON object a line: method, url, header, body in base64
)

// ReadTargetsAs reads every target of src in format (TargetsHTTP or
// TargetsJSON) with vegeta's own parsers, as "vegeta attack -format
// FORMAT -body FILE -header H" does: body is the body of every target
// that has none of its own, and header is added to every target's.
func ReadTargetsAs(src io.Reader, format string, body []byte, header http.Header) ([]vegeta.Target, error) {
	var tg vegeta.Targeter
	var head bytes.Buffer // what was read, for a hint when it fails
	src = io.TeeReader(src, &limitedBuffer{buf: &head, max: 64})
	switch format {
	case TargetsHTTP:
		tg = vegeta.NewHTTPTargeter(src, body, header)
	case TargetsJSON:
		tg = vegeta.NewJSONTargeter(src, body, header)
	default:
		return nil, fmt.Errorf("loadgen: targets format %q: want %s or %s (vegeta's -format)", format, TargetsHTTP, TargetsJSON)
	}
	tgts, err := vegeta.ReadAllTargets(tg)
	if err != nil {
		first := bytes.TrimLeft(head.Bytes(), " \t\r\n")
		switch {
		case format == TargetsHTTP && bytes.HasPrefix(first, []byte("{")):
			return nil, fmt.Errorf("loadgen: targets: %w (they look like vegeta's JSON targets: give --targets-format json, vegeta's -format json)", err)
		case format == TargetsJSON && !bytes.HasPrefix(first, []byte("{")):
			return nil, fmt.Errorf("loadgen: JSON targets: %w (want a JSON object a line, {\"method\":\"GET\",\"url\":\"http://...\"}; for \"GET URL\" lines leave out --targets-format json)", err)
		}
		return nil, fmt.Errorf("loadgen: targets: %w", err)
	}
	if len(tgts) == 0 {
		return nil, errors.New("loadgen: targets: none given (expected lines like \"GET http://127.0.0.1:8080/work?ms=1\")")
	}
	return tgts, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// TargetsEntry returns the entry (scheme://host:port) every target goes
// to, or an error if they do not share one: an attack drives one entry
// point over its own connections.
func TargetsEntry(tgts []vegeta.Target) (string, error) {
	entry := ""
	for _, t := range tgts {
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("loadgen: target %q is not an http:// or https:// URL", t.URL)
		}
		e := u.Scheme + "://" + hostPort(u)
		if entry != "" && e != entry {
			return "", fmt.Errorf("loadgen: targets go to %s and %s: an attack drives one entry point (scheme, host and port)", entry, e)
		}
		entry = e
	}
	return entry, nil
}

// hostPort is u's host with its scheme's default port when it has none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// staticTargeter hands out tgts round robin, as vegeta's static targeter
// does.
func staticTargeter(tgts []vegeta.Target) vegeta.Targeter {
	var i atomic.Uint64
	return func(tgt *vegeta.Target) error {
		*tgt = tgts[(i.Add(1)-1)%uint64(len(tgts))]
		return nil
	}
}

// tlsConfig is the client TLS configuration for an https entry u, or nil
// for http.
func tlsConfig(u *url.URL, insecure bool) *tls.Config {
	if u.Scheme != "https" {
		return nil
	}
	return &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: insecure, NextProtos: []string{"http/1.1"}}
}

// resultSink serializes calls to f from the streams' goroutines.
func resultSink(f func(*vegeta.Result)) func(*vegeta.Result) {
	if f == nil {
		return nil
	}
	var mu sync.Mutex
	return func(r *vegeta.Result) {
		mu.Lock()
		defer mu.Unlock()
		f(r)
	}
}

// vegetaResult is res as vegeta's tools should see it: timestamped at the
// intended send time, its latency corrected, its BytesIn the body's whole
// length, without lbbench's internal headers.
func vegetaResult(res *vegeta.Result, intended time.Time, corrected time.Duration) *vegeta.Result {
	out := *res
	out.Timestamp = intended
	out.Latency = corrected
	if v := res.Headers[bytesInHeader]; len(v) > 0 {
		if n, err := strconv.ParseUint(v[0], 10, 64); err == nil {
			out.BytesIn = n
		}
	}
	_, sent := res.Headers[sentHeader]
	_, counted := res.Headers[bytesInHeader]
	if sent || counted {
		h := make(http.Header, len(res.Headers))
		for k, v := range res.Headers {
			if k != sentHeader && k != bytesInHeader {
				h[k] = v
			}
		}
		out.Headers = h
	}
	return &out
}
