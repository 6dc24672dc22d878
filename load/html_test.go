package load

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHTMLReporter renders the report of a short in-process run: one page,
// one SVG per plot, each well-formed, every mode named, nothing loaded
// from elsewhere.
func TestHTMLReporter(t *testing.T) {
	url := referenceServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := Config{
		Modes: mustModes(t, "poll:100ms,sse,partial"),
		Rate:  40, Tasks: 12, Sessions: 2, Seed: 3, Interval: Duration(100 * time.Millisecond),
		Shape: Shape{Chunks: FixedInt(3), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "10ms..40ms")},
	}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: url, Label: "in-process"}}})
	if err != nil {
		t.Fatal(err)
	}
	res.Warnings = append(res.Warnings, "a <test> warning")
	var buf bytes.Buffer
	if err := HTMLReporter(res)(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("not an HTML page:\n%.300s", page)
	}
	for _, tag := range []string{"html", "head", "body", "table", "figure", "svg", "style"} {
		if o, c := strings.Count(page, "<"+tag), strings.Count(page, "</"+tag+">"); o != c || o == 0 {
			t.Errorf("<%s: %d opened, %d closed", tag, o, c)
		}
	}
	svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 5 {
		t.Errorf("%d SVG plots, want 5", len(svgs))
	}
	for i, s := range svgs {
		if err := wellFormed(s); err != nil {
			t.Errorf("SVG %d: %v", i+1, err)
		}
		if strings.Contains(s, "<?xml") || !strings.Contains(s, "sans-serif") {
			t.Errorf("SVG %d: XML prolog or no generic font family", i+1)
		}
	}
	// The line plots' legends sit in a strip right of the data: no line
	// crosses into it, and the mode names are in it (they used to be drawn
	// over the lines, at the top right of the data).
	edge := float64(plotWidth - svgMargin - legendWidth) // the plot is drawn from svgMargin
	for i, s := range svgs[:min(3, len(svgs))] {
		for _, d := range regexp.MustCompile(`<path d="([^"]+)"`).FindAllStringSubmatch(s, -1) {
			xs := regexp.MustCompile(`[ML]([0-9.]+),`).FindAllStringSubmatch(d[1], -1)
			left, right := 0, 0
			for _, x := range xs {
				if v, _ := strconv.ParseFloat(x[1], 64); v < edge {
					left++
				} else {
					right++
				}
			}
			if left > 0 && right > 0 {
				t.Errorf("SVG %d: a path crosses into the legend strip at x=%.1fpt: %.80s", i+1, edge, d[1])
			}
		}
		for _, m := range regexp.MustCompile(`<text x="([0-9.]+)"[^>]*>(poll:100ms|sse|partial)( p99| p50)?</text>`).FindAllStringSubmatch(s, -1) {
			if v, _ := strconv.ParseFloat(m[1], 64); v < edge {
				t.Errorf("SVG %d: legend %q at x=%.1fpt, in the data (strip from %.1fpt)", i+1, m[2], v, edge)
			}
		}
	}
	// The plots' fonts are embedded as data: URLs; nothing else is loaded.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|@import|url\((?:[^d]|d[^a]|da[^t])|<script|<link`).FindString(page); m != "" {
		t.Errorf("the page refers to a resource: %q", m)
	}
	if n := strings.Count(page, "url(data:"); n == 0 {
		t.Error("the plots' fonts are not embedded")
	}
	for _, want := range []string{"poll:100ms", "sse", "partial", "90%", "Time to result by percentile",
		"Discovery delay by percentile", "Requests per task", "Bytes per task", "a &lt;test&gt; warning", "seed&#34;: 3", res.Machine.GoVersion} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		if _, err := d.Token(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestHTMLReporterBadHistogram: a histogram that does not decode is an
// error, not a page.
func TestHTMLReporterBadHistogram(t *testing.T) {
	r := &Result{Modes: []ModeResult{{Name: "sse", TTR: Stats{Count: 1, HDR: "not a histogram"}}}}
	if err := HTMLReporter(r)(new(bytes.Buffer)); err == nil {
		t.Error("no error")
	}
}

// TestBarChartRoom: the tallest bar stops below the frame and the first
// and last bars have half a slot beside them, so neither the bar nor the
// last mode's name ("partial", once clipped) touches the edge.
func TestBarChartRoom(t *testing.T) {
	r := &Result{Modes: []ModeResult{{Name: "poll:1s"}, {Name: "sse"}, {Name: "partial"}}}
	vals := []float64{3, 7, 5}
	p, err := barChart(r, "Requests per task", "requests", func(m *ModeResult) float64 {
		for i := range r.Modes {
			if &r.Modes[i] == m {
				return vals[i]
			}
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 7*1.1 {
		t.Errorf("y axis up to %g for a tallest bar of 7: the bar touches the frame", p.Y.Max)
	}
	if p.X.Min > -0.5 || p.X.Max < 2.5 {
		t.Errorf("x axis %g..%g for bars at 0..2: the end bars' names are cut", p.X.Min, p.X.Max)
	}
}
