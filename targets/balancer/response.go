package balancer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/lbbench/lbbench/balance"
)

// The forwarder's response parsing and relay to the client.

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
