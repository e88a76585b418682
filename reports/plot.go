package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lbbench/lbbench/results"
)

// The plots are inline SVG computed here and written by html/template, so
// the page needs no script and loads nothing.

// palette is Okabe and Ito's colour-blind-safe set, in an order that keeps
// the first colours far apart; yellow, the weakest on white, comes last.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// dashes and markers tell series apart without colour (and in print).
var dashes = []string{"", "8 4", "2 3", "10 3 2 3", "5 2", "1 3", "12 2 2 2 2 2", "4 4"}

var markerShapes = []string{"circle", "square", "triangle", "diamond", "down", "plus", "cross", "star"}

// style is how one variant is drawn everywhere in a report.
type style struct {
	Color, Dash, Marker string
	// Swatch is a legend sample: a short line with the marker.
	Swatch string
}

func styleFor(i int) style {
	n := len(palette)
	// Beyond 8 variants the colours repeat; the dash and marker shift so
	// the pair stays distinct.
	s := style{Color: palette[i%n], Dash: dashes[(i+i/n)%len(dashes)], Marker: markerShapes[(i+2*(i/n))%len(markerShapes)]}
	s.Swatch = markerPath(s.Marker, 15, 7, 4)
	return s
}

// markerPath returns an SVG path of a marker of radius r centred on (x, y).
func markerPath(shape string, x, y, r float64) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	p := func(pts ...float64) string {
		var b strings.Builder
		for i := 0; i < len(pts); i += 2 {
			if i == 0 {
				b.WriteString("M")
			} else {
				b.WriteString("L")
			}
			b.WriteString(f(x + pts[i]*r))
			b.WriteString(" ")
			b.WriteString(f(y + pts[i+1]*r))
		}
		b.WriteString("Z")
		return b.String()
	}
	switch shape {
	case "square":
		return p(-0.85, -0.85, 0.85, -0.85, 0.85, 0.85, -0.85, 0.85)
	case "triangle":
		return p(0, -1.1, 1, 0.8, -1, 0.8)
	case "down":
		return p(0, 1.1, 1, -0.8, -1, -0.8)
	case "diamond":
		return p(0, -1.2, 1, 0, 0, 1.2, -1, 0)
	case "plus":
		a, b := 0.35, 1.1
		return p(-a, -b, a, -b, a, -a, b, -a, b, a, a, a, a, b, -a, b, -a, a, -b, a, -b, -a, -a, -a)
	case "cross":
		a, b := 0.3, 1.0
		return p(-b, -b+a, -b+a, -b, 0, -a, b-a, -b, b, -b+a, a, 0, b, b-a, b-a, b, 0, a, -b+a, b, -b, b-a, -a, 0)
	case "star":
		var pts []float64
		for k := range 10 {
			rad := 1.15
			if k%2 == 1 {
				rad = 0.5
			}
			a := math.Pi/2 + float64(k)*math.Pi/5
			pts = append(pts, rad*math.Cos(a), -rad*math.Sin(a))
		}
		return p(pts...)
	}
	// circle, as a path so every marker is a <path>
	return fmt.Sprintf("M%s %sa%s %s 0 1 0 %s 0a%s %s 0 1 0 %s 0Z", f(x-r), f(y), f(r), f(r), f(2*r), f(r), f(r), f(-2*r))
}

// plot is one chart: axes, grid and series in a viewBox of W×H.
type plot struct {
	ID, Title    string
	XLabel       string
	YLabel       string
	W, H         float64
	L, R, T, B   float64 // plot area edges
	XTicks       []tick
	YTicks       []tick
	Series       []series
	Bars         []bar
	Refs         []ref
	Empty        string // shown instead when there is nothing to draw
	legendInside bool
}

type tick struct {
	Pos    float64
	Label  string
	Anchor string // text-anchor of the label; "" means middle
}

// series is one variant's line with its markers.
type series struct {
	Name    string
	Style   style
	Path    string
	Markers []point
}

type point struct {
	D, Label string
}

// bar is one bar of a bar chart.
type bar struct {
	X, Y, W, H float64
	Color      string
	Label      string
}

