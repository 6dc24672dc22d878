package traces

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 3, 10, 30, 0, 0, time.UTC)

// stepClock returns a clock that advances by step on every call.
func stepClock(step time.Duration) func() time.Time {
	n := 0
	return func() time.Time {
		t := t0.Add(time.Duration(n) * step)
		n++
		return t
	}
}

func sampleHeader() Header {
	return Header{
		Created:        t0,
		TasksimVersion: "v0.1.0-test",
		Command:        []string{"tasksim", "record", "--upstream", "http://127.0.0.1:7070/mcp", "-o", "run.trace"},
		Protocol:       "2025-11-25",
		Seed:           42,
		Labels:         []Label{{"upstream", "http://127.0.0.1:7070/mcp"}, {"scenario", "streaming"}},
	}
}

const (
	msgCall    = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_text","arguments":{"chunks":2,"apiKey":"sk-live-123"},"task":{"ttl":60000},"responseModes":["streaming"]}}`
	msgSeg1    = `{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":1,"type":"text","text":"chunk 1 "}],"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}}}`
	msgSeg2    = `{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":2,"type":"text","text":"chunk 2"}],"isComplete":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}}}`
	msgPartial = `{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"t-9","seq":0,"content":[{"type":"text","text":"x"}]}}`
)

func sseRaw(id, data string) []byte {
	return []byte("id: " + id + "\nevent: message\ndata: " + data + "\n\n")
}

// sampleRecords is a small HTTP conversation with every record kind, and
// a stdio tail. Times are set; Index and RPC are left to the writer.
func sampleRecords() []Record {
	at := func(ms int) (time.Duration, time.Time) {
		d := time.Duration(ms) * time.Millisecond
		return d, t0.Add(d)
	}
	var recs []Record
	add := func(ms int, r Record) {
		r.Offset, r.Wall = at(ms)
		recs = append(recs, r)
	}
	add(1, Record{Conn: 1, Kind: KindConnOpen, Note: "127.0.0.1:50000"})
	add(2, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindRequestHead,
		HTTP: &HTTPHead{Method: "POST", URL: "/mcp?x=1&y=2", Proto: "HTTP/1.1", Header: []HeaderField{
			{"Host", "127.0.0.1:7070"}, {"Authorization", "Bearer s3cr3t"}, {"Content-Type", "application/json"},
			{"Accept", "application/json, text/event-stream"}, {"Mcp-Session-Id", "sess-1"}}}})
	add(3, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindBodyChunk, Raw: []byte(msgCall)})
	add(3, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindMessage, Raw: []byte(msgCall)})
	add(4, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindBodyEnd, Note: "eof", End: EndEOF})
	add(10, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindResponseHead,
		HTTP: &HTTPHead{Proto: "HTTP/1.1", Status: 200, Header: []HeaderField{
			{"Content-Type", "text/event-stream"}, {"Set-Cookie", "sid=abc; HttpOnly"}}}})
	add(20, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindBodyChunk, Raw: sseRaw("e1", msgSeg1)})
	add(20, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindSSEEvent, Raw: sseRaw("e1", msgSeg1),
		SSE: &SSEFields{ID: "e1", HasID: true, Event: "message", Data: msgSeg1}})
	add(35, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindBodyChunk, Raw: sseRaw("e2", msgSeg2)})
	add(35, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindSSEEvent, Raw: sseRaw("e2", msgSeg2),
		SSE: &SSEFields{ID: "e2", HasID: true, Event: "message", Data: msgSeg2, Retry: 1500 * time.Millisecond, HasRetry: true}})
	add(36, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindBodyEnd, Note: "eof", End: EndEOF})
	add(40, Record{Kind: KindFault, Stream: "post:1", Note: "drop-sse-event #3"})
	add(41, Record{Kind: KindAnnotation, Note: "annotation with \x00 and ünïcode"})
	add(50, Record{Conn: 1, Kind: KindConnError, Note: "read: connection reset by peer", End: EndError})
	add(60, Record{Conn: 2, Stream: "stdin", Dir: DirClientToServer, Kind: KindStdioLine, Raw: []byte(msgCall)})
	add(61, Record{Conn: 2, Stream: "stdout", Dir: DirServerToClient, Kind: KindStdioLine, Raw: []byte(msgPartial)})
	add(62, Record{Conn: 2, Stream: "stderr", Dir: DirServerToClient, Kind: KindStdioLine, Raw: []byte{0xff, 0xfe, 'x', 0}})
	add(70, Record{Conn: 2, Kind: KindConnClose, End: EndEOF})
	return recs
}

// writeTrace writes recs to a trace in memory.
func writeTrace(t testing.TB, h Header, recs []Record, opts *WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads a trace; it returns the records and the error that ended
// them (nil for io.EOF).
func readAll(t testing.TB, data []byte) (Header, []Record, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return Header{}, nil, err
	}
	var recs []Record
	for rec, err := range r.Records() {
		if err != nil {
			return r.Header(), recs, err
		}
		recs = append(recs, rec)
	}
	return r.Header(), recs, nil
}

// frameEnds returns the byte offset where each frame of a whole trace
// ends: [0] the header's, then one per record.
func frameEnds(t testing.TB, data []byte) []int64 {
	t.Helper()
	off := int64(preambleSize)
	var ends []int64
	for off < int64(len(data)) {
		n, _, reason := parseFrameHead(data[off : off+frameHeadSize])
		if reason != "" {
			t.Fatalf("frame at %d: %s", off, reason)
		}
		off += int64(frameHeadSize + n)
		ends = append(ends, off)
	}
	return ends
}

// sseRecord is a typical record: one SEP-1905 segment in an SSE event.
func sseRecord(i int) Record {
	data := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"result":{"partial-content":[{"seqNr":%d,"type":"text","text":%q}],"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}}}`,
		i+1, strings.Repeat("lorem ipsum ", 8))
	return Record{Conn: 1, Exchange: 3, Stream: "post:3", Dir: DirServerToClient, Kind: KindSSEEvent,
		Raw: sseRaw(fmt.Sprint(i), data), SSE: &SSEFields{ID: fmt.Sprint(i), HasID: true, Event: "message", Data: data}}
}
