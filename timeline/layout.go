package timeline

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	viol := violations(r.Verdict)
	faulted := r.hasFaultLayer()
	lanes := map[string]*lane{}
	var order []*lane
	// The first pass finds each lane's rows: one head row where it
	// starts, then one row per record.
	type placed struct {
		rec  traces.Record
		lane *lane
		head bool
	}
	var rows []placed
	for _, rec := range r.records {
		key, title := laneKey(rec)
		l := lanes[key]
		if l == nil {
			l = &lane{key: key, title: title, first: len(rows)}
			lanes[key] = l
			order = append(order, l)
			rows = append(rows, placed{lane: l, head: true})
		}
		// "conn" (an in-process connection's one stream) says nothing more.
		if rec.Stream != "" && rec.Stream != "conn" && rec.Kind != traces.KindFault && !slices.Contains(l.streams, rec.Stream) {
			l.streams = append(l.streams, rec.Stream)
		}
		l.last = len(rows)
		rows = append(rows, placed{rec: rec, lane: l})
	}
	// Columns: the first whose last lane ended at least a row before.
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
	cols := max(len(colEnd), 1)
	pic := svgPicture{W: float64(cols*laneW + labelW), H: float64(headH + len(rows)*rowH + 6), TextX: float64(cols*laneW + 8)}
	colX := func(c int) (x, cx, mx, sx float64) {
		x = float64(c * laneW)
		return x, x + edge, x + laneW/2, x + laneW - edge
	}
	for c := range cols {
		_, cx, mx, sx := colX(c)
		pic.Cols = append(pic.Cols, svgCol{CX: cx, MX: mx, SX: sx})
	}
	rowY := func(i int) float64 { return float64(headH + i*rowH) }
	for _, l := range order {
		x, cx, mx, sx := colX(l.col)
		pic.Lanes = append(pic.Lanes, svgLane{Key: l.key, Title: l.title, Streams: strings.Join(l.streams, " "),
			X: x, CX: cx, MX: mx, SX: sx, Y1: rowY(l.first) + rowH, Y2: rowY(l.last) + rowH, Faulted: faulted})
	}
	for i, p := range rows {
		if p.head || p.rec.Kind != traces.KindFault || p.rec.Fault == nil {
			continue
		}
		end, why, f := i, "", p.rec.Fault
		if d := f.Length(); d > 0 {
			// Until its length has passed: the last row recorded by then.
			for j := i + 1; j < len(rows); j++ {
				if !rows[j].head && rows[j].rec.Offset > p.rec.Offset+d {
					break
				}
				end = j
			}
			why = faultWhat(f)
		} else if lastsToLaneEnd(f.Verb) {
			end, why = p.lane.last, faultWhat(f)+", to the end of its lane"
		}
		if end > i {
			x, _, _, _ := colX(p.lane.col)
			pic.Spans = append(pic.Spans, svgSpan{X: x + 2, Y: rowY(i) + rowH/2, W: laneW - 4, H: rowY(end) - rowY(i) + rowH/2,
				Title: fmt.Sprintf("#%d %s: %s", p.rec.Index, p.rec.Fault.Name, why)})
		}
	}
	for i, p := range rows {
		x, cx, mx, sx := colX(p.lane.col)
		y := rowY(i)
		if p.head {
			head := p.lane.title
			if len(p.lane.streams) > 0 {
				head += ": " + strings.Join(p.lane.streams, " ")
			}
			pic.Rows = append(pic.Rows, svgRow{Class: "tl-lane-head", Y: y, LaneHead: clip(head, 60), HeadX: x + 4,
				LabelX: pic.TextX, LabelY: y + rowH - 5, BandW: pic.W})
			continue
		}
		rec := p.rec
		row := svgRow{ID: id + "-r" + strconv.FormatUint(rec.Index, 10), Record: rec.Index, Class: "tl-row", Y: y,
			Label: clip(label(rec), maxLabel), LabelX: pic.TextX, LabelY: y + rowH - 5, BandX: 0, BandW: pic.W}
		if rules, ok := viol[rec.Index]; ok {
			row.Class += " tl-violation"
			row.Rules = strings.Join(rules, ", ")
			row.Label = clip("✗ "+row.Rules+" · "+label(rec), maxLabel)
		}
		row.Details = details(rec, row.Rules, r.cut[rec.Index])
		mid := y + rowH/2
		switch {
		case rec.Kind == traces.KindFault:
			row.Class += " tl-fault-row"
			row.Mark, row.MX, row.MY = "fault", mx, mid
		case isMessage(rec.Kind) && rec.Dir != traces.DirNone:
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
		default:
			at := mx
			switch rec.Side {
			case traces.SideClient:
				at = cx
			case traces.SideServer:
				at = sx
			}
			row.MX, row.MY = at, mid
			switch rec.Kind {
			case traces.KindConnOpen:
				row.Mark = "open"
			case traces.KindConnClose:
				row.Mark = "close"
			case traces.KindConnError:
				row.Mark = "error"
			default:
				row.Mark = "dot"
			}
		}
		pic.Rows = append(pic.Rows, row)
	}
	return pic
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

