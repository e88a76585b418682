package results

import (
	"encoding/json"
	"fmt"
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
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("results: histogram: %w", err)
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
