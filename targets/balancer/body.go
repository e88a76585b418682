package balancer

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
)

// The forwarder's bodies: streamed through a fixed buffer in both
// directions, Content-Length as it is, chunked re-chunked.

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

var errUpstreamBody = errors.New("upstream response body")

// bodyLimit is the nanotime by which the upstream must send more of the
// response body: Config.ReadTimeout from now.
func (c *fastConn) bodyLimit() int64 { return nanotime() + int64(c.s.p.cfg.ReadTimeout) }
