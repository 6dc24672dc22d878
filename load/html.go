package load

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"time"
)

// HTMLSection is a part another command adds to the report (tasksim
// demo adds the fault half's timeline): a title and its HTML, trusted
// as it is, which must load nothing either.
type HTMLSection struct {
	Title string
	HTML  template.HTML
}

// HTMLReporter writes r as one self-contained HTML page: the summary
// table, plots drawn as inline SVG (the percentile distributions of time
// to result and discovery delay per mode, time to result per interval,
// requests and bytes per task), the configuration, the machine and the
// warnings. It loads nothing: no scripts, stylesheets or images
// from anywhere; the plots' font is embedded once. It returns an error for a histogram that does not decode
// as well as for a failed write. Sections come after the plots.
func HTMLReporter(r *Result, sections ...HTMLSection) Reporter {
	return HTMLPageReporter(r, &HTMLOptions{Sections: sections})
}

// HTMLOptions shapes the page of HTMLPageReporter; zero fields keep
// HTMLReporter's page.
type HTMLOptions struct {
	// Title replaces "tasksim load: N modes, START" as the page's title
	// and heading.
	Title string
	// Intro goes between the heading and the summary table, trusted as
	// it is, like a section's HTML.
	Intro template.HTML
	// Sections come after the plots.
	Sections []HTMLSection
}

// HTMLPageReporter is HTMLReporter with a title, an intro and sections
// of the caller's (tasksim demo).
func HTMLPageReporter(r *Result, o *HTMLOptions) Reporter {
	return func(w io.Writer) error {
		page, err := newHTMLPage(r)
		if err != nil {
			return err
		}
		if o != nil {
			page.Sections, page.Intro = o.Sections, o.Intro
			if o.Title != "" {
				page.Title = o.Title
			}
		}
		ew := &errWriter{w: w}
		if err := htmlTemplate.Execute(ew, page); err != nil {
			if ew.err != nil {
				return ew.err
			}
			return fmt.Errorf("html report: %w", err)
		}
		return ew.err
	}
}

// htmlPage is what the template shows.
type htmlPage struct {
	Title    string
	Intro    template.HTML
	Header   []string
	Rows     [][]string
	Legend   string
	Notes    []string
	Lines    []string
	Warnings []string
	Plots    []htmlPlot
	Config   string
	Machine  [][2]string
	Sections []HTMLSection
}

type htmlPlot struct {
	Caption string
	SVG     template.HTML
	Half    bool
}

