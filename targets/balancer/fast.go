package balancer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lbbench/lbbench/balance"
)

// The layer-7 forwarder Serve runs: a purpose-built HTTP/1.1 server and
// client that forward a request head by copying its bytes, with pooled
// buffers and the proxy's own upstream connections, instead of building
// net/http's Request and Response values for each request (issue 15).
// ServeHTTP (the http.Handler, for use inside another server) keeps the
// net/http path.
//
// What it does to a request: the head is read whole (up to MaxHeaderBytes,
// else 431) and checked (400 for a malformed line, a bad or repeated
// Content-Length, Transfer-Encoding together with Content-Length, or an
// obsolete folded line; 501 for a transfer coding other than chunked; 505
// for a version other than HTTP/1.0 and 1.1). Hop-by-hop headers
// (Connection and the headers it names, Keep-Alive, Proxy-Connection, TE,
// Trailer, Transfer-Encoding, Upgrade, Proxy-Authenticate,
// Proxy-Authorization) and Expect are dropped; Host becomes the
// upstream's, X-Forwarded-For/-Host/-Proto and a Forwarded element are
// set as ServeHTTP sets them. "Expect: 100-continue" is answered by the
// proxy before it reads the body. Bodies are streamed in both directions
// through a fixed buffer, never held whole: Content-Length bodies as they
// are, chunked ones re-chunked (trailers are dropped). A response with
// neither length nor chunking ends the client connection after it.

// fastBufSize is the size of each pooled read and write buffer. A head
// line longer than this is read in pieces (readHead).
const fastBufSize = 16 << 10

var (
	fastReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, fastBufSize) }}
	fastWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, fastBufSize) }}
)

// fastServer serves client connections with the forwarder. It has the
// shape of http.Server's Serve, Shutdown and Close.
type fastServer struct {
	p *Proxy

	listening
	conns map[*fastConn]struct{} // listening.mu

	stopSweep context.CancelFunc // ends the sweeper (sweep.go)
	tick      time.Duration      // how often the sweeper looks

	emptyReads atomic.Uint64 // client reads that found nothing, of ended connections: for tests
	killed     atomic.Bool   // Close was called: exchanges end now
}

func newFastServer(p *Proxy) *fastServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &fastServer{p: p, conns: map[*fastConn]struct{}{}, stopSweep: cancel}
	cfg := p.cfg
	s.tick = sweepTick(cfg.HeaderTimeout, cfg.IdleTimeout, cfg.Timeout, cfg.ReadTimeout, clientCheckEvery)
	go s.sweep(ctx, s.tick)
	return s
}

// Serve accepts connections on ln until Shutdown or Close, then returns
// http.ErrServerClosed. It closes ln.
func (s *fastServer) Serve(ln net.Listener) error {
	if !s.begin(ln) {
		return http.ErrServerClosed
	}
	return acceptLoop(ln, s.isClosing, func(nc net.Conn) {
		s.p.clientConns.Add(1)
		c := &fastConn{s: s, nc: nc}
		c.stepFn = c.step
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	})
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Shutdown stops accepting, closes idle connections at once and busy ones
// after their response, and waits for them until ctx is done (then it
// closes them and returns ctx's error).
func (s *fastServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.mu.Unlock()
	// The sweeper keeps enforcing timeouts while the busy connections
	// finish; it ends with them (or in Close).
	defer s.stopSweep()
	return drain(ctx, 10*time.Millisecond, func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if !c.busy.Load() {
				c.nc.Close()
			}
		}
		return len(s.conns)
	}, &s.wg, s.Close)
}

// Close closes the listener and every connection at once. A connection
// serving in a session (sysConn.session) keeps its socket until the
// session's step returns, and closing the socket waits for that, which an
// upstream that does not answer would hold up for good (the sweeper stops
// here): so Close also closes the upstream connection each one reads (an
// exchange that stores its upstream connection after this sees killed and
// closes it itself), and does not wait for the client sockets to close.
func (s *fastServer) Close() error {
	s.mu.Lock()
	s.stopAcceptingLocked()
	s.killed.Store(true)
	for c := range s.conns {
		if uc := c.upc.Load(); uc != nil {
			uc.Close()
		}
		go c.nc.Close()
	}
	s.mu.Unlock()
	s.stopSweep()
	return nil
}