// label is a record on one line, as the row shows it.
func label(rec traces.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s ", rec.Index, offset(rec.Offset))
	if rec.Side != traces.SideWire {
		b.WriteString(rec.Side.String() + " ")
	}
	if rec.Dir != traces.DirNone {
		b.WriteString(rec.Dir.String() + " ")
	}
	switch {
	case rec.Kind == traces.KindFault && rec.Fault != nil:
		b.WriteString("FAULT " + rec.Fault.Name)
		if rec.Fault.Action != "" {
			b.WriteString(": " + rec.Fault.Action)
		}
	case rec.HTTP != nil && rec.Kind == traces.KindRequestHead:
		b.WriteString(rec.HTTP.Method + " " + rec.HTTP.URL)
	case rec.HTTP != nil && rec.Kind == traces.KindResponseHead:
		b.WriteString("HTTP " + strconv.Itoa(rec.HTTP.Status))
	case rec.RPC != nil:
		b.WriteString(rpcText(rec))
	default:
		b.WriteString(rec.Kind.String())
		if rec.Kind == traces.KindBodyChunk {
			fmt.Fprintf(&b, " %d bytes", len(rec.Raw))
		}
		if rec.Note != "" {
			b.WriteString(" " + strconv.Quote(rec.Note))
		}
	}
	return b.String()
}

// rpcText is a JSON-RPC message's fields on one line.
func rpcText(rec traces.Record) string {
	p := rec.RPC
	var parts []string
	if rec.Kind == traces.KindSSEEvent {
		ev := "sse"
		if rec.SSE != nil && rec.SSE.HasID {
			ev += " id=" + rec.SSE.ID
		}
		parts = append(parts, ev)
	}
	switch {
	case p.Method != "":
		parts = append(parts, p.Method)
	case p.ErrorCode != 0:
		parts = append(parts, "error "+strconv.Itoa(p.ErrorCode))
	default:
		parts = append(parts, "("+p.Type+")")
	}
	if p.ID != "" {
		parts = append(parts, "id="+p.ID)
	}
	for _, n := range p.SeqNrs {
		parts = append(parts, "seqNr="+strconv.FormatInt(n, 10))
	}
	if p.HasSeq {
		parts = append(parts, "seq="+strconv.FormatInt(p.Seq, 10))
	}
	if p.Status != "" {
		parts = append(parts, p.Status)
	}
	if p.HasIsComplete && p.IsComplete {
		parts = append(parts, "complete")
	}
	return strings.Join(parts, " ")
}

// details is everything the page shows of a record when it is chosen.
func details(rec traces.Record, rules string, full int) string {
	var b strings.Builder
	if rules != "" {
		fmt.Fprintf(&b, "violates %s\n", rules)
	}
	fmt.Fprintf(&b, "record %d at %s: %s", rec.Index, offset(rec.Offset), rec.Kind)
	if rec.Conn != 0 {
		fmt.Fprintf(&b, ", conn %d", rec.Conn)
	}
	if rec.Exchange != 0 {
		fmt.Fprintf(&b, ", exchange %d", rec.Exchange)
	}
	if rec.Stream != "" {
		fmt.Fprintf(&b, ", stream %s", rec.Stream)
	}
	if rec.Dir != traces.DirNone {
		fmt.Fprintf(&b, ", %s", rec.Dir)
	}
	fmt.Fprintf(&b, ", %s side\n", rec.Side)
	if rec.Fault != nil {
		fmt.Fprintf(&b, "fault: %s\n", rec.Fault)
	}
	if rec.HTTP != nil {
		h := rec.HTTP
		if h.Method != "" {
			fmt.Fprintf(&b, "%s %s %s\n", h.Method, h.URL, h.Proto)
		} else {
			fmt.Fprintf(&b, "%s %d\n", h.Proto, h.Status)
		}
		for _, f := range h.Header {
			fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
		}
	}
	if rec.RPC != nil {
		fmt.Fprintf(&b, "rpc: %s", rpcText(rec))
		if rec.RPC.TaskID != "" {
			fmt.Fprintf(&b, " task=%s", rec.RPC.TaskID)
		}
		b.WriteByte('\n')
	}
	if rec.Note != "" && rec.Fault == nil {
		fmt.Fprintf(&b, "note: %s\n", rec.Note)
	}
	if len(rec.Raw) > 0 && rec.HTTP == nil {
		raw := rec.Raw
		if !utf8.Valid(raw) {
			fmt.Fprintf(&b, "raw: %d bytes, not UTF-8\n", len(raw))
		} else {
			b.WriteString(string(raw))
			if full > len(raw) {
				fmt.Fprintf(&b, " … (%d of %d bytes)", len(raw), full)
			}
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// offset is a record's time since the trace started, like trace show's.
func offset(d time.Duration) string { return fmt.Sprintf("+%.3fs", d.Seconds()) }

// clip cuts s to n runes, with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
