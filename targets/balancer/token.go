package balancer

import "strings"

// HTTP token and field helpers of the forwarder, on byte slices (no
// allocation).

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