// setBusy marks c busy or idle; it returns false if c must end because
// the server is shutting down. It takes no lock: c stores busy, then loads
// closing; Shutdown stores closing, then loads every busy (sequentially
// consistent atomics), so at least one of them sees the other's store and
// an idle connection is never left open by Shutdown nor closed before its
// response.
func (s *fastServer) setBusy(c *fastConn, busy bool) bool {
	c.busy.Store(busy)
	return !s.closing.Load()
}

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

// headBuffered says whether br holds a whole head, so that readHead reads
// it without reading the connection: the lines readHead would read, up to
// the empty line after the first one that is not empty.
func headBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	lines := 0
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		n := i
		if n > 0 && b[n-1] == '\r' {
			n--
		}
		if n == 0 && lines > 0 {
			return true
		}
		if n > 0 {
			lines++
		}
		b = b[i+1:]
	}
}

// readHead reads a head (start line and header lines up to the blank
// line) from br into c.head and c.lines. tooBig is the error for a head
// over MaxHeaderBytes. A line longer than br's buffer is read in pieces:
// the limit is on the whole head, as the README and MaxHeaderBytes say,
// not on one line.
func (c *fastConn) readHead(br *bufio.Reader, tooBig error, headp *[]byte, linesp *[][2]int) error {
	head, lines := (*headp)[:0], (*linesp)[:0]
	defer func() { *headp, *linesp = head, lines }()
	size := 0 // bytes of the head read, line ends and stray CRLFs included
	for {
		start := len(head)
		line, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep this piece, read on.
			if size += len(line); size > MaxHeaderBytes {
				return tooBig
			}
			head = append(head, line...)
			line, err = br.ReadSlice('\n')
		}
		if err != nil {
			if len(lines) == 0 && len(line) == 0 && len(head) == 0 {
				return err
			}
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if size += len(line); size > MaxHeaderBytes {
			return tooBig
		}
		head = append(head, line...)
		n := len(head) - 1 // the '\n'
		if n > start && head[n-1] == '\r' {
			n--
		}
		head = head[:n]
		if n == start {
			if len(lines) == 0 {
				continue // a stray CRLF before a request (RFC 9112 section 2.2)
			}
			return nil
		}
		lines = append(lines, [2]int{start, n})
	}
}

var (
	errReqTooBig  = &errHead{http.StatusRequestHeaderFieldsTooLarge, "request header fields too large"}
	errRespTooBig = errors.New("response head too large")
)

func badRequest(msg string) error { return &errHead{http.StatusBadRequest, msg} }

