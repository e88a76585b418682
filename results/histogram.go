package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram configuration shared by every histogram lbbench records, so that
// any two merge without loss. Values are in microseconds.
const (
	HistLowest  = 1                                   // 1 µs
	HistHighest = int64(time.Hour / time.Microsecond) // 1 h
	HistDigits  = 3
)

// Histogram is an HDR histogram of durations in microseconds. In JSON it is
// the standard base64 V2 compressed encoding ("HISTFAAA..."), which
// HdrHistogram tools in other languages decode too.
type Histogram struct {
	*hdrhistogram.Histogram
}

// NewHistogram returns an empty histogram with the shared configuration.
func NewHistogram() *Histogram {
	return &Histogram{hdrhistogram.New(HistLowest, HistHighest, HistDigits)}
}

// RecordDuration records d, clamped to the histogram's range. Not safe for
// concurrent use.
func (h *Histogram) RecordDuration(d time.Duration) {
	v := d.Microseconds()
	if v < 0 {
		v = 0
	} else if v > HistHighest {
		v = HistHighest
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.RecordValue(v)
}

// Quantile returns the value at quantile q (0 to 1) as a duration.
func (h *Histogram) Quantile(q float64) time.Duration {
	return time.Duration(h.ValueAtQuantile(q*100)) * time.Microsecond
}

// CountAbove is how many values of h lie above d, at the histogram's
// resolution: a value counts when its bucket starts above d.
func (h *Histogram) CountAbove(d time.Duration) uint64 {
	v := d.Microseconds()
	var n int64
	for _, b := range h.Distribution() {
		if b.From > v {
			n += b.Count
		}
	}
	return uint64(n)
}

// MergeFrom adds every value of o to h. Dropping any value is an error:
// merged figures must be lossless.
func (h *Histogram) MergeFrom(o *Histogram) error {
	if o == nil || o.Histogram == nil {
		return nil
	}
	if dropped := h.Merge(o.Histogram); dropped != 0 {
		return fmt.Errorf("results: histogram merge dropped %d values", dropped)
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	if h == nil || h.Histogram == nil {
		return []byte("null"), nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("results: encode histogram: %w", err)
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON implements json.Unmarshaler.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' && !bytes.HasPrefix(data, histogramPrefix) {
		// Also what keeps checkShape's count of histograms exact.
		return fmt.Errorf("results: histogram: not a V2 compressed histogram (base64 beginning HISTF, unescaped): %.20q", data)
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("results: histogram: %w", err)
	}
	if err := checkEncoded(s); err != nil {
		return fmt.Errorf("results: decode histogram: %w", err)
	}
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return fmt.Errorf("results: decode histogram: %w", err)
	}
	h.Histogram = d
	return nil
}

// Summary is a histogram's headline figures.
type Summary struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"mean"`
	P50   time.Duration `json:"p50"`
	P90   time.Duration `json:"p90"`
	P99   time.Duration `json:"p99"`
	P999  time.Duration `json:"p999"`
	Max   time.Duration `json:"max"`
}

// Summarize returns h's headline figures.
func (h *Histogram) Summarize() Summary {
	if h == nil || h.Histogram == nil {
		return Summary{}
	}
	return Summary{
		Count: h.TotalCount(),
		Mean:  time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:   h.Quantile(0.50),
		P90:   h.Quantile(0.90),
		P99:   h.Quantile(0.99),
		P999:  h.Quantile(0.999),
		Max:   time.Duration(h.Max()) * time.Microsecond,
	}
}

// Sizes of the V2 compressed encoding's outer header (cookie, length of the
// compressed contents) and of the header inside the compressed contents
// (cookie, payload length, normalizing offset, significant digits, lowest
// and highest trackable values, conversion ratio).
const (
	encodedOuterHeader = 8
	encodedInnerHeader = 40
	compressedCookie   = 0x1c849304
	contentsCookie     = 0x1c849303
)

// checkEncoded reads the header of a base64 V2 compressed histogram and
// refuses a geometry lbbench never writes (lowest below HistLowest,
// highest above HistHighest, more than HistDigits significant digits)
// before anything is allocated for its counts: the decoder allocates the
// whole counts array the header declares, about 25 GB for 1 to MaxInt64 at
// 5 digits, from a string of a few dozen bytes. With the geometry bounded,
// a decoded histogram takes at most about 180 KB.
func checkEncoded(s string) error {
	// Only the first bytes are needed: the outer header and the start of
	// the zlib stream, which holds the inner header.
	head := s
	if len(head) > 4096 {
		head = head[:4096]
	}
	raw, err := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	if len(raw) < encodedOuterHeader {
		return fmt.Errorf("too short: %d bytes, need at least %d", len(raw), encodedOuterHeader)
	}
	if c := binary.BigEndian.Uint32(raw) &^ 0xf0; c != compressedCookie {
		return fmt.Errorf("not a V2 compressed histogram (cookie %#x)", c)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[encodedOuterHeader:]))
	if err != nil {
		return fmt.Errorf("compressed contents: %w", err)
	}
	defer z.Close()
	var h [encodedInnerHeader]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return fmt.Errorf("compressed contents: header: %w", err)
	}
	if c := binary.BigEndian.Uint32(h[0:]) &^ 0xf0; c != contentsCookie {
		return fmt.Errorf("not a V2 histogram (cookie %#x)", c)
	}
	digits := int32(binary.BigEndian.Uint32(h[12:]))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	highest := int64(binary.BigEndian.Uint64(h[24:]))
	ratio := math.Float64frombits(binary.BigEndian.Uint64(h[32:]))
	if digits < 1 || digits > HistDigits {
		return fmt.Errorf("declares %d significant digits; lbbench writes %d (a file from elsewhere or corrupt)", digits, HistDigits)
	}
	if lowest < HistLowest || highest > HistHighest || highest < 2*lowest {
		return fmt.Errorf("declares the range %d to %d; lbbench writes %d to %d µs (a file from elsewhere or corrupt)", lowest, highest, HistLowest, HistHighest)
	}
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) || ratio <= 0 {
		return fmt.Errorf("declares the conversion ratio %g", ratio)
	}
	return nil
}
