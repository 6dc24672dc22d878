package timeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tasksim/tasksim/traces"
)

// The text of a row: its label, and the details shown when it is chosen.

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
		for _, h := range traces.RoutingHeaders(rec.HTTP) {
			b.WriteString(" " + h)
		}
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
	if p.ResultType != "" {
		parts = append(parts, "resultType="+p.ResultType)
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
	if rec.Revision != "" {
		fmt.Fprintf(&b, "revision: %s\n", rec.Revision)
	}
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
