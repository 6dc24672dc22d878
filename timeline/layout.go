package timeline

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// Geometry of the picture, in SVG user units (pixels).
const (
	rowH   = 18  // one record
	laneW  = 116 // one column of lanes
	edge   = 12  // from a column's side to its client or server line
	headH  = 22  // the "client | server" heads of the columns
	labelW = 560 // the text column on the right
	// maxLabel caps a row's label, in runes.
	maxLabel = 90
)

// lane is one connection or HTTP exchange: a column from its first
// record to its last.
type lane struct {
	key         string
	title       string
	streams     []string
	col         int
	first, last int // rows
}

// svgLane is a lane as drawn.
type svgLane struct {
	Key, Title, Streams string
	CX, MX, SX, X       float64
	Y1, Y2              float64
	Faulted             bool // the run has a fault layer: draw it
}

// svgRow is one row: a record, or the head of a lane that starts there.
type svgRow struct {
	ID     string
	Record uint64
	Class  string
	Y      float64
	// LaneHead is set on a lane's head row.
	LaneHead        string
	HeadX           float64
	Arrow           bool
	X1, Y1, X2, Y2  float64
	Head            string // the arrowhead polygon's points
	ArrowClass      string
	Mark            string // "fault", "open", "close", "error", "dot"
	MX, MY          float64
	Label           string
	LabelX, LabelY  float64
	Details         string
	Rules           string
	BandX, BandW    float64
	Violation, Fail bool
}

// svgPicture is one run's SVG.
type svgPicture struct {
	W, H  float64
	Cols  []svgCol
	Lanes []svgLane
	Rows  []svgRow
	Spans []svgSpan
	TextX float64
}

// svgSpan shades the rows a lasting fault acted over, in its lane's
// column.
type svgSpan struct {
	X, Y, W, H float64
	Title      string
}

type svgCol struct{ CX, SX, MX float64 }

// laneKey says which lane a record belongs to: its HTTP exchange, else
// its connection.
func laneKey(rec traces.Record) (key, title string) {
	conn, ex := rec.Conn, rec.Exchange
	if rec.Kind == traces.KindFault && rec.Fault != nil {
		if conn == 0 {
			conn = rec.Fault.Target.Conn
		}
		if ex == 0 {
			ex = rec.Fault.Target.Exchange
		}
	}
	switch {
	case ex != 0:
		return fmt.Sprintf("c%d/x%d", conn, ex), fmt.Sprintf("conn %d · exchange %d", conn, ex)
	case conn != 0:
		return fmt.Sprintf("c%d", conn), fmt.Sprintf("conn %d", conn)
	}
	return "trace", "trace"
}

// violations maps each record a failed rule's finding names to the rules.
func violations(v *check.Verdict) map[uint64][]string {
	out := map[uint64][]string{}
	if v == nil {
		return out
	}
	for _, r := range v.Rules {
		if !r.Status.Broken() {
			continue
		}
		for _, f := range r.Findings {
			for _, i := range f.Records {
				if !slices.Contains(out[i], r.Rule.ID) {
					out[i] = append(out[i], r.Rule.ID)
				}
			}
		}
	}
	return out
}

// hasFaultLayer reports whether the run had a fault layer between client
// and server: a fault schedule, a fault record or a record of one side.
func (r *Run) hasFaultLayer() bool {
	if r.Header.Faults != nil {
		return true
	}
	for _, rec := range r.records {
		if rec.Kind == traces.KindFault || rec.Side != traces.SideWire {
			return true
		}
	}
	return false
}

// layout places the run's lanes in columns and its records in rows.
// A column is reused by a lane that starts after the one before it
// ended, so that a trace of many short HTTP exchanges stays narrow.
func (r *Run) layout(id string) svgPicture {
	rows, order := placeRows(r.records)
	cols := assignColumns(order)
	pic := svgPicture{W: float64(cols*laneW + labelW), H: float64(headH + len(rows)*rowH + 6), TextX: float64(cols*laneW + 8)}
	for c := range cols {
		_, cx, mx, sx := colX(c)
		pic.Cols = append(pic.Cols, svgCol{CX: cx, MX: mx, SX: sx})
	}
	faulted := r.hasFaultLayer()
	for _, l := range order {
		pic.Lanes = append(pic.Lanes, l.svg(faulted))
	}
	pic.Spans = faultSpans(rows)
	viol := violations(r.Verdict)
	for i, p := range rows {
		if p.head {
			pic.Rows = append(pic.Rows, laneHeadRow(p.lane, rowY(i), &pic))
			continue
		}
		pic.Rows = append(pic.Rows, r.recordRow(id, p, rowY(i), &pic, viol))
	}
	return pic
}

