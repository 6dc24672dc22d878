package load

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plots of the HTML report, drawn by gonum/plot as SVG and inlined.

const (
	plotWidth  = 17 * vg.Centimeter
	plotHeight = 9 * vg.Centimeter
	barHeight  = 7 * vg.Centimeter
)

// plotFont is the plots' font: the SVG names it, and svgText adds generic
// fallbacks so the report renders without it installed.
var plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot with title and axis labels in plotFont and a grid (vertical lines too with vgrid).
func newPlot(title, x, y string, vgrid bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font = font.From(plotFont, 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(plotFont, 10)
		a.Tick.Label.Font = font.From(plotFont, 9)
	}
	p.Title.Padding = vg.Points(6)
	g := plotter.NewGrid()
	if !vgrid {
		g.Vertical.Color = nil
	}
	p.Add(g)
	return p
}

// modeColor is mode i's color in every plot.
func modeColor(i int) color.Color { return plotutil.Color(i) }

// percentilePlot draws the percentile distribution of one latency metric
// per mode, HdrHistogram style: x is 1/(1-q) on a log axis, so 90%, 99%,
// 99.9% are evenly spaced. pick returns a mode's Stats of the metric.
func percentilePlot(r *Result, title, ylabel string, pick func(*ModeResult) Stats) (string, error) {
	p := newPlot(title, "percentile", ylabel, true)
	leg := plot.NewLegend()
	p.X.Scale = plot.LogScale{}
	maxX := 10.0
	lines := 0
	for i := range r.Modes {
		m := &r.Modes[i]
		st := pick(m)
		if st.Count == 0 || st.HDR == "" {
			continue
		}
		h, err := DecodeHDR(st.HDR)
		if err != nil {
			return "", fmt.Errorf("mode %s: histogram: %w", m.Name, err)
		}
		n := h.TotalCount()
		if n == 0 {
			continue
		}
		// 1/(1-q) from 1 (q = 0) to n (the largest value), 40 points a
		// decade.
		top := float64(max(n, 2))
		maxX = max(maxX, top)
		var pts plotter.XYs
		for k := 0; ; k++ {
			x := math.Pow(10, float64(k)/40)
			if x >= top {
				break
			}
			q := 100 * (1 - 1/x)
			pts = append(pts, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(q)) / 1e6})
		}
		pts = append(pts, plotter.XY{X: top, Y: float64(h.Max()) / 1e6})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = modeColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		leg.Add(m.Name, l)
		lines++
	}
	if lines == 0 {
		return "", nil
	}
	p.X.Min = 1
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(maxX)))
	p.X.Tick.Marker = percentileTicks{}
	p.Y.Min = 0
	return svgText(p, &leg, plotWidth, plotHeight)
}

// percentileTicks labels 1/(1-q) at its powers of ten: 0%, 90%, 99%, ...
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for d := 0; math.Pow(10, float64(d)) <= hi*1.0001; d++ {
		x := math.Pow(10, float64(d))
		if x < lo/1.0001 {
			continue
		}
		label := "0%"
		if d > 0 {
			label = fmt.Sprintf("%.*f%%", max(d-2, 0), 100*(1-1/x))
		}
		ts = append(ts, plot.Tick{Value: x, Label: label})
		for k := 2; k < 10; k++ {
			if v := x * float64(k); v <= hi*1.0001 {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	return ts
}

// timelinePlot draws each mode's per-interval p50 (dashed) and p99
// (solid) time to result over the run.
func timelinePlot(r *Result) (string, error) {
	p := newPlot("Time to result over the run (per interval)", "seconds since start", "time to result (ms)", true)
	leg := plot.NewLegend()
	lines := 0
	for i := range r.Modes {
		var p50, p99 plotter.XYs
		for _, iv := range r.Intervals {
			if i >= len(iv.Modes) || iv.Modes[i].Completed == 0 {
				continue
			}
			x := iv.EndMs / 1000
			p50 = append(p50, plotter.XY{X: x, Y: iv.Modes[i].TTRP50Ms})
			p99 = append(p99, plotter.XY{X: x, Y: iv.Modes[i].TTRP99Ms})
		}
		if len(p99) == 0 {
			continue
		}
		for j, pts := range []plotter.XYs{p99, p50} {
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return "", err
			}
			l.Color, s.Color = modeColor(i), modeColor(i)
			l.Width = vg.Points(1.5)
			s.Radius = vg.Points(1.5)
			s.Shape = draw.CircleGlyph{}
			name := r.Modes[i].Name + " p99"
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				l.Width = vg.Points(1)
				name = r.Modes[i].Name + " p50"
			}
			p.Add(l, s)
			leg.Add(name, l)
		}
		lines++
	}
	if lines == 0 {
		return "", nil
	}
	p.X.Min = 0
	p.Y.Min = 0
	return svgText(p, &leg, plotWidth, plotHeight)
}