// ref is a reference line across the plot area, such as an even share.
type ref struct {
	X1, Y1, X2, Y2 float64
	Label          string
}

func newPlot(id, title string, w, h float64) *plot {
	return &plot{ID: id, Title: title, W: w, H: h, L: 66, R: w - 34, T: 14, B: h - 56}
}

// nice returns a "nice" step (1, 2 or 5 times a power of ten) giving about
// n ticks over [0, hi].
func nice(hi float64, n int) float64 {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 1
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// linearY sets a y axis from 0 to a nice bound above hi and returns the
// mapping from data to pixels.
func (p *plot) linearY(hi float64, format func(float64) string) func(float64) float64 {
	step := nice(hi, 5)
	top := step * math.Ceil(hi/step)
	if top <= 0 {
		top = step
	}
	y := func(v float64) float64 { return p.B - (p.B-p.T)*v/top }
	for v := 0.0; v <= top+step/2; v += step {
		p.YTicks = append(p.YTicks, tick{Pos: y(v), Label: format(v)})
	}
	return y
}

// linearX sets an x axis from 0 to a nice bound above hi.
func (p *plot) linearX(hi float64, format func(float64) string) func(float64) float64 {
	step := nice(hi, 6)
	top := step * math.Ceil(hi/step)
	if top <= 0 {
		top = step
	}
	x := func(v float64) float64 { return p.L + (p.R-p.L)*v/top }
	for v := 0.0; v <= top+step/2; v += step {
		p.XTicks = append(p.XTicks, tick{Pos: x(v), Label: format(v)})
	}
	return x
}

func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// pathOf joins points into an SVG path.
func pathOf(xs, ys []float64) string {
	var b strings.Builder
	for i := range xs {
		if i == 0 {
			b.WriteString("M")
		} else {
			b.WriteString("L")
		}
		b.WriteString(px(xs[i]))
		b.WriteByte(' ')
		b.WriteString(px(ys[i]))
	}
	return b.String()
}

// msLabel formats milliseconds for an axis.
func msLabel(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// Percentile plot: x is log10(1/(1-p)) from p50 to p99.999, as in
// HdrHistogram's plotter, so each tail "nine" gets the same width.
const (
	hdrLogLo = 0.30102999566398120 // log10(2): p50
	hdrLogHi = 5                   // p99.999
)

// hdrMarks are the percentiles marked on every curve and listed in tables.
var hdrMarks = []struct {
	P     float64
	Label string
}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}, {0.9999, "p99.99"}, {0.99999, "p99.999"}}

// hdrCurve is one histogram's points on the percentile plot, in ms.
type hdrCurve struct {
	name  string
	style style
	h     *results.Histogram
}