// readRequest reads and checks the next request head into c.req.
func (c *fastConn) readRequest() error {
	// Reset first: an error answer to a head that does not parse must not
	// see the previous request (a HEAD would make it leave out its body).
	r := &c.req
	*r = fastReq{connTokens: r.connTokens[:0], xff: r.xff[:0], forwarded: r.forwarded[:0], contentLength: -1}
	if err := c.readHead(c.br, errReqTooBig, &c.head, &c.lines); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return badRequest("unexpected end of the request head")
		}
		return err
	}
	line := c.head[c.lines[0][0]:c.lines[0][1]]
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return badRequest("malformed request line")
	}
	rest := line[sp1+1:]
	sp2 := bytes.LastIndexByte(rest, ' ')
	if sp2 <= 0 {
		return badRequest("malformed request line")
	}
	r.method, r.target = line[:sp1], rest[:sp2]
	version := rest[sp2+1:]
	if !isToken(r.method) || bytes.IndexByte(r.target, ' ') >= 0 || hasCTL(r.target) {
		return badRequest("malformed request line")
	}
	switch string(version) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		r.http10, r.close = true, true
	default:
		if len(version) == 8 && string(version[:5]) == "HTTP/" && isDigit(version[5]) && version[6] == '.' && isDigit(version[7]) {
			return &errHead{http.StatusHTTPVersionNotSupported, "unsupported HTTP version"}
		}
		return badRequest("malformed HTTP version")
	}
	switch {
	case r.target[0] == '/':
		r.path = r.target
	case string(r.method) == "OPTIONS" && string(r.target) == "*":
		r.path = r.target
	case hasPrefixFold(r.target, "http://") || hasPrefixFold(r.target, "https://"):
		// Absolute form: forward the origin form.
		t := r.target[bytes.Index(r.target, []byte("//"))+2:]
		i := bytes.IndexByte(t, '/')
		if i < 0 {
			r.path = []byte("/")
		} else {
			r.path = t[i:]
		}
		if r.host == nil {
			if i < 0 {
				r.host = t
			} else {
				r.host = t[:i]
			}
		}
	default:
		return badRequest("unsupported request target")
	}
	if i := bytes.IndexByte(r.path, '?'); i >= 0 {
		r.path, r.query = r.path[:i], r.path[i+1:]
	}
	var te, sawHost bool
	for _, ln := range c.lines[1:] {
		h := c.head[ln[0]:ln[1]]
		if h[0] == ' ' || h[0] == '\t' {
			return badRequest("obsolete line folding")
		}
		colon := bytes.IndexByte(h, ':')
		if colon <= 0 || !isToken(h[:colon]) {
			return badRequest("malformed header line")
		}
		name, value := h[:colon], trimOWS(h[colon+1:])
		if hasCTL(value) {
			return badRequest("control character in a header value")
		}
		switch {
		case equalFold(name, "content-length"):
			n, ok := parseLength(value)
			if !ok {
				return badRequest("invalid Content-Length")
			}
			if r.contentLength >= 0 && n != r.contentLength {
				return badRequest("conflicting Content-Length headers")
			}
			r.contentLength = n
		case equalFold(name, "transfer-encoding"):
			if te {
				return badRequest("repeated Transfer-Encoding")
			}
			te = true
			if !equalFold(value, "chunked") {
				return &errHead{http.StatusNotImplemented, "unsupported transfer coding"}
			}
			r.chunked = true
		case equalFold(name, "host"):
			if sawHost {
				return badRequest("repeated Host")
			}
			sawHost = true
			if r.host == nil {
				r.host = value
			}
		case equalFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = trimOWS(tok)
				switch {
				case equalFold(tok, "close"):
					r.close = true
				case equalFold(tok, "keep-alive"):
					if r.http10 {
						r.close = false
					}
				}
				if len(tok) > 0 {
					r.connTokens = append(r.connTokens, tok)
				}
			}
		case equalFold(name, "expect"):
			if equalFold(value, "100-continue") {
				r.expectContinue = true
			}
		case equalFold(name, "x-forwarded-for"):
			r.xff = append(r.xff, value)
		case equalFold(name, "forwarded"):
			r.forwarded = append(r.forwarded, value)
		}
	}
	if r.chunked && r.contentLength >= 0 {
		return badRequest("both Transfer-Encoding and Content-Length (request smuggling)")
	}
	if !sawHost && !r.http10 {
		return badRequest("missing Host header")
	}
	return nil
}

// requestHopByHop says whether a request header is not forwarded: it is
// hop-by-hop, named in Connection, or rewritten by the proxy.
func (c *fastConn) skipHeader(name []byte, connTokens [][]byte) bool {
	switch len(name) {
	case 2:
		if equalFold(name, "te") {
			return true
		}
	case 4:
		if equalFold(name, "host") {
			return true
		}
	case 6:
		if equalFold(name, "expect") {
			return true
		}
	case 7:
		if equalFold(name, "trailer") || equalFold(name, "upgrade") {
			return true
		}
	case 9:
		if equalFold(name, "forwarded") {
			return true
		}
	case 10:
		if equalFold(name, "connection") || equalFold(name, "keep-alive") {
			return true
		}
	case 14:
		if equalFold(name, "content-length") {
			return true
		}
	case 16:
		if equalFold(name, "proxy-connection") || equalFold(name, "x-forwarded-host") {
			return true
		}
	case 17:
		if equalFold(name, "transfer-encoding") || equalFold(name, "x-forwarded-proto") {
			return true
		}
	case 15:
		if equalFold(name, "x-forwarded-for") {
			return true
		}
	case 18:
		if equalFold(name, "proxy-authenticate") {
			return true
		}
	case 19:
		if equalFold(name, "proxy-authorization") {
			return true
		}
	}
	for _, t := range connTokens {
		if bytes.EqualFold(t, name) {
			return true
		}
	}
	return false
}

