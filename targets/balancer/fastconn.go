package balancer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// The layer 7 forwarder's connection: one client connection's state
// machine (serve, step), its waits, the routing of each request to a
// backend (forward) and the error answers.

// fastConn is one client connection.
type fastConn struct {
	waitState             // what it waits for, for the sweeper
	busy      atomic.Bool // serving a request (Shutdown closes only idle connections)
	s         *fastServer
	nc        net.Conn
	sc        *sysConn    // nc's socket (nil if it has none)
	stepFn    func() bool // c.step, bound once
	stage     int         // where a session left off (stageEnd...)
	first     bool        // no request has begun yet
	waitStart int64       // nanotime the wait for the next request began
	waitPhase int32       // the wait idleWait began (phaseBusy: none)
	headUntil int64       // nanotime the current head must be read by
	br        *bufio.Reader
	bw        *bufio.Writer
	head      []byte   // the current head's bytes
	lines     [][2]int // its lines, as offsets into head
	rhead     []byte   // the current response head's bytes
	rlines    [][2]int // its lines
	req       fastReq  // the current request
	resp      fastResp // its response head
	buf       []byte   // body copy buffer
	ip        []byte   // the client's IP, for X-Forwarded-For and Forwarded
	ipv6      bool
}

// fastReq is a parsed request head; its slices point into fastConn.head.
type fastReq struct {
	method, target, path, query, host []byte
	http10                            bool
	contentLength                     int64 // -1: none
	chunked                           bool
	expectContinue                    bool
	close                             bool // the client asked to close, or HTTP/1.0 without keep-alive
	connTokens                        [][]byte
	xff                               [][]byte // prior X-Forwarded-For values
	forwarded                         [][]byte // prior Forwarded values
}

// fastResp is a parsed response head; slices point into fastConn.head.
type fastResp struct {
	status        int
	statusLine    []byte
	contentLength int64 // -1: none
	chunked       bool
	close         bool
	hasWorker     bool
	connTokens    [][]byte
}

// errHead is a client head refused with a status.
type errHead struct {
	status int
	msg    string
}

func (e *errHead) Error() string { return e.msg }

func (c *fastConn) serve() {
	defer func() {
		c.nc.Close()
		if c.sc != nil {
			c.s.emptyReads.Add(c.sc.empty)
		}
		if c.br != nil {
			c.br.Reset(nil)
			fastReaders.Put(c.br)
			c.bw.Reset(nil)
			fastWriters.Put(c.bw)
		}
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
		c.s.wg.Done()
	}()
	rw := newSysConn(c.nc)
	c.sc, _ = rw.(*sysConn)
	c.br = fastReaders.Get().(*bufio.Reader)
	c.br.Reset(rw)
	c.bw = fastWriters.Get().(*bufio.Writer)
	c.bw.Reset(rw)
	if host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String()); err == nil {
		c.ip = []byte(host)
		c.ipv6 = bytes.IndexByte(c.ip, ':') >= 0
	}
	c.first = true
	c.waitStart = nanotime()
	for {
		stage := stageIdle
		if c.sc != nil {
			// Serve in a session (sysconn.go) while requests come
			// whole and without a body; it returns the stage at which
			// the ordinary path below takes over.
			c.stage = stageEnd
			if err := c.sc.session(c.stepFn); err != nil {
				if c.waitPhase == phaseLinger && c.endIdleWait() {
					continue // the sweeper's cut (idleWait): read again
				}
				return
			}
			stage = c.stage
		}
		switch stage {
		case stageEnd:
			return
		case stageIdle:
			c.idleWait()
			_, err := c.br.Peek(1)
			c.endIdleWait()
			if err != nil || !c.s.setBusy(c, true) {
				return
			}
			c.startHead()
			fallthrough
		case stageHead:
			c.wait(phaseHead, c.headUntil)
			err := c.readRequest()
			c.endWait(phaseHead)
			if err != nil {
				c.refuse(err)
				return
			}
		}
		if !c.forward() || !c.s.setBusy(c, false) {
			return
		}
		c.waitStart = nanotime()
	}
}

// idleWait marks the start of the wait for the next request's first byte:
// until the header timeout for the first request, the idle timeout
// between requests, counted from waitStart. The sweeper (sweep.go)
// enforces both. In a session after a read that returned bytes (unsure,
// sysConn.session) the wait is phaseLinger instead, which the sweeper
// cuts after a tick, so that serve reads again: an end of stream that came
// with the last request is then seen within two ticks, not at the idle
// timeout. Only a connection idle that long pays that read, once.
func (c *fastConn) idleWait() {
	if c.sc != nil && c.sc.unsure {
		c.waitPhase = phaseLinger
		c.wait(phaseLinger, c.waitStart+int64(c.s.tick))
		return
	}
	wait := c.s.p.cfg.IdleTimeout
	if c.first {
		wait = c.s.p.cfg.HeaderTimeout
	}
	c.waitPhase = phaseIdle
	c.wait(phaseIdle, c.waitStart+int64(wait))
}

// endIdleWait ends the wait idleWait began, if any, and says whether the
// sweeper cut it.
func (c *fastConn) endIdleWait() (cut bool) {
	if c.waitPhase == phaseBusy {
		return false
	}
	cut = c.endWait(c.waitPhase)
	c.waitPhase = phaseBusy
	return cut
}

