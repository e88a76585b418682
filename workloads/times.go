package workloads

import (
	"strconv"
	"strings"
)

// TimesHeader is the response header in which a worker stamps, on
// CLOCK_MONOTONIC in nanoseconds (internal/monoclock), when it received a
// request (before waiting for a free slot), began serving it and was done,
// when it accepted the request's connection, and which clock it read:
// "RECEIVED BEGAN DONE ACCEPTED CLOCK". ACCEPTED is "-" when the server
// cannot tell (an app behind a WSGI or ASGI server); ACCEPTED and CLOCK may
// be left out. CLOCK is monoclock.Host of the stamping process: every
// process of one boot of one host, containers included, shares that clock
// and names it the same, so a reader compares stamps only when CLOCK is
// its own; a server that does not stamp (an exec'd one without
// scenarios/apps/lbbench_times.py) sends none, and nothing is guessed in
// its place.
const TimesHeader = "X-Lbbench-Times"

// Times are a response's TimesHeader stamps; Accepted is 0 when the
// server did not say, Clock "" when it did not name its clock.
type Times struct {
	Received, Began, Done, Accepted int64
	Clock                           string
}

// maxClock bounds a clock name: 8 hex digits, "@" and a time namespace's
// offset in nanoseconds.
const maxClock = 32

// FormatTimes writes t as TimesHeader's value.
func FormatTimes(t Times) string {
	b := make([]byte, 0, 80)
	b = strconv.AppendInt(b, t.Received, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, t.Began, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, t.Done, 10)
	if t.Accepted > 0 || t.Clock != "" {
		b = append(b, ' ')
		if t.Accepted > 0 {
			b = strconv.AppendInt(b, t.Accepted, 10)
		} else {
			b = append(b, '-')
		}
	}
	if t.Clock != "" {
		b = append(b, ' ')
		b = append(b, t.Clock...)
	}
	return string(b)
}

// ParseTimes reads TimesHeader's value; ok is false unless it holds three
// positive stamps in order, then optionally the accept stamp ("-" for
// unknown; the connection accepted before the request was received) and
// a clock name.
func ParseTimes(v string) (t Times, ok bool) {
	f := strings.Fields(v)
	if len(f) < 3 || len(f) > 5 {
		return Times{}, false
	}
	var n [4]int64
	for i, s := range f[:min(len(f), 4)] {
		if i == 3 && s == "-" {
			continue
		}
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || x <= 0 {
			return Times{}, false
		}
		n[i] = x
	}
	t = Times{Received: n[0], Began: n[1], Done: n[2], Accepted: n[3]}
	if len(f) == 5 {
		if !validClock(f[4]) {
			return Times{}, false
		}
		t.Clock = f[4]
	}
	if t.Began < t.Received || t.Done < t.Began || (t.Accepted != 0 && t.Accepted > t.Received) {
		return Times{}, false
	}
	return t, true
}

// validClock reports whether s can be a monoclock.Host name.
func validClock(s string) bool {
	if s == "" || len(s) > maxClock {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && c != '@' && c != '-' {
			return false
		}
	}
	return true
}