// percentilePlot draws every curve on one log 1/(1-p) axis. A curve stops
// at the last percentile its count can resolve (1/(1-p) = count): beyond,
// every percentile is just the maximum.
func percentilePlot(id, title string, curves []hdrCurve, w, h float64) *plot {
	p := newPlot(id, title, w, h)
	p.XLabel, p.YLabel = "percentile (log scale of 1/(1-p))", "latency (ms)"
	x := func(lx float64) float64 { return p.L + (p.R-p.L)*(lx-hdrLogLo)/(hdrLogHi-hdrLogLo) }
	for _, m := range hdrMarks {
		p.XTicks = append(p.XTicks, tick{Pos: x(math.Log10(1 / (1 - m.P))), Label: strings.TrimPrefix(m.Label, "p") + "%"})
	}
	p.XTicks[len(p.XTicks)-1].Anchor = "end" // the last label ends at the plot's edge
	type pts struct{ lx, ms []float64 }
	all := make([]pts, len(curves))
	hi := 0.0
	const steps = 160
	for i, c := range curves {
		if c.h == nil || c.h.Histogram == nil || c.h.TotalCount() == 0 {
			continue
		}
		limit := max(min(math.Log10(float64(c.h.TotalCount())), hdrLogHi), hdrLogLo)
		for k := 0; k <= steps; k++ {
			lx := hdrLogLo + (hdrLogHi-hdrLogLo)*float64(k)/steps
			if lx > limit {
				lx = limit
			}
			ms := float64(c.h.ValueAtQuantile(100*(1-math.Pow(10, -lx)))) / 1000
			all[i].lx = append(all[i].lx, lx)
			all[i].ms = append(all[i].ms, ms)
			hi = max(hi, ms)
			if lx >= limit {
				break
			}
		}
	}
	if hi == 0 {
		p.Empty = "no measured requests"
	}
	y := p.linearY(hi, msLabel)
	for i, c := range curves {
		s := series{Name: c.name, Style: c.style}
		xs := make([]float64, len(all[i].lx))
		ys := make([]float64, len(all[i].lx))
		for k := range xs {
			xs[k], ys[k] = x(all[i].lx[k]), y(all[i].ms[k])
		}
		s.Path = pathOf(xs, ys)
		if c.h != nil && c.h.Histogram != nil {
			n := float64(c.h.TotalCount())
			for _, m := range hdrMarks {
				if n == 0 || 1/(1-m.P) > n*1.0000001 {
					break
				}
				v := float64(c.h.ValueAtQuantile(100*m.P)) / 1000
				s.Markers = append(s.Markers, point{D: markerPath(c.style.Marker, x(math.Log10(1/(1-m.P))), y(v), 4),
					Label: fmt.Sprintf("%s %s: %s ms", c.name, m.Label, msLabel(v))})
			}
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// timeSeries is one variant's values over time.
type timeSeries struct {
	name  string
	style style
	t, v  []float64 // seconds since the start of the measured window; value
}

// timePlot draws values against seconds, on an x axis from 0 to at least
// end.
func timePlot(id, title, ylabel string, ss []timeSeries, end float64, format func(float64) string, w, h float64) *plot {
	p := newPlot(id, title, w, h)
	p.XLabel, p.YLabel = "seconds into the measured window", ylabel
	thi, vhi := end, 0.0
	for _, s := range ss {
		for i := range s.t {
			thi, vhi = max(thi, s.t[i]), max(vhi, s.v[i])
		}
	}
	x := p.linearX(thi, func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) })
	y := p.linearY(vhi, format)
	for _, s := range ss {
		out := series{Name: s.name, Style: s.style}
		xs := make([]float64, len(s.t))
		ys := make([]float64, len(s.t))
		for i := range s.t {
			xs[i], ys[i] = x(s.t[i]), y(s.v[i])
			out.Markers = append(out.Markers, point{D: markerPath(s.style.Marker, xs[i], ys[i], 3),
				Label: fmt.Sprintf("%s at %ss: %s", s.name, strconv.FormatFloat(s.t[i], 'g', 4, 64), format(s.v[i]))})
		}
		out.Path = pathOf(xs, ys)
		p.Series = append(p.Series, out)
	}
	return p
}

// workerBars draws one variant's share of responses per worker, with the
// even share as a reference line; top is the y axis bound in percent,
// shared by every variant so that bars compare across charts.
func workerBars(id, title string, st style, counts []uint64, top float64, w, h float64) *plot {
	p := newPlot(id, title, w, h)
	p.L = 44
	p.XLabel, p.YLabel = "worker", "% of responses"
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 || len(counts) == 0 {
		p.Empty = "no responses attributed to workers"
		return p
	}
	y := p.linearY(top, func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) })
	slot := (p.R - p.L) / float64(len(counts))
	for i, c := range counts {
		share := 100 * float64(c) / float64(total)
		bx := p.L + slot*float64(i) + slot*0.15
		p.Bars = append(p.Bars, bar{X: bx, Y: y(share), W: slot * 0.7, H: p.B - y(share), Color: st.Color,
			Label: fmt.Sprintf("worker %d: %d responses (%.1f%%)", i, c, share)})
		if len(counts) <= 16 || i%max(1, len(counts)/16) == 0 {
			p.XTicks = append(p.XTicks, tick{Pos: bx + slot*0.35, Label: strconv.Itoa(i)})
		}
	}
	even := 100 / float64(len(counts))
	p.Refs = append(p.Refs, ref{X1: p.L, Y1: y(even), X2: p.R, Y2: y(even), Label: fmt.Sprintf("even share %.1f%%", even)})
	return p
}