// Where serve's ordinary path takes over from a session (fastConn.stage).
const (
	stageEnd     = iota // the connection ends
	stageIdle           // wait for the next request's first byte
	stageHead           // read the rest of the head (busy, c.headUntil set)
	stageForward        // forward the request read (busy): it has a body
)

// startHead is the end of the wait for a request's first byte: it sets
// the deadline of its head, from the connection's start for the first.
func (c *fastConn) startHead() {
	cfg := c.s.p.cfg
	if c.first {
		c.headUntil = c.waitStart + int64(cfg.HeaderTimeout)
		c.first = false
	} else {
		c.headUntil = nanotime() + int64(cfg.HeaderTimeout)
	}
}

// refuse answers a request head that readRequest refused, if it has a
// status for it.
func (c *fastConn) refuse(err error) {
	var eh *errHead
	if errors.As(err, &eh) {
		c.writeError(eh.status, eh.msg, true)
	}
}

// step is the session's step (sysConn.session): it serves the requests
// whose head has come whole and that have no body, and says to wait when
// the socket is empty. It leaves the session (false) with c.stage saying
// what serve does next: read a head that has not all come, forward a
// request with a body (its copy reads the client, which a session cannot
// wait for), or end.
func (c *fastConn) step() bool {
	c.endIdleWait() // called at the start or after a wake: not waiting now
	for {
		if c.br.Buffered() == 0 {
			if !c.sc.drained {
				if _, err := c.br.Peek(1); err != nil && err != errWouldBlock {
					return false // stageEnd
				}
			}
			if c.br.Buffered() == 0 {
				c.idleWait()
				return true // any byte from now on wakes the session
			}
		}
		if !c.s.setBusy(c, true) {
			return false
		}
		c.startHead()
		if !headBuffered(c.br) {
			c.stage = stageHead
			return false
		}
		if err := c.readRequest(); err != nil {
			c.refuse(err)
			return false
		}
		if !c.bodyless() {
			c.stage = stageForward
			return false
		}
		if !c.forward() || !c.s.setBusy(c, false) {
			return false
		}
		c.waitStart = nanotime()
	}
}

// forward sends the current request to a backend and its response to the
// client. It returns whether the client connection may carry another
// request.
func (c *fastConn) forward() bool {
	p := c.s.p
	r := &c.req
	rt := p.routeBytes(r.path)
	rt.requests.Add(1)
	p.injectCost()
	var hreq *http.Request
	if rt.needsRequest {
		hreq = c.httpRequest()
	}
	if r.expectContinue && (r.chunked || r.contentLength > 0) {
		c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if c.bw.Flush() != nil {
			return false
		}
	}
	for try := 0; ; try++ {
		b := p.pick(rt, hreq)
		if b == nil {
			return c.writeError(http.StatusBadGateway, errNoBackend.Error(), !c.bodyless())
		}
		var start int64
		if rt.observer != nil {
			start = nanotime()
		}
		u := rt.ups[b.Index()]
		keep, sent, err := c.exchange(u, b, rt.observer, start)
		if sent {
			return keep // exchange released b
		}
		b.Release()
		if errors.Is(err, errClientGone) {
			return false // nobody to answer, and no fault of the backend's
		}
		b.AddError()
		var de *dialError
		if !errors.As(err, &de) {
			return c.writeError(http.StatusBadGateway, fmt.Sprintf("balancer: upstream %s: %v", b.Addr, err), true)
		}
		b.MarkDown(p.cfg.DownFor)
		if try >= p.cfg.Retries {
			return c.writeError(http.StatusBadGateway, fmt.Sprintf("balancer: upstream %s: %v", b.Addr, err), !c.bodyless())
		}
		p.retries.Add(1)
	}
}

// bodyless says whether the current request has no body, so the client
// connection may go on after an error answer.
func (c *fastConn) bodyless() bool { return !c.req.chunked && c.req.contentLength <= 0 }

// httpRequest builds the net/http view of the current request that
// policies reading the request (hash) need.
func (c *fastConn) httpRequest() *http.Request {
	r := &c.req
	h := make(http.Header)
	for _, ln := range c.lines[1:] {
		line := c.head[ln[0]:ln[1]]
		colon := bytes.IndexByte(line, ':')
		h.Add(string(line[:colon]), string(trimOWS(line[colon+1:])))
	}
	return &http.Request{
		Method: string(r.method),
		URL:    &url.URL{Path: string(r.path), RawQuery: string(r.query)},
		Header: h,
		Host:   string(r.host),
	}
}

// clientGone says whether the client closed its connection. Bytes it sent
// meanwhile (a pipelined request) stay buffered.
func (c *fastConn) clientGone() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := c.br.Peek(1)
	c.nc.SetReadDeadline(time.Time{})
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func (c *fastConn) closing() bool { return c.s.isClosing() }

// writeError answers the client with status and msg; closeConn also ends
// the connection. It returns whether the connection goes on.
func (c *fastConn) writeError(status int, msg string, closeConn bool) bool {
	closeConn = closeConn || c.req.close
	w := c.bw
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\n",
		status, http.StatusText(status), len(msg)+1)
	if closeConn {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
	if string(c.req.method) != "HEAD" {
		w.WriteString(msg)
		w.WriteByte('\n')
	}
	if w.Flush() != nil {
		return false
	}
	return !closeConn
}
