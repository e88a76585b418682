package workloads

import (
	"strconv"
	"strings"
)

// TimesHeader is the response header in which a worker stamps, on
// CLOCK_MONOTONIC in nanoseconds (internal/monoclock), when it received a
// request (before waiting for a free slot), began serving it and was done,
// and when it accepted the request's connection: "RECEIVED BEGAN DONE
// ACCEPTED" (ACCEPTED may be left out). Every process on a host shares that clock, so
// stamps of different workers compare; a server that does not stamp (an
// exec'd one) sends none, and nothing is guessed in its place.
const TimesHeader = "X-Lbbench-Times"

// Times are a response's TimesHeader stamps; Accepted is 0 when the
// server did not say.
type Times struct{ Received, Began, Done, Accepted int64 }

// FormatTimes writes t as TimesHeader's value.
func FormatTimes(t Times) string {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, t.Received, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, t.Began, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, t.Done, 10)
	if t.Accepted > 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.Accepted, 10)
	}
	return string(b)
}

// ParseTimes reads TimesHeader's value; ok is false unless it holds three
// or four positive stamps in order (the connection accepted before the
// request was received).
func ParseTimes(v string) (t Times, ok bool) {
	f := strings.Fields(v)
	if len(f) != 3 && len(f) != 4 {
		return Times{}, false
	}
	var n [4]int64
	for i, s := range f {
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || x <= 0 {
			return Times{}, false
		}
		n[i] = x
	}
	t = Times{Received: n[0], Began: n[1], Done: n[2], Accepted: n[3]}
	if t.Began < t.Received || t.Done < t.Began || (len(f) == 4 && t.Accepted > t.Received) {
		return Times{}, false
	}
	return t, true
}