// placed is one row: a record in its lane, or the head row where a lane
// starts.
type placed struct {
	rec  traces.Record
	lane *lane
	head bool
}

// placeRows finds each lane's rows: one head row where it starts, then
// one row per record. order is the lanes by their first row.
func placeRows(records []traces.Record) (rows []placed, order []*lane) {
	lanes := map[string]*lane{}
	for _, rec := range records {
		key, title := laneKey(rec)
		l := lanes[key]
		if l == nil {
			l = &lane{key: key, title: title, first: len(rows)}
			lanes[key] = l
			order = append(order, l)
			rows = append(rows, placed{lane: l, head: true})
		}
		l.addStream(rec)
		l.last = len(rows)
		rows = append(rows, placed{rec: rec, lane: l})
	}
	return rows, order
}

// addStream notes the stream of a record of the lane.
func (l *lane) addStream(rec traces.Record) {
	// "conn" (an in-process connection's one stream) says nothing more.
	if rec.Stream != "" && rec.Stream != "conn" && rec.Kind != traces.KindFault && !slices.Contains(l.streams, rec.Stream) {
		l.streams = append(l.streams, rec.Stream)
	}
}

// assignColumns gives each lane of order a column: the first whose last
// lane ended at least a row before it starts. It returns the number of
// columns, at least one.
func assignColumns(order []*lane) int {
	var colEnd []int
	for _, l := range order {
		l.col = -1
		for c, end := range colEnd {
			if end+1 < l.first {
				l.col = c
				break
			}
		}
		if l.col < 0 {
			l.col = len(colEnd)
			colEnd = append(colEnd, 0)
		}
		colEnd[l.col] = l.last
	}
	return max(len(colEnd), 1)
}

// colX is where column c lies: its left side, and its client, middle and
// server lines.
func colX(c int) (x, cx, mx, sx float64) {
	x = float64(c * laneW)
	return x, x + edge, x + laneW/2, x + laneW - edge
}

// rowY is the top of row i.
func rowY(i int) float64 { return float64(headH + i*rowH) }

// svg is the lane as drawn, from its head row's foot to its last row's.
func (l *lane) svg(faulted bool) svgLane {
	x, cx, mx, sx := colX(l.col)
	return svgLane{Key: l.key, Title: l.title, Streams: strings.Join(l.streams, " "),
		X: x, CX: cx, MX: mx, SX: sx, Y1: rowY(l.first) + rowH, Y2: rowY(l.last) + rowH, Faulted: faulted}
}

// faultSpans shades, for each fault record that lasts, the rows it
// acted over in its lane's column.
func faultSpans(rows []placed) []svgSpan {
	var spans []svgSpan
	for i, p := range rows {
		if p.head || p.rec.Kind != traces.KindFault || p.rec.Fault == nil {
			continue
		}
		end, why := faultEnd(rows, i)
		if end > i {
			x, _, _, _ := colX(p.lane.col)
			spans = append(spans, svgSpan{X: x + 2, Y: rowY(i) + rowH/2, W: laneW - 4, H: rowY(end) - rowY(i) + rowH/2,
				Title: fmt.Sprintf("#%d %s: %s", p.rec.Index, p.rec.Fault.Name, why)})
		}
	}
	return spans
}

// faultEnd is the last row the fault of row i acted over, and what it
// did: until its length has passed, to the end of its lane for a verb
// that lasts, else its own row.
func faultEnd(rows []placed, i int) (end int, why string) {
	p := rows[i]
	end, f := i, p.rec.Fault
	if d := f.Length(); d > 0 {
		// Until its length has passed: the last row recorded by then.
		for j := i + 1; j < len(rows); j++ {
			if !rows[j].head && rows[j].rec.Offset > p.rec.Offset+d {
				break
			}
			end = j
		}
		return end, faultWhat(f)
	}
	if lastsToLaneEnd(f.Verb) {
		return p.lane.last, faultWhat(f) + ", to the end of its lane"
	}
	return end, ""
}

// laneHeadRow is the head row of lane l: its title and streams.
func laneHeadRow(l *lane, y float64, pic *svgPicture) svgRow {
	x, _, _, _ := colX(l.col)
	head := l.title
	if len(l.streams) > 0 {
		head += ": " + strings.Join(l.streams, " ")
	}
	return svgRow{Class: "tl-lane-head", Y: y, LaneHead: clip(head, 60), HeadX: x + 4,
		LabelX: pic.TextX, LabelY: y + rowH - 5, BandW: pic.W}
}