func newHTMLPage(r *Result) (*htmlPage, error) {
	pg := &htmlPage{Legend: TableLegend}
	pg.Title = fmt.Sprintf("tasksim load: %d modes, %s", len(r.Modes), r.Start.UTC().Format(time.RFC3339))
	pg.Header, pg.Rows = r.tableRows()
	for _, m := range r.Modes {
		if line := m.notes(); line != "" {
			pg.Notes = append(pg.Notes, m.Name+": "+line)
		}
	}
	pg.Lines = append(pg.Lines, fmt.Sprintf("stopped: %s after %s (tasks started for %s)", r.Stopped, FormatMs(r.ElapsedMs), FormatMs(r.ScheduleMs)))
	pg.Lines = append(pg.Lines, r.serversLine())
	if o := r.Overload; o != nil {
		pg.Lines = append(pg.Lines, fmt.Sprintf("stopped early, %s into the run: a task started %s late (bound %s): %s", FormatMs(o.AtMs), FormatMs(o.LagMs), FormatMs(o.MaxLagMs), o.Reason))
	}
	pg.Warnings = r.Warnings

	type plotSpec struct {
		caption string
		half    bool
		draw    func() (string, error)
	}
	specs := []plotSpec{
		{"Time to result by percentile: from the intended start to the whole result in hand.", false, func() (string, error) {
			return percentilePlot(r, "Time to result by percentile", "time to result (ms)", func(m *ModeResult) Stats { return m.TTR })
		}},
		{"Discovery delay by percentile: from the server's completion to the result in hand.", false, func() (string, error) {
			return percentilePlot(r, "Discovery delay by percentile", "discovery delay (ms)", func(m *ModeResult) Stats { return m.Discovery })
		}},
		{"Time to result per interval: p99 solid, p50 dashed; intervals where no task of the mode ended are left out.", false, func() (string, error) { return timelinePlot(r) }},
		{"HTTP requests per task, both directions.", true, func() (string, error) {
			return barPlot(r, "Requests per task", "requests", func(m *ModeResult) float64 { return m.Wire.RequestsPerTask })
		}},
		{"Body bytes per task on the wire, both directions.", true, func() (string, error) {
			return barPlot(r, "Bytes per task", "bytes", func(m *ModeResult) float64 { return m.Wire.BytesPerTask })
		}},
	}
	fonts := map[string]bool{}
	for _, s := range specs {
		svg, err := s.draw()
		if err != nil {
			return nil, fmt.Errorf("html report: %w", err)
		}
		if svg == "" {
			svg = `<p class="empty">no data</p>`
		}
		// Every SVG embeds the fonts it uses; in one page a font face
		// declared once serves them all, so later copies are dropped
		// (each is some 100 kB).
		svg = fontFace.ReplaceAllStringFunc(svg, func(f string) string {
			if fonts[f] {
				return ""
			}
			fonts[f] = true
			return f
		})
		pg.Plots = append(pg.Plots, htmlPlot{Caption: s.caption, SVG: template.HTML(svg), Half: s.half})
	}

	cfg, err := json.MarshalIndent(r.Config, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	pg.Config = string(cfg)
	m := r.Machine
	pg.Machine = [][2]string{
		{"tasksim", r.Version},
		{"host", m.Hostname},
		{"system", m.OS + "/" + m.Arch},
		{"CPUs", fmt.Sprintf("%d (GOMAXPROCS %d)", m.CPUs, m.GOMAXPROCS)},
		{"CPU model", m.CPUModel},
		{"Go", m.GoVersion},
	}
	if r.ClientCPUMs > 0 || r.ClientPeakRSS > 0 {
		pg.Machine = append(pg.Machine, [2]string{"generator", fmt.Sprintf("%s CPU, peak memory %s", FormatMs(r.ClientCPUMs), FormatBytes(float64(r.ClientPeakRSS)))})
	}
	return pg, nil
}

// fontFace is one @font-face rule of an SVG's embedded fonts.
var fontFace = regexp.MustCompile(`(?s)@font-face\{.*?\}`)

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Arial, sans-serif; margin: 1.5em auto; max-width: 76em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; max-width: 100%; font-size: 0.92em; }
th, td { padding: 0.25em 0.45em; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; }
table.kv td { white-space: normal; overflow-wrap: anywhere; }
.summary { overflow-x: auto; }
.summary table { font-size: 0.88em; }
.summary th, .summary td { padding: 0.25em 0.3em; }
.summary td { white-space: normal; }
.summary td:first-child, table.kv td:first-child { white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
table.kv td { text-align: left; }
.legend, figcaption, .empty { color: #666; font-size: 0.9em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; flex: 1 1 100%; } figure.half { flex: 1 1 45%; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
.warn { color: #a40; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{.Intro}}<h2>Summary</h2>
<div class="summary"><table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}
</tbody>
</table></div>
<p class="legend">{{.Legend}}</p>
{{range .Notes}}<p>{{.}}</p>
{{end}}{{range .Lines}}<p>{{.}}</p>
{{end}}{{range .Warnings}}<p class="warn">warning: {{.}}</p>
{{end}}
<h2>Plots</h2>
<div class="plots">
{{range .Plots}}<figure{{if .Half}} class="half"{{end}}>
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}</div>
{{range .Sections}}<h2>{{.Title}}</h2>
{{.HTML}}
{{end}}<h2>Machine</h2>
<table class="kv">
{{range .Machine}}{{if index . 1}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}{{end}}</table>
<h2>Configuration</h2>
<pre>{{.Config}}</pre>
</body>
</html>
`))