// barPlot draws one bar per mode.
func barPlot(r *Result, title, ylabel string, value func(*ModeResult) float64) (string, error) {
	p, err := barChart(r, title, ylabel, value)
	if err != nil {
		return "", err
	}
	return svgText(p, nil, plotWidth/2, barHeight)
}

// barChart is barPlot's plot.
func barChart(r *Result, title, ylabel string, value func(*ModeResult) float64) (*plot.Plot, error) {
	p := newPlot(title, "", ylabel, false)
	names := make([]string, len(r.Modes))
	for i := range r.Modes {
		m := &r.Modes[i]
		names[i] = m.Name
		b, err := plotter.NewBarChart(plotter.Values{value(m)}, vg.Points(28))
		if err != nil {
			return nil, err
		}
		b.XMin = float64(i)
		b.Color = modeColor(i)
		b.LineStyle.Width = 0
		p.Add(b)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Font = font.From(plotFont, 9)
	// Names wider than their bar's slot (many modes, or a mode named with
	// its revision, poll:1s@2026-07-28) are set at an angle, ending under
	// their bar, so that they do not run into each other.
	slot := barDataWidth / vg.Length(len(names))
	if slices.ContainsFunc(names, func(n string) bool { return p.X.Tick.Label.Width(n) > slot }) {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	// Half a slot beside the first and last bar, so their names are not
	// cut at the frame; a tenth above the tallest bar, so it does not
	// touch it.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	top := 0.0
	for i := range r.Modes {
		top = max(top, value(&r.Modes[i]))
	}
	if top > 0 {
		p.Y.Max = top * 1.12
	}
	return p, nil
}

var (
	xmlProlog  = regexp.MustCompile(`(?s)^<\?xml.*?\?>\s*(<!--.*?-->\s*)?`)
	fontFamily = regexp.MustCompile(`font-family:([^;"']+);`)
)

// legendWidth is the strip right of a plot's data that holds its legend,
// so that no legend covers a line.
const legendWidth = 3.4 * vg.Centimeter

// barDataWidth is about the width of a bar chart's data area: its
// plot's, less the y axis and margins.
const barDataWidth = plotWidth/2 - 2*vg.Centimeter

// legendStrip is the width of the strip that holds l: legendWidth, or
// what its longest name needs when that is more (a mode named with its
// revision, poll:1s@2026-07-28, is), so that no name is clipped.
func legendStrip(l *plot.Legend, c draw.Canvas) vg.Length {
	need := l.Rectangle(c).Size().X + l.XOffs + 2*l.Padding
	if need <= legendWidth {
		return legendWidth
	}
	// One em more: a browser's text runs a little wider than measured.
	return need + l.TextStyle.Font.Size
}

// svgMargin is left around a plot's edge.
const svgMargin = vg.Length(3) // points

// svgText draws p as an SVG element to inline in HTML: without the XML
// prolog, with its fonts embedded (text is measured with them when laid
// out, so a browser without them installed would draw wider text than was
// measured and clip it), named before generic families. A legend goes in
// a strip on the right, beside the data, not over it.
func svgText(p *plot.Plot, l *plot.Legend, w, h vg.Length) (string, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	// A margin of 3 pt: gonum sets the title and the y label flush with
	// the edge, where the line box of their font pokes out by a pixel.
	dc := draw.Crop(draw.New(c), svgMargin, -svgMargin, svgMargin, -svgMargin)
	if l != nil {
		l.TextStyle.Font = font.From(plotFont, 9)
		l.Top, l.Left = true, true
		l.Padding = vg.Points(3)
		l.XOffs = vg.Points(4)
		l.YOffs = -p.Title.TextStyle.Font.Size - p.Title.Padding - vg.Points(4)
		strip := legendStrip(l, dc)
		p.Draw(draw.Crop(dc, 0, -strip, 0, 0))
		l.Draw(draw.Crop(dc, w-2*svgMargin-strip, 0, 0, 0))
	} else {
		p.Draw(dc)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := xmlProlog.ReplaceAllString(buf.String(), "")
	s = fontFamily.ReplaceAllString(s, "font-family:'$1',Arial,Helvetica,sans-serif;")
	return s, nil
}