// recordRow is the row of a record: its label, the rules it violates,
// its details, and its arrow or mark.
func (r *Run) recordRow(id string, p placed, y float64, pic *svgPicture, viol map[uint64][]string) svgRow {
	rec := p.rec
	row := svgRow{ID: id + "-r" + strconv.FormatUint(rec.Index, 10), Record: rec.Index, Class: "tl-row", Y: y,
		Label: clip(label(rec), maxLabel), LabelX: pic.TextX, LabelY: y + rowH - 5, BandX: 0, BandW: pic.W}
	if rules, ok := viol[rec.Index]; ok {
		row.Class += " tl-violation"
		row.Rules = strings.Join(rules, ", ")
		row.Label = clip("✗ "+row.Rules+" · "+label(rec), maxLabel)
	}
	row.Details = details(rec, row.Rules, r.cut[rec.Index])
	_, cx, mx, sx := colX(p.lane.col)
	switch {
	case rec.Kind == traces.KindFault:
		row.Class += " tl-fault-row"
		row.Mark, row.MX, row.MY = "fault", mx, y+rowH/2
	case isMessage(rec.Kind) && rec.Dir != traces.DirNone:
		row.arrow(rec, cx, mx, sx, y)
	default:
		row.Mark, row.MX, row.MY = markOf(rec.Kind), sideX(rec.Side, cx, mx, sx), y+rowH/2
	}
	return row
}

// arrow draws a message as an arrow from its sender's line to its
// receiver's: from or to the middle line for a record of one side (the
// fault layer's edge).
func (row *svgRow) arrow(rec traces.Record, cx, mx, sx, y float64) {
	from, to := cx, sx
	switch rec.Side {
	case traces.SideClient:
		to = mx
	case traces.SideServer:
		from = mx
	}
	cls := "tl-arrow tl-c2s"
	if rec.Dir == traces.DirServerToClient {
		from, to = to, from
		cls = "tl-arrow tl-s2c"
	}
	row.Arrow, row.ArrowClass = true, cls+" tl-k-"+rec.Kind.String()
	row.X1, row.Y1, row.X2, row.Y2 = from, y+4, to, y+rowH-4
	row.Head = arrowHead(row.X1, row.Y1, row.X2, row.Y2)
}

// sideX is where a mark of side s sits: on the client's line, the
// server's, or the middle (the wire).
func sideX(s traces.Side, cx, mx, sx float64) float64 {
	switch s {
	case traces.SideClient:
		return cx
	case traces.SideServer:
		return sx
	}
	return mx
}

// marks are the marks of the records drawn as a mark with a meaning of
// their own; any other is a dot.
var marks = map[traces.Kind]string{
	traces.KindConnOpen:  "open",
	traces.KindConnClose: "close",
	traces.KindConnError: "error",
}

func markOf(k traces.Kind) string {
	if m, ok := marks[k]; ok {
		return m
	}
	return "dot"
}

// faultWhat says what a fault did, for a human: its action as the fault
// layer wrote it, or its verb.
func faultWhat(f *traces.Fault) string {
	if f.Action != "" {
		return f.Action
	}
	return f.Verb.String()
}

// lastsToLaneEnd reports whether a fault's verb leaves its connection or
// exchange broken or stalled for the rest of the lane: a cut stream
// carries nothing more, a stalled one nothing until it is given up.
func lastsToLaneEnd(v traces.Verb) bool {
	return v.Cuts() || v == traces.VerbStall
}

// isMessage reports whether records of kind k travel between client and
// server (drawn as arrows).
func isMessage(k traces.Kind) bool {
	switch k {
	case traces.KindRequestHead, traces.KindResponseHead, traces.KindBodyChunk, traces.KindSSEEvent,
		traces.KindMessage, traces.KindStdioLine:
		return true
	}
	return false
}

// arrowHead returns the points of a 7-unit arrowhead at (x2, y2).
func arrowHead(x1, y1, x2, y2 float64) string {
	dx, dy := x2-x1, y2-y1
	n := math.Hypot(dx, dy)
	if n == 0 {
		return ""
	}
	ux, uy := dx/n, dy/n
	const l, w = 7, 3.5
	bx, by := x2-ux*l, y2-uy*l
	return fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f", x2, y2, bx-uy*w, by+ux*w, bx+uy*w, by-ux*w)
}