// forward sends the current request to a backend and its response to the
// client. It returns whether the client connection may carry another
// request.
func (c *fastConn) forward() bool {
	p := c.s.p
	r := &c.req
	rt := p.routeBytes(r.path)
	rt.requests.Add(1)
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

// exchange forwards the current request on a connection to u and copies
// the response to the client. sent says whether anything reached the
// client (then keep says whether its connection goes on); if not, err
// says why, and a *dialError means nothing reached the upstream either.
func (c *fastConn) exchange(u *upstream, b *balance.Backend, obs balance.Observer, start int64) (keep, sent bool, err error) {
	for {
		uc, reused, err := u.get(context.Background())
		if err != nil {
			return false, false, err
		}
		uc.used++
		last := !u.keepAlive || (u.closeAfter > 0 && uc.used >= u.closeAfter)
		c.writeUpstreamHead(uc.bw, u, last)
		if err := c.copyRequestBody(uc.bw); err != nil {
			uc.Close()
			if errors.Is(err, errClientBody) {
				b.Release()
				return false, true, nil // the client is gone or sent a bad body: nothing to answer
			}
			return false, false, err
		}
		if uc.sc != nil && uc.br.Buffered() == 0 {
			uc.sc.holdWrite() // sent by readResponse's first read (sysconn.go)
		}
		if err := uc.bw.Flush(); err != nil {
			uc.Close()
			if reused && c.bodyless() && isStale(err) {
				continue
			}
			return false, false, err
		}
		var limit int64
		if u.headerTimeout > 0 {
			limit = nanotime() + int64(u.headerTimeout)
		}
		c.upc.Store(uc)
		if c.s.killed.Load() {
			uc.Close() // Close came before the store: fail now (see Close)
		}
		err = c.readResponse(uc.br, limit)
		if err != nil {
			uc.Close()
			if reused && c.bodyless() && isStale(err) {
				continue
			}
			if isStale(err) {
				err = io.ErrUnexpectedEOF
			}
			return false, false, err
		}
		if obs != nil {
			obs.Observe(b, time.Duration(nanotime()-start))
		}
		keep, upOK := c.relayResponse(uc.br, b)
		if upOK && !last && !c.resp.close {
			u.put(uc)
		} else {
			uc.Close()
		}
		b.Release()
		if !keep || c.br.Buffered() == 0 {
			if c.bw.Flush() != nil {
				keep = false
			}
		}
		return keep, true, nil
	}
}

// isStale says whether err is a reused connection found closed before any
// byte of the response.
func isStale(err error) bool {
	return errors.Is(err, errStaleConn) || isReset(err) || errors.Is(err, io.EOF)
}

var errStaleConn = errors.New("upstream closed the connection")

// writeUpstreamHead writes the request head for the upstream.
func (c *fastConn) writeUpstreamHead(w *bufio.Writer, u *upstream, last bool) {
	r := &c.req
	w.Write(r.method)
	w.WriteByte(' ')
	if r.target[0] == '/' || r.target[0] == '*' {
		w.Write(r.target)
	} else {
		w.Write(r.path)
		if r.query != nil {
			w.WriteByte('?')
			w.Write(r.query)
		}
	}
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(u.host)
	w.WriteString("\r\n")
	for _, ln := range c.lines[1:] {
		h := c.head[ln[0]:ln[1]]
		colon := bytes.IndexByte(h, ':')
		if c.skipHeader(h[:colon], r.connTokens) {
			continue
		}
		w.Write(h)
		w.WriteString("\r\n")
	}
	w.WriteString("X-Forwarded-For: ")
	for _, v := range r.xff {
		w.Write(v)
		w.WriteString(", ")
	}
	w.Write(c.ip)
	if len(r.host) > 0 {
		w.WriteString("\r\nX-Forwarded-Host: ")
		w.Write(r.host)
	}
	w.WriteString("\r\nX-Forwarded-Proto: http\r\n")
	for _, v := range r.forwarded {
		w.WriteString("Forwarded: ")
		w.Write(v)
		w.WriteString("\r\n")
	}
	w.WriteString("Forwarded: ")
	if len(c.ip) > 0 {
		w.WriteString("for=")
		if c.ipv6 {
			w.WriteString(`"[`)
			w.Write(c.ip)
			w.WriteString(`]"`)
		} else {
			w.Write(c.ip)
		}
		w.WriteByte(';')
	}
	if len(r.host) > 0 && bytes.IndexByte(r.host, '"') < 0 && bytes.IndexByte(r.host, '\\') < 0 {
		w.WriteString(`host="`)
		w.Write(r.host)
		w.WriteString(`";`)
	}
	w.WriteString("proto=http\r\n")
	switch {
	case r.chunked:
		w.WriteString("Transfer-Encoding: chunked\r\n")
	case r.contentLength > 0 || r.contentLength == 0 && methodHasBody(r.method):
		w.WriteString("Content-Length: ")
		var num [20]byte
		w.Write(strconv.AppendInt(num[:0], r.contentLength, 10))
		w.WriteString("\r\n")
	}
	if last {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
}

func methodHasBody(m []byte) bool {
	return string(m) == "POST" || string(m) == "PUT" || string(m) == "PATCH"
}

// errClientBody is a request body the client did not finish sending, or
// sent malformed.
var errClientBody = errors.New("client request body")

// copyRequestBody streams the request body to w.
func (c *fastConn) copyRequestBody(w *bufio.Writer) error {
	r := &c.req
	if r.chunked {
		return c.copyChunked(c.br, w, errClientBody)
	}
	if r.contentLength > 0 {
		return c.copyN(c.br, w, r.contentLength, errClientBody, w)
	}
	return nil
}

// copyN copies n bytes from br to w. A read failure is wrapped in
// readErr; flush, if not nil, is flushed whenever br has nothing buffered.
func (c *fastConn) copyN(br *bufio.Reader, w *bufio.Writer, n int64, readErr error, flush *bufio.Writer) error {
	if c.buf == nil {
		c.buf = make([]byte, fastBufSize)
	}
	for n > 0 {
		if readErr == errUpstreamBody && br.Buffered() == 0 {
			if err := c.waitUpstream(br, c.bodyLimit()); err != nil {
				return errors.Join(readErr, err)
			}
		}
		chunk := c.buf
		if int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		k, err := br.Read(chunk)
		if k > 0 {
			if _, werr := w.Write(chunk[:k]); werr != nil {
				return werr
			}
			n -= int64(k)
		}
		if err != nil && n > 0 {
			return errors.Join(readErr, err)
		}
		if flush != nil && n > 0 && br.Buffered() == 0 {
			if err := flush.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyChunked reads a chunked body from br and writes it chunked to w
// (trailers dropped). Read and framing failures are wrapped in readErr.
func (c *fastConn) copyChunked(br *bufio.Reader, w *bufio.Writer, readErr error) error {
	for {
		if readErr == errUpstreamBody && br.Buffered() == 0 {
			if err := c.waitUpstream(br, c.bodyLimit()); err != nil {
				return errors.Join(readErr, err)
			}
		}
		line, err := br.ReadSlice('\n')
		if err != nil {
			return errors.Join(readErr, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = trimOWS(line)
		if len(line) == 0 || len(line) > 15 {
			return errors.Join(readErr, errors.New("malformed chunk size"))
		}
		size, err := strconv.ParseUint(string(line), 16, 64)
		if err != nil {
			return errors.Join(readErr, errors.New("malformed chunk size"))
		}
		if size == 0 {
			// Trailers, up to the blank line.
			for {
				t, err := br.ReadSlice('\n')
				if err != nil {
					return errors.Join(readErr, err)
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					break
				}
			}
			_, err := w.WriteString("0\r\n\r\n")
			return err
		}
		var num [16]byte
		w.Write(strconv.AppendUint(num[:0], size, 16))
		w.WriteString("\r\n")
		if err := c.copyN(br, w, int64(size), readErr, nil); err != nil {
			return err
		}
		crlf, err := br.ReadSlice('\n')
		if err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return errors.Join(readErr, errors.New("malformed chunk end"))
		}
		w.WriteString("\r\n")
		if br.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// readResponse reads the upstream's response head into c.resp, skipping
// informational responses. It reuses c.head: the request head is no longer
// needed once sent.
func (c *fastConn) readResponse(br *bufio.Reader, limit int64) error {
	for {
		if err := c.waitUpstream(br, limit); err != nil {
			var ne net.Error
			if errors.Is(err, errClientGone) || errors.As(err, &ne) && ne.Timeout() {
				return err
			}
			return errors.Join(errStaleConn, err)
		}
		if err := c.readHead(br, errRespTooBig, &c.rhead, &c.rlines); err != nil {
			return err
		}
		rs := &c.resp
		*rs = fastResp{connTokens: rs.connTokens[:0], contentLength: -1}
		line := c.rhead[c.rlines[0][0]:c.rlines[0][1]]
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
			return errors.New("malformed response status line")
		}
		code, err := strconv.Atoi(string(line[9:12]))
		if err != nil || code < 100 || code > 999 || len(line) > 12 && line[12] != ' ' {
			return errors.New("malformed response status code")
		}
		rs.status, rs.statusLine = code, line[9:]
		if line[7] == '0' {
			rs.close = true
		}
		if code >= 100 && code < 200 {
			if code == http.StatusSwitchingProtocols {
				return errors.New("unexpected 101 Switching Protocols")
			}
			continue
		}
		te := false
		for _, ln := range c.rlines[1:] {
			h := c.rhead[ln[0]:ln[1]]
			colon := bytes.IndexByte(h, ':')
			if colon <= 0 || !isToken(h[:colon]) {
				return errors.New("malformed response header line")
			}
			name, value := h[:colon], trimOWS(h[colon+1:])
			switch {
			case equalFold(name, "content-length"):
				n, ok := parseLength(value)
				if !ok || rs.contentLength >= 0 && n != rs.contentLength {
					return errors.New("invalid response Content-Length")
				}
				rs.contentLength = n
			case equalFold(name, "transfer-encoding"):
				te = true
				rs.chunked = equalFold(value, "chunked")
			case equalFold(name, "connection"):
				for tok := range bytes.SplitSeq(value, []byte(",")) {
					tok = trimOWS(tok)
					if equalFold(tok, "close") {
						rs.close = true
					}
					if len(tok) > 0 {
						rs.connTokens = append(rs.connTokens, tok)
					}
				}
			case equalFold(name, "x-worker"):
				rs.hasWorker = true
			}
		}
		if te {
			if !rs.chunked {
				rs.close = true // read to the end of the connection
			}
			rs.contentLength = -1
		}
		return nil
	}
}

// relayResponse writes the response head and copies its body to the
// client. keep says whether the client connection goes on, upOK whether
// the upstream connection was read to the end of the response.
func (c *fastConn) relayResponse(ubr *bufio.Reader, b *balance.Backend) (keep, upOK bool) {
	r, rs := &c.req, &c.resp
	w := c.bw
	noBody := string(r.method) == "HEAD" || rs.status == 204 || rs.status == 304 || rs.status < 200
	untilClose := !noBody && !rs.chunked && rs.contentLength < 0
	closeClient := r.close || untilClose || c.closing()
	w.WriteString("HTTP/1.1 ")
	w.Write(rs.statusLine)
	w.WriteString("\r\n")
	for _, ln := range c.rlines[1:] {
		h := c.rhead[ln[0]:ln[1]]
		colon := bytes.IndexByte(h, ':')
		name := h[:colon]
		if respSkip(name, rs.connTokens) {
			continue
		}
		if equalFold(name, "content-length") && !noBody && rs.contentLength < 0 {
			continue
		}
		w.Write(h)
		w.WriteString("\r\n")
	}
	if !rs.hasWorker {
		// Attribution of a foreign server, as ServeHTTP does.
		w.WriteString("X-Worker: ")
		var num [20]byte
		w.Write(strconv.AppendInt(num[:0], int64(b.Index()), 10))
		w.WriteString("\r\n")
	}
	if !noBody && rs.chunked {
		w.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if closeClient {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
	var err error
	switch {
	case noBody:
	case rs.chunked:
		err = c.copyChunked(ubr, w, errUpstreamBody)
	case rs.contentLength > 0:
		err = c.copyN(ubr, w, rs.contentLength, errUpstreamBody, w)
	case untilClose:
		err = c.copyN(ubr, w, 1<<62, errUpstreamBody, w)
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		// An upstream that failed mid-response: the client sees its
		// connection closed before the announced end.
		w.Flush()
		return false, false
	}
	// The caller flushes, once it released the backend: a client that
	// has its whole response sees the backend no longer busy.
	return !closeClient, !untilClose
}

var errUpstreamBody = errors.New("upstream response body")

// bodyLimit is the nanotime by which the upstream must send more of the
// response body: Config.ReadTimeout from now.
func (c *fastConn) bodyLimit() int64 { return nanotime() + int64(c.s.p.cfg.ReadTimeout) }

// clientCheckEvery is how often a wait for upstream bytes looks whether
// the client is still there.
const clientCheckEvery = 200 * time.Millisecond

var errClientGone = errors.New("the client closed its connection")

// waitUpstream waits until br (reading c.upc) has a byte, the upstream
// fails, nanotime limit passes (zero: no limit) or the client goes away, so
// that an abandoned request does not hold a backend. The sweeper cuts the
// wait every clientCheckEvery (or at limit) to look at the client.
func (c *fastConn) waitUpstream(br *bufio.Reader, limit int64) error {
	for {
		if br.Buffered() > 0 {
			return nil
		}
		until := nanotime() + int64(clientCheckEvery)
		if limit != 0 {
			until = min(until, limit)
		}
		c.wait(phaseUp, until)
		_, err := br.Peek(1)
		c.endWait(phaseUp)
		if err == nil {
			return nil
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return err
		}
		if limit != 0 && nanotime() >= limit {
			return err
		}
		if c.clientGone() {
			return errClientGone
		}
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

// respSkip says whether a response header is not passed to the client.
func respSkip(name []byte, connTokens [][]byte) bool {
	switch {
	case equalFold(name, "connection"), equalFold(name, "keep-alive"), equalFold(name, "proxy-connection"),
		equalFold(name, "te"), equalFold(name, "trailer"), equalFold(name, "transfer-encoding"),
		equalFold(name, "upgrade"), equalFold(name, "proxy-authenticate"), equalFold(name, "proxy-authorization"):
		return true
	}
	for _, t := range connTokens {
		if bytes.EqualFold(t, name) {
			return true
		}
	}
	return false
}

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

// routeBytes is route for a path in bytes; it does not allocate.
func (p *Proxy) routeBytes(path []byte) *route {
	for _, rt := range p.routes {
		if len(path) >= len(rt.prefix) && string(path[:len(rt.prefix)]) == rt.prefix {
			return rt
		}
	}
	return p.fallback
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// tokenChar[c] says whether c may appear in an RFC 9110 token: a visible
// ASCII character other than a delimiter. A table, because every header
// name of every request and response is checked.
var tokenChar = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c)
	}
	return t
}()

// isToken says whether b is a non-empty RFC 9110 token.
func isToken(b []byte) bool {
	for _, ch := range b {
		if !tokenChar[ch] {
			return false
		}
	}
	return len(b) > 0
}

func hasCTL(b []byte) bool {
	for _, ch := range b {
		if ch < ' ' && ch != '\t' || ch == 0x7f {
			return true
		}
	}
	return false
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b with the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

func hasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && equalFold(b[:len(s)], s)
}

// parseLength parses a Content-Length value: digits only, at most 18.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, ch := range b {
		if !isDigit(ch) {
			return 0, false
		}
		n = n*10 + int64(ch-'0')
	}
	return n, true
}
