package balance

import (
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// Hash key sources, as written in the hash policy's key argument.
const (
	// HashKeyPath hashes the request path.
	HashKeyPath = "path"
	// HashKeyHeaderPrefix, followed by a header name, hashes that header's
	// first value: key=header:X-User.
	HashKeyHeaderPrefix = "header:"
	// HashKeyQueryPrefix, followed by a parameter name, hashes that query
	// parameter's first raw (still escaped) value: key=query:user.
	HashKeyQueryPrefix = "query:"
)

func init() {
	Register("hash", func(args map[string]string) (Policy, error) {
		a := newArgs("hash", args)
		key, _ := a.get("key")
		if err := a.done(); err != nil {
			return nil, err
		}
		return NewHash(key)
	})
}

var _ Policy = (*Hash)(nil)

// Hash is the hash policy: consistent hashing of a key taken from each
// request (argument key: path, the default; header:NAME; or query:NAME).
// It uses rendezvous (highest random weight) hashing: every backend scores
// hash(key, backend) and the highest available score wins. A key stays on
// its backend as long as that backend is there and available; when one
// backend of n is removed or down, only its keys move (about 1/n of them),
// and spread over the others; adding one moves about 1/(n+1), all to the
// new backend. KeysMoved measures it. A backend's identity is its address,
// so placements do not depend on list order. A request without the key
// (missing header or parameter) is placed round robin. It needs the
// request, so it is layer-7 only. It is safe for concurrent use.
type Hash struct {
	kind  byte   // 'p' path, 'h' header, 'q' query
	name  string // canonical header name, or "name=" for a query parameter
	spec  string
	fallb RoundRobin
}

func (*Hash) needsRequest() {}

// NewHash returns a Hash policy for key source key (see HashKeyPath and the
// prefixes); empty means HashKeyPath.
func NewHash(key string) (*Hash, error) {
	h := &Hash{spec: key}
	switch {
	case key == "" || key == HashKeyPath:
		h.kind, h.spec = 'p', HashKeyPath
	case strings.HasPrefix(key, HashKeyHeaderPrefix) && validToken(key[len(HashKeyHeaderPrefix):]):
		h.kind, h.name = 'h', textproto.CanonicalMIMEHeaderKey(key[len(HashKeyHeaderPrefix):])
	case strings.HasPrefix(key, HashKeyQueryPrefix) && len(key) > len(HashKeyQueryPrefix) && !strings.ContainsAny(key[len(HashKeyQueryPrefix):], "&=;# "):
		h.kind, h.name = 'q', key[len(HashKeyQueryPrefix):]+"="
	default:
		return nil, fmt.Errorf("balance: policy hash: argument key: %q is not path, header:NAME or query:NAME", key)
	}
	return h, nil
}

// Key returns the key source, for example "header:X-User".
func (h *Hash) Key() string { return h.spec }

// key extracts the request's key; ok is false when the request has none.
func (h *Hash) key(r *http.Request) (string, bool) {
	if r == nil {
		return "", false
	}
	switch h.kind {
	case 'h':
		if v := r.Header[h.name]; len(v) > 0 && v[0] != "" {
			return v[0], true
		}
		return "", false
	case 'q':
		return queryValue(r.URL.RawQuery, h.name)
	}
	return r.URL.Path, true
}

// queryValue returns the raw value of the first parameter of q that starts
// with nameEq ("name="), without allocating.
func queryValue(q, nameEq string) (string, bool) {
	for q != "" {
		var part string
		part, q, _ = strings.Cut(q, "&")
		if v, ok := strings.CutPrefix(part, nameEq); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// Pick returns the available backend with the highest rendezvous weight for
// r's key, or nil if none is available.
func (h *Hash) Pick(pool []*Backend, r *http.Request) *Backend {
	key, ok := h.key(r)
	if !ok {
		return h.fallb.Pick(pool, r)
	}
	return rendezvous(pool, hashString(key))
}

// rendezvous returns the available backend b of pool with the highest
// mix64(k ^ b.hash); ties (vanishingly rare) go to the first.
func rendezvous(pool []*Backend, k uint64) *Backend {
	var best *Backend
	var top uint64
	for _, b := range pool {
		if w := mix64(k ^ b.hash); (best == nil || w > top) && b.Available() {
			best, top = b, w
		}
	}
	return best
}

// KeysMoved reports how many of keys synthetic keys ("k0", "k1", ...) the
// hash policy places on a different address with upstreams after than with
// upstreams before: for example the effect of adding or removing one
// backend. Addresses are compared, so listing order does not matter.
func KeysMoved(before, after []string, keys int) int {
	b, a := NewBackends("", before), NewBackends("", after)
	moved := 0
	for i := range keys {
		k := hashString("k" + strconv.Itoa(i))
		x, y := rendezvous(b, k), rendezvous(a, k)
		if (x == nil) != (y == nil) || (x != nil && x.Addr != y.Addr) {
			moved++
		}
	}
	return moved
}

// validToken reports whether s is a non-empty HTTP token (a header name).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
