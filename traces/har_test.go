package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type sliceSource struct{ recs []Record }

func (s *sliceSource) Next() (Record, error) {
	if len(s.recs) == 0 {
		return Record{}, io.EOF
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r, nil
}

func TestHAR(t *testing.T) {
	recs := want(sampleRecords())
	// A second exchange: a notification answered 202, no body.
	at := func(ms int) (time.Duration, time.Time) {
		return time.Duration(ms) * time.Millisecond, t0.Add(time.Duration(ms) * time.Millisecond)
	}
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	r1 := Record{Conn: 1, Exchange: 2, Stream: "req:2", Dir: DirClientToServer, Kind: KindRequestHead,
		HTTP: &HTTPHead{Method: "POST", URL: "/mcp", Proto: "HTTP/1.1", Header: []HeaderField{{"Content-Type", "application/json"}}}}
	r1.Offset, r1.Wall = at(80)
	r2 := Record{Conn: 1, Exchange: 2, Stream: "req:2", Dir: DirClientToServer, Kind: KindBodyChunk, Raw: []byte(note)}
	r2.Offset, r2.Wall = at(81)
	r3 := Record{Conn: 1, Exchange: 2, Stream: "post:2", Dir: DirServerToClient, Kind: KindResponseHead,
		HTTP: &HTTPHead{Proto: "HTTP/1.1", Status: 202}}
	r3.Offset, r3.Wall = at(84)
	recs = append(recs, r1, r2, r3)

	var out bytes.Buffer
	if err := WriteHAR(&out, sampleHeader(), &sliceSource{recs}); err != nil {
		t.Fatal(err)
	}
	var har harFile
	if err := json.Unmarshal(out.Bytes(), &har); err != nil {
		t.Fatal(err)
	}
	if har.Log.Version != "1.2" || har.Log.Creator.Name != "tasksim" || len(har.Log.Entries) != 2 {
		t.Fatalf("log %+v", har.Log)
	}
	e := har.Log.Entries[0]
	if e.StartedDateTime != "2026-05-03T10:30:00.002Z" || e.Request.URL != "http://127.0.0.1:7070/mcp?x=1&y=2" ||
		e.Request.Method != "POST" || e.Response.Status != 200 || e.Response.StatusText != "OK" {
		t.Errorf("entry 0: %+v", e)
	}
	if diff := cmp.Diff([]harNV{{"x", "1"}, {"y", "2"}}, e.Request.QueryString); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if e.Request.PostData == nil || e.Request.PostData.Text != msgCall || e.Request.PostData.MimeType != "application/json" {
		t.Errorf("postData %+v", e.Request.PostData)
	}
	wantBody := string(sseRaw("e1", msgSeg1)) + string(sseRaw("e2", msgSeg2))
	if e.Response.Content.Text != wantBody || e.Response.Content.MimeType != "text/event-stream" || e.Response.Content.Size != len(wantBody) {
		t.Errorf("content %+v", e.Response.Content)
	}
	// Request head at 2ms, its body-end at 4ms, response head at 10ms,
	// the response's body-end at 36ms.
	if e.Timings.Send != 2 || e.Timings.Wait != 6 || e.Timings.Receive != 26 || e.Time != 34 {
		t.Errorf("timings %+v time %v", e.Timings, e.Time)
	}
	if len(e.SSEEvents) != 2 || e.SSEEvents[0].Time != 18 || *e.SSEEvents[0].ID != "e1" || e.SSEEvents[1].Time != 33 ||
		*e.SSEEvents[1].RetryMS != 1500 || e.SSEEvents[0].Data != msgSeg1 || e.SSEEvents[0].TaskID == "" {
		t.Errorf("sse events %+v", e.SSEEvents)
	}
	e = har.Log.Entries[1]
	if e.Response.Status != 202 || e.Response.Content.Text != "" || e.Timings.Send != 1 || e.Timings.Wait != 3 || e.Timings.Receive != 0 {
		t.Errorf("entry 1: %+v", e)
	}
	if e.Request.URL != "http://127.0.0.1:7070/mcp" {
		t.Errorf("url from the upstream label: %s", e.Request.URL)
	}
	// Every field HAR 1.2 requires is there.
	var raw map[string]map[string]any
	json.Unmarshal(out.Bytes(), &raw)
	for _, ent := range raw["log"]["entries"].([]any) {
		m := ent.(map[string]any)
		for _, k := range []string{"startedDateTime", "time", "request", "response", "cache", "timings"} {
			if _, ok := m[k]; !ok {
				t.Errorf("entry lacks %s", k)
			}
		}
		for _, k := range []string{"method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"} {
			if _, ok := m["request"].(map[string]any)[k]; !ok {
				t.Errorf("request lacks %s", k)
			}
		}
		for _, k := range []string{"status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"} {
			if _, ok := m["response"].(map[string]any)[k]; !ok {
				t.Errorf("response lacks %s", k)
			}
		}
	}
}

func TestHARWithoutHTTP(t *testing.T) {
	recs := sampleRecords()[14:] // the stdio part
	err := WriteHAR(&bytes.Buffer{}, Header{}, &sliceSource{recs})
	if !errors.Is(err, ErrNoHTTP) || !strings.Contains(err.Error(), "no HTTP exchanges") {
		t.Errorf("err = %v", err)
	}
}

// TestHARRevision: each entry carries its exchange's MCP revision and the
// resultType of the answer to its request in custom fields, an SSE
// event its resultType too, and a 2026-07-28 request its routing headers
// as recorded. Through a written and read trace, so the typed fields come
// from the file.
func TestHARRevision(t *testing.T) {
	const modern, legacy = "2026-07-28", "2025-11-25"
	var recs []Record
	add := func(ms int, r Record) {
		r.Conn = 1
		r.Offset = time.Duration(ms) * time.Millisecond
		r.Wall = t0.Add(r.Offset)
		recs = append(recs, r)
	}
	post := func(x uint64, rev string, h ...HeaderField) Record {
		return Record{Exchange: x, Stream: fmt.Sprintf("req:%d", x), Dir: DirClientToServer, Kind: KindRequestHead, Revision: rev,
			HTTP: &HTTPHead{Method: "POST", URL: "/mcp", Proto: "HTTP/1.1", Header: h}}
	}
	answer := func(x uint64, ct string) Record {
		return Record{Exchange: x, Stream: fmt.Sprintf("post:%d", x), Dir: DirServerToClient, Kind: KindResponseHead,
			HTTP: &HTTPHead{Proto: "HTTP/1.1", Status: 200, Header: []HeaderField{{"Content-Type", ct}}}}
	}
	msg := func(x uint64, dir Direction, rev, raw string) Record {
		stream := fmt.Sprintf("req:%d", x)
		if dir == DirServerToClient {
			stream = fmt.Sprintf("post:%d", x)
		}
		return Record{Exchange: x, Stream: stream, Dir: dir, Kind: KindMessage, Raw: []byte(raw), Revision: rev}
	}
	// A 2026-07-28 task call answered in JSON.
	add(1, post(1, modern, HeaderField{"Mcp-Method", "tools/call"}, HeaderField{"Mcp-Name", "slow_compute"}, HeaderField{"Mcp-Protocol-Version", modern}))
	add(2, msg(1, DirClientToServer, modern, msgCall2026))
	add(3, answer(1, "application/json"))
	add(4, msg(1, DirServerToClient, modern, msgCreated2026))
	// A 2025-11-25 call whose head names no revision: its message does.
	add(5, post(2, ""))
	add(6, msg(2, DirClientToServer, legacy, msgCall))
	add(7, answer(2, "application/json"))
	// A 2026-07-28 call answered on an SSE stream with an
	// InputRequiredResult.
	add(8, post(3, modern, HeaderField{"Mcp-Method", "tools/call"}))
	add(9, msg(3, DirClientToServer, modern, msgCall2026))
	add(10, answer(3, "text/event-stream"))
	add(11, Record{Exchange: 3, Stream: "post:3", Dir: DirServerToClient, Kind: KindSSEEvent, Revision: modern,
		Raw: []byte("data: " + msgInputReq + "\n\n"), SSE: &SSEFields{Data: msgInputReq}})
	h, got, err := readAll(t, writeTrace(t, sampleHeader(), recs, nil))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteHAR(&out, h, &sliceSource{got}); err != nil {
		t.Fatal(err)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Request struct {
					Headers []harNV `json:"headers"`
				} `json:"request"`
				Revision   string `json:"_revision"`
				ResultType string `json:"_resultType"`
				SSEEvents  []struct {
					ResultType string `json:"_resultType"`
				} `json:"_sseEvents"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(out.Bytes(), &har); err != nil {
		t.Fatal(err)
	}
	type entry struct{ Revision, ResultType, Events string }
	var es []entry
	for _, e := range har.Log.Entries {
		var events []string
		for _, ev := range e.SSEEvents {
			events = append(events, ev.ResultType)
		}
		es = append(es, entry{e.Revision, e.ResultType, strings.Join(events, ",")})
	}
	wantEntries := []entry{{modern, "task", ""}, {legacy, "", ""}, {modern, "input_required", "input_required"}}
	if diff := cmp.Diff(wantEntries, es); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if len(har.Log.Entries) > 0 {
		wantHeaders := []harNV{{"Mcp-Method", "tools/call"}, {"Mcp-Name", "slow_compute"}, {"Mcp-Protocol-Version", modern}}
		if diff := cmp.Diff(wantHeaders, har.Log.Entries[0].Request.Headers); diff != "" {
			t.Errorf("routing headers (-want +got):\n%s", diff)
		}
	}
}
