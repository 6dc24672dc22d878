package timeline

import (
	"errors"
	"fmt"
	"hash/fnv"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// Write writes a self-contained HTML page titled title with the timeline
// of each run: one lane per connection or HTTP exchange, messages as
// arrows between client and server, faults marked where they acted, the
// records a rule's finding names highlighted, and each run's verdict
// table. The page loads nothing (inline SVG, CSS and script); every text
// from a trace is escaped. It returns the first write error.
func Write(w io.Writer, title string, runs ...*Run) error {
	return execute(w, "page", title, runs)
}

// WriteSection writes the same as Write without the page around it: a
// fragment, with its own style and script, to embed in another HTML page
// (the demo's report). A page may hold several.
func WriteSection(w io.Writer, runs ...*Run) error {
	return execute(w, "section", "", runs)
}

func execute(w io.Writer, name, title string, runs []*Run) error {
	v := pageView{Title: title}
	for i, r := range runs {
		if r == nil {
			return errors.New("timeline: nil run")
		}
		v.Runs = append(v.Runs, r.view(runID(r.Title, i)))
	}
	// A template returns its writer's error as it is.
	return pageTemplate.ExecuteTemplate(w, name, v)
}

// runID is a run's element id: unique on a page that embeds several
// sections, as long as their titles differ.
func runID(title string, i int) string {
	h := fnv.New32a()
	h.Write([]byte(title))
	return fmt.Sprintf("tl%08x-%d", h.Sum32(), i)
}

type pageView struct {
	Title string
	Runs  []runView
}

type runView struct {
	ID, Title string
	Meta      []string
	Notes     []string
	Summary   string
	Past      string
	Pic       svgPicture
	Verdict   []ruleView
	Counts    string
	Records   int
	Drawn     int
}

type ruleView struct {
	Status, ID, Side, Text string
	Findings               []findingView
}

type findingView struct {
	Message string
	Records []recordLink
}

type recordLink struct {
	N     uint64
	Href  string
	Drawn bool
}

// view turns the run into what the template shows.
func (r *Run) view(id string) runView {
	v := runView{ID: id, Title: r.Title, Notes: r.Notes, Pic: r.layout(id), Records: int(r.total), Drawn: len(r.records)}
	h := r.Header
	if len(h.Command) > 0 {
		v.Meta = append(v.Meta, "command: "+strings.Join(h.Command, " "))
	}
	if h.Seed != 0 {
		v.Meta = append(v.Meta, "seed: "+strconv.FormatUint(h.Seed, 10))
	}
	for _, l := range h.Labels {
		v.Meta = append(v.Meta, l.Key+": "+l.Value)
	}
	if h.Faults != nil {
		specs := "none"
		if len(h.Faults.Specs) > 0 {
			specs = strings.Join(h.Faults.Specs, ", ")
		}
		v.Meta = append(v.Meta, "faults: "+specs)
	}
	drawn := map[uint64]bool{}
	faults := 0
	for _, rec := range r.records {
		drawn[rec.Index] = true
		if rec.Kind == traces.KindFault {
			faults++
		}
	}
	viol := violations(r.Verdict)
	v.Summary = fmt.Sprintf("%s, %s, %s named by failed rules", count(int(r.total), "record"), count(faults+r.pastFaults, "fault"), count(len(viol), "record"))
	if r.past > 0 {
		var undrawn []uint64
		for i := range viol {
			if !drawn[i] {
				undrawn = append(undrawn, i)
			}
		}
		slices.Sort(undrawn)
		v.Past = fmt.Sprintf("Only the first %d records are drawn: %d more from record %d on are not (%s among them",
			len(r.records), r.past, r.firstPast, count(r.pastFaults, "fault"))
		if len(undrawn) > 0 {
			v.Past += fmt.Sprintf(", and %s named by failed rules", count(len(undrawn), "record"))
		}
		v.Past += "). tasksim trace show lists every record."
	}
	if r.Verdict == nil {
		return v
	}
	for _, rr := range r.Verdict.Rules {
		rv := ruleView{Status: string(rr.Status), ID: rr.Rule.ID, Side: string(rr.Rule.Side)}
		switch rr.Status {
		case check.Pass:
			rv.Text = fmt.Sprintf("%d checked", rr.Checked)
			if rr.Excused > 0 {
				rv.Text += fmt.Sprintf(", %d excused by faults", rr.Excused)
			}
		case check.Fail, check.Warn:
			rv.Text = fmt.Sprintf("%d of %d checked: %s", rr.Failures, rr.Checked, rr.Rule.Summary)
		default:
			rv.Text = "not observed: needs " + rr.Why
		}
		for _, f := range rr.Findings {
			fv := findingView{Message: f.Message}
			for _, n := range f.Records {
				fv.Records = append(fv.Records, recordLink{N: n, Href: "#" + id + "-r" + strconv.FormatUint(n, 10), Drawn: drawn[n]})
			}
			rv.Findings = append(rv.Findings, fv)
		}
		if rr.Failures > len(rr.Findings) {
			rv.Findings = append(rv.Findings, findingView{Message: fmt.Sprintf("… and %d more", rr.Failures-len(rr.Findings))})
		}
		v.Verdict = append(v.Verdict, rv)
	}
	pass, warn, fail, skip := r.Verdict.Counts()
	v.Counts = fmt.Sprintf("%d rules: %d passed, %d warned, %d failed, %d skipped", len(r.Verdict.Rules), pass, warn, fail, skip)
	return v
}

// count is n things, "1 record", "2 records".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

var pageTemplate = template.Must(template.New("timeline").Parse(`{{define "page"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
</head>
<body class="tl-page">
<h1>{{.Title}}</h1>
{{template "section" .}}
</body>
</html>
{{end}}{{define "section"}}<div class="tl">
{{template "style"}}
<p class="tl-legend">Each lane is a connection or an HTTP exchange, drawn from its first record to its last: the client on its left line, the server on its right{{if .Runs}}, the fault layer dashed between them when there is one{{end}}. Time runs down, one row per record. Arrows are messages: blue from client to server, green from server to client; an arrow that stops at the dashed line was seen on that side of the fault layer only. <span class="tl-key-fault">✕</span> marks a fault where it acted, its row shaded, and a fault that lasts shades its lane while it acts (a delay for its length, a stalled or cut stream to the lane's end); <span class="tl-key-viol">red rows</span> are records a rule's finding names. Click a row for the record.</p>
{{range .Runs}}<section class="tl-run" id="{{.ID}}" data-records="{{.Records}}" data-drawn="{{.Drawn}}">
<h2 class="tl-title">{{.Title}}</h2>
{{range .Meta}}<div class="tl-meta">{{.}}</div>
{{end}}<p class="tl-summary">{{.Summary}}{{if .Counts}}; {{.Counts}}{{end}}.
<button type="button" data-go=".tl-violation">next violation</button> <button type="button" data-go=".tl-fault-row">next fault</button></p>
{{range .Notes}}<p class="tl-note">{{.}}</p>
{{end}}{{if .Past}}<p class="tl-past">{{.Past}}</p>
{{end}}<div class="tl-scroll">
<svg class="tl-svg" xmlns="http://www.w3.org/2000/svg" width="{{.Pic.W}}" height="{{.Pic.H}}" viewBox="0 0 {{.Pic.W}} {{.Pic.H}}" role="img" aria-label="timeline">
{{with index .Pic.Cols 0}}<text class="tl-colhead" x="{{.CX}}" y="14">client</text><text class="tl-colhead" x="{{.SX}}" y="14" text-anchor="end">server</text>
{{end}}{{range .Pic.Lanes}}<g class="tl-lane" data-lane="{{.Key}}"><line class="tl-end" x1="{{.CX}}" y1="{{.Y1}}" x2="{{.CX}}" y2="{{.Y2}}"/><line class="tl-end" x1="{{.SX}}" y1="{{.Y1}}" x2="{{.SX}}" y2="{{.Y2}}"/>{{if .Faulted}}<line class="tl-layer" x1="{{.MX}}" y1="{{.Y1}}" x2="{{.MX}}" y2="{{.Y2}}"/>{{end}}<title>{{.Title}} {{.Streams}}</title></g>
{{end}}{{range .Pic.Rows}}{{if .LaneHead}}<g class="tl-lane-head"><text x="{{.HeadX}}" y="{{.LabelY}}">{{.LaneHead}}</text></g>
{{else}}<g class="{{.Class}}" id="{{.ID}}" data-record="{{.Record}}"><rect class="tl-bg" x="0" y="{{.Y}}" width="{{.BandW}}" height="18"/>{{if .Arrow}}<line class="{{.ArrowClass}}" x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/><polygon class="{{.ArrowClass}} tl-head" points="{{.Head}}"/>{{end}}{{if eq .Mark "fault"}}<g class="tl-fault"><circle cx="{{.MX}}" cy="{{.MY}}" r="6.5"/><text x="{{.MX}}" y="{{.MY}}" dy="4" text-anchor="middle">✕</text></g>{{else if eq .Mark "open"}}<circle class="tl-open" cx="{{.MX}}" cy="{{.MY}}" r="3.5"/>{{else if eq .Mark "close"}}<rect class="tl-close" x="{{.MX}}" y="{{.MY}}" width="8" height="3" transform="translate(-4 -1.5)"/>{{else if eq .Mark "error"}}<text class="tl-conn-error" x="{{.MX}}" y="{{.MY}}" dy="4" text-anchor="middle">✕</text>{{else if eq .Mark "dot"}}<circle class="tl-dot" cx="{{.MX}}" cy="{{.MY}}" r="2.5"/>{{end}}<text class="tl-label" x="{{.LabelX}}" y="{{.LabelY}}">{{.Label}}</text><title>{{.Details}}</title></g>
{{end}}{{end}}{{range .Pic.Spans}}<rect class="tl-fault-span" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}</svg>
</div>
<pre class="tl-details">Click a row to see its record.</pre>
{{if .Verdict}}<table class="tl-verdict">
<thead><tr><th>rule</th><th>side</th><th>verdict</th><th>evidence</th></tr></thead>
<tbody>
{{range .Verdict}}<tr class="tl-status-{{.Status}}"><td>{{.ID}}</td><td>{{.Side}}</td><td>{{.Status}}</td><td>{{.Text}}{{range .Findings}}<div class="tl-finding">{{if .Records}}records {{range $i, $r := .Records}}{{if $i}}, {{end}}{{if $r.Drawn}}<a class="tl-rec" href="{{$r.Href}}" data-record="{{$r.N}}">{{$r.N}}</a>{{else}}{{$r.N}} (not drawn){{end}}{{end}}: {{end}}{{.Message}}</div>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</section>
{{end}}{{template "script"}}
</div>
{{end}}{{define "style"}}<style>
.tl-page { font-family: system-ui, -apple-system, "Segoe UI", Arial, sans-serif; margin: 1.5em auto; max-width: 90em; padding: 0 1em; color: #222; }
.tl-page h1 { font-size: 1.4em; }
.tl-run { margin: 1.2em 0 2em; }
.tl-run h2.tl-title { font-size: 1.15em; border-bottom: 1px solid #ddd; }
.tl-legend, .tl-meta, .tl-summary, .tl-past { color: #555; font-size: 0.9em; }
.tl-meta { font-family: ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.tl-note { color: #333; font-size: 0.9em; margin: 0.2em 0; }
.tl-past { color: #a40; }
.tl-key-fault { color: #c60; font-weight: bold; }
.tl-key-viol { background: rgba(220, 30, 30, 0.2); }
.tl-scroll { overflow: auto; max-height: 75vh; border: 1px solid #ddd; background: #fff; }
.tl-svg { display: block; font: 11px ui-monospace, Menlo, Consolas, monospace; }
.tl-svg .tl-colhead { fill: #888; font-size: 9px; }
.tl-svg .tl-end { stroke: #bbb; stroke-width: 1; }
.tl-svg .tl-layer { stroke: #c60; stroke-width: 1; stroke-dasharray: 3 3; }
.tl-svg .tl-lane-head text { fill: #444; font-weight: bold; font-size: 10px; }
.tl-svg .tl-bg { fill: transparent; }
.tl-svg .tl-row { cursor: pointer; }
.tl-svg .tl-row:hover .tl-bg { fill: rgba(0, 0, 0, 0.05); }
.tl-svg .tl-fault-row .tl-bg { fill: rgba(255, 150, 0, 0.18); }
.tl-svg .tl-fault-span { fill: rgba(255, 150, 0, 0.12); stroke: rgba(204, 102, 0, 0.5); stroke-dasharray: 2 2; pointer-events: none; }
.tl-svg .tl-violation .tl-bg { fill: rgba(220, 30, 30, 0.2); }
.tl-svg .tl-chosen .tl-bg, .tl-svg .tl-row:target .tl-bg { stroke: #333; stroke-width: 1; }
.tl-svg line.tl-c2s { stroke: #2a6fd6; stroke-width: 1.4; } .tl-svg polygon.tl-c2s { fill: #2a6fd6; }
.tl-svg line.tl-s2c { stroke: #2a9d4a; stroke-width: 1.4; } .tl-svg polygon.tl-s2c { fill: #2a9d4a; }
.tl-svg .tl-violation line.tl-arrow { stroke: #d11; stroke-width: 2; } .tl-svg .tl-violation polygon.tl-arrow { fill: #d11; }
.tl-svg .tl-fault circle { fill: #fff3e0; stroke: #c60; stroke-width: 1.5; }
.tl-svg .tl-fault text { fill: #c60; font-weight: bold; font-size: 10px; }
.tl-svg .tl-open { fill: #2a9d4a; } .tl-svg .tl-close { fill: #777; } .tl-svg .tl-dot { fill: #999; }
.tl-svg .tl-conn-error { fill: #d11; font-weight: bold; }
.tl-svg .tl-label { fill: #222; white-space: pre; }
.tl-svg .tl-violation .tl-label { fill: #a00; font-weight: bold; }
.tl-svg .tl-fault-row .tl-label { fill: #a50; }
.tl-details { background: #f6f6f6; padding: 0.6em; max-height: 14em; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85em; }
.tl-verdict { border-collapse: collapse; font-size: 0.88em; max-width: 100%; }
.tl-verdict th, .tl-verdict td { padding: 0.2em 0.5em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; white-space: normal; }
.tl-verdict td { overflow-wrap: anywhere; }
.tl-status-FAIL td { background: rgba(220, 30, 30, 0.1); } .tl-status-FAIL td:nth-child(3) { color: #b00; font-weight: bold; }
.tl-status-WARN td { background: rgba(230, 160, 0, 0.12); } .tl-status-WARN td:nth-child(3) { color: #a60; font-weight: bold; }
.tl-status-SKIP td { color: #888; }
.tl-finding { font-size: 0.95em; }
</style>{{end}}{{define "script"}}<script>
(function () {
  for (const run of document.querySelectorAll(".tl-run:not([data-ready])")) {
    const pre = run.querySelector(".tl-details");
    const show = function (row) {
      for (const r of run.querySelectorAll(".tl-chosen")) r.classList.remove("tl-chosen");
      row.classList.add("tl-chosen");
      const t = row.querySelector("title");
      pre.textContent = t ? t.textContent : "";
    };
    run.querySelector("svg").addEventListener("click", function (e) {
      const row = e.target.closest(".tl-row");
      if (row) show(row);
    });
    for (const a of run.querySelectorAll("a.tl-rec")) {
      a.addEventListener("click", function () {
        const row = run.querySelector(".tl-row[data-record=\"" + a.dataset.record + "\"]");
        if (row) show(row);
      });
    }
    for (const b of run.querySelectorAll("button[data-go]")) {
      let i = -1;
      const rows = run.querySelectorAll(b.dataset.go);
      b.disabled = rows.length === 0;
      b.addEventListener("click", function () {
        i = (i + 1) % rows.length;
        show(rows[i]);
        rows[i].scrollIntoView({block: "center"});
      });
    }
    const first = run.querySelector(".tl-violation") || run.querySelector(".tl-fault-row");
    if (first) show(first);
    run.dataset.ready = "1";
  }
})();
</script>{{end}}`))
