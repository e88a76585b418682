package balancer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
)

// The forwarder's request parsing: reading a head, checking its request
// line and header fields, and which headers go upstream.

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

// readRequest reads and checks the next request head into c.req: the
// request line, the target, then the header fields.
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
	if err := r.parseRequestLine(c.head[c.lines[0][0]:c.lines[0][1]]); err != nil {
		return err
	}
	if err := r.parseTarget(); err != nil {
		return err
	}
	return c.parseFields()
}

// parseRequestLine parses "METHOD TARGET HTTP/1.x" into r.
func (r *fastReq) parseRequestLine(line []byte) error {
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
	return nil
}

// parseTarget sets r's path and query from its target: the origin form,
// "*" for OPTIONS, or the absolute form (whose host then stands for the
// Host header).
func (r *fastReq) parseTarget() error {
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
	return nil
}

// parseFields checks every header line of the head and records in c.req
// what the forwarder acts on: framing (Content-Length, Transfer-Encoding),
// Host, Connection, Expect and the forwarding headers.
func (c *fastConn) parseFields() error {
	r := &c.req
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
		var err error
		switch {
		case equalFold(name, "content-length"):
			err = r.setContentLength(value)
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
			r.addConnection(value)
		case equalFold(name, "expect"):
			if equalFold(value, "100-continue") {
				r.expectContinue = true
			}
		case equalFold(name, "x-forwarded-for"):
			r.xff = append(r.xff, value)
		case equalFold(name, "forwarded"):
			r.forwarded = append(r.forwarded, value)
		}
		if err != nil {
			return err
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

// setContentLength records a Content-Length value; a repeated one must
// agree.
func (r *fastReq) setContentLength(value []byte) error {
	n, ok := parseLength(value)
	if !ok {
		return badRequest("invalid Content-Length")
	}
	if r.contentLength >= 0 && n != r.contentLength {
		return badRequest("conflicting Content-Length headers")
	}
	r.contentLength = n
	return nil
}

// addConnection records a Connection header's tokens: close, keep-alive
// (for HTTP/1.0) and the names of hop-by-hop headers to drop.
func (r *fastReq) addConnection(value []byte) {
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

func methodHasBody(m []byte) bool {
	return string(m) == "POST" || string(m) == "PUT" || string(m) == "PATCH"
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
