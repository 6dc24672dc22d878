package traces

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TimelineColumns returns the names of the columns TimelineRow fills, in
// order: the heading of the timeline `tasksim trace show` prints.
func TimelineColumns() []string {
	return []string{"TIME", "CONN", "STREAM", "DIR", "KIND", "METHOD", "ID", "TASK", "SEQ", "STATUS", "DETAIL"}
}

// TimelineRow renders a record as one row of the timeline, the columns of
// TimelineColumns:
//
//   - TIME: the offset from the start, "+1.250s";
//   - CONN, STREAM: the connection number and stream name;
//   - DIR: the direction, with the side after a slash when the record was
//     seen on one side of the fault layer ("in/client");
//   - KIND: the record's kind;
//   - METHOD, ID, TASK: of the JSON-RPC message (DescribeMessage), else the
//     fault's target; METHOD is "(response)" for a response and the method
//     and URL for an HTTP request head;
//   - SEQ: "seqNr=1,2" of partial-content items or "seq=3" of a partial
//     notification (or of the fault's target);
//   - STATUS: the task status, "complete=true", "error -32602", or the
//     status code of an HTTP response head;
//   - DETAIL: a request head's routing headers of MCP 2026-07-28
//     ("mcp-method=tools/call mcp-name=job", RoutingHeaders), the
//     response's Content-Type, the result's resultType
//     ("resultType=task"), the fault, the SSE event's id, event, retry
//     and no-data, the record's MCP revision ("rev=2026-07-28"), the
//     batch, how the stream ended, the size of a record that is not a
//     JSON-RPC message, and the quoted note.
//
// An empty column is "-".
func TimelineRow(rec Record) []string {
	var c timelineCells
	c.http(rec)
	if rec.RPC != nil {
		c.rpc(rec.RPC)
	}
	if f := rec.Fault; f != nil {
		if rec.RPC == nil {
			c.target(f.Target)
		}
		c.detail = append(c.detail, f.String())
	}
	c.sse(rec.SSE)
	c.trailer(rec)
	conn := "-"
	if rec.Conn != 0 {
		conn = strconv.FormatUint(rec.Conn, 10)
	}
	dir := rec.Dir.String()
	if rec.Side != SideWire {
		dir += "/" + rec.Side.String()
	}
	return []string{
		fmt.Sprintf("+%.3fs", rec.Offset.Seconds()), conn, orDash(rec.Stream), dir, rec.Kind.String(),
		orDash(c.method), orDash(c.id), orDash(c.task), orDash(c.seq), orDash(c.status), orDash(strings.Join(c.detail, " ")),
	}
}

// timelineCells are the columns of a row that depend on what a record
// holds.
type timelineCells struct {
	method, id, task, seq, status string
	detail                        []string
}

func (c *timelineCells) http(rec Record) {
	h := rec.HTTP
	if h == nil {
		return
	}
	switch rec.Kind {
	case KindRequestHead:
		c.method = h.Method + " " + h.URL
		c.detail = append(c.detail, RoutingHeaders(h)...)
	case KindResponseHead:
		c.status = strconv.Itoa(h.Status)
		if ct, ok := h.Get("Content-Type"); ok && ct != "" {
			c.detail = append(c.detail, ct)
		}
	}
}

func (c *timelineCells) rpc(p *RPCFields) {
	c.method, c.id, c.task = p.Method, p.ID, p.TaskID
	if p.Type == "response" && c.method == "" {
		c.method = "(response)"
	}
	switch {
	case len(p.SeqNrs) > 0:
		nrs := make([]string, len(p.SeqNrs))
		for i, n := range p.SeqNrs {
			nrs[i] = strconv.FormatInt(n, 10)
		}
		c.seq = "seqNr=" + strings.Join(nrs, ",")
	case p.HasSeq:
		c.seq = "seq=" + strconv.FormatInt(p.Seq, 10)
	}
	var st []string
	if p.Status != "" {
		st = append(st, p.Status)
	}
	if p.HasIsComplete {
		st = append(st, "complete="+strconv.FormatBool(p.IsComplete))
	}
	if p.ErrorCode != 0 {
		st = append(st, "error "+strconv.Itoa(p.ErrorCode))
	}
	c.status = strings.Join(st, " ")
	if p.ResultType != "" {
		c.detail = append(c.detail, "resultType="+p.ResultType)
	}
}

// target fills the message columns from a fault's target, for a fault
// record that holds no message.
func (c *timelineCells) target(t Target) {
	c.method, c.id, c.task = t.Method, t.RPCID, t.TaskID
	switch {
	case t.HasSeqNr:
		c.seq = "seqNr=" + strconv.FormatInt(t.SeqNr, 10)
	case t.HasSeq:
		c.seq = "seq=" + strconv.FormatInt(t.Seq, 10)
	}
}

func (c *timelineCells) sse(s *SSEFields) {
	if s == nil {
		return
	}
	if s.HasID {
		c.detail = append(c.detail, "event-id="+s.ID)
	}
	if s.Event != "" {
		c.detail = append(c.detail, "event="+s.Event)
	}
	if s.HasRetry {
		c.detail = append(c.detail, "retry="+s.Retry.String())
	}
	if s.NoData {
		c.detail = append(c.detail, "no-data")
	}
}

// trailer adds the details every kind of record may have.
func (c *timelineCells) trailer(rec Record) {
	if rec.Revision != "" {
		c.detail = append(c.detail, "rev="+rec.Revision)
	}
	if rec.Batch > 0 {
		c.detail = append(c.detail, "batch="+strconv.FormatUint(uint64(rec.Batch), 10))
	}
	if rec.End != EndNone {
		c.detail = append(c.detail, "end="+rec.End.String())
	}
	if rec.RPC == nil && len(rec.Raw) > 0 {
		c.detail = append(c.detail, fmt.Sprintf("%d B", len(rec.Raw)))
	}
	if rec.Note != "" {
		c.detail = append(c.detail, strconv.Quote(rec.Note))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RoutingHeaders returns the routing headers of MCP 2026-07-28 a request
// head carries, for a human: "mcp-method=tools/call", "mcp-name=job"
// (2026-07-28 Streamable HTTP, "Standard Request Headers"). An Mcp-Name
// sent Base64-encoded ("=?base64?...?=", "Value Encoding") is shown
// decoded, quoted when it is not plain; one that does not decode is shown
// as sent.
func RoutingHeaders(h *HTTPHead) []string {
	var out []string
	if v, ok := h.Get("Mcp-Method"); ok {
		out = append(out, "mcp-method="+v)
	}
	if v, ok := h.Get("Mcp-Name"); ok {
		out = append(out, "mcp-name="+headerText(v))
	}
	return out
}

// headerText decodes a header value of the =?base64?...?= form, quoting
// the result unless it is plain visible ASCII.
func headerText(v string) string {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if inner, ok2 := strings.CutSuffix(inner, "?="); ok && ok2 {
		if b, err := base64.StdEncoding.Strict().DecodeString(inner); err == nil && utf8.Valid(b) {
			s := string(b)
			if strings.TrimSpace(s) != s || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
				return strconv.Quote(s)
			}
			return s
		}
	}
	return v
}
