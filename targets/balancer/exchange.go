package balancer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/lbbench/lbbench/balance"
)

// The forwarder's upstream exchange: sending a request head on a pooled
// connection and waiting for the answer, the client watched meanwhile.

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
