package check

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// The violating fixtures in testdata/fail are edited copies of the passing
// ones in testdata/pass (real traces of the reference server, trimmed; see
// testdata/README.md). Each edit breaks exactly one rule; the file name
// starts with that rule's ID. Regenerate them with
//
//	go test ./check -run TestGenerateFailFixtures -update
//
// and review the diff: the committed JSONL is what the tests read.

var update = flag.Bool("update", false, "rewrite testdata/fail from testdata/pass")

// failFixture is one violation: the pass fixture it starts from, what the
// edit does (written into the fixture's header) and the edit.
type failFixture struct {
	name, from, why string
	edit            func(t *testing.T, e *editor)
}

var failFixtures = []failFixture{
	{"TASK-STATUS-TRANSITION-after-terminal", "poll", "the tasks/get sent after the client saw completed is answered working",
		func(t *testing.T, e *editor) { e.sub(34, `"status":"completed"`, `"status":"working"`) }},
	{"TASK-STATUS-TRANSITION-created", "task-errors", "the task-mode call creates its task in status completed, not working",
		func(t *testing.T, e *editor) { e.sub(17, `"status":"working"`, `"status":"completed"`) }},
	{"TASK-NOT-FOUND", "task-errors", "tasks/get of a task id the server never gave out is answered with a Task",
		func(t *testing.T, e *editor) {
			e.set(12, `{"jsonrpc":"2.0","id":2,"result":{"taskId":"00000000-0000-4000-8000-000000000000","status":"working","createdAt":"2026-11-23T21:59:10.000Z","lastUpdatedAt":"2026-11-23T21:59:10.000Z","ttl":300000,"pollInterval":500}}`)
		}},
	{"TASK-NOT-FOUND-code", "task-errors", "tasks/get of a task id the server never gave out is answered -32603, not -32602",
		func(t *testing.T, e *editor) { e.sub(12, `"code":-32602`, `"code":-32603`) }},
	{"TASK-CANCEL-TERMINAL", "task-errors", "tasks/cancel of a completed task is answered -32600, not -32602",
		func(t *testing.T, e *editor) { e.sub(27, `"code":-32602`, `"code":-32600`) }},
	{"TASK-CANCEL-TERMINAL-result", "task-errors", "tasks/cancel of a completed task is answered with the (still completed) Task instead of -32602",
		func(t *testing.T, e *editor) { e.set(27, strings.Replace(e.payload(22), `"id":4`, `"id":5`, 1)) }},
	{"TASK-FIELDS", "task-errors", "the Task in a tasks/get answer lacks createdAt",
		func(t *testing.T, e *editor) { e.re(22, `"createdAt":"[^"]*",`, ``) }},
	{"TASK-RESULT", "task-errors", "tasks/result of a completed task lacks the related-task meta",
		func(t *testing.T, e *editor) {
			e.re(32, `,"io.modelcontextprotocol/related-task":\{"taskId":"[^"]*"\}`, ``)
		}},
	{"TASK-SURVIVES-REQUEST", "resume-last-event-id", "the stream that created the task is cut; instead of resuming, the client asks tasks/get and the task is cancelled, though nobody cancelled it",
		func(t *testing.T, e *editor) {
			task := e.rec(13).RPC.TaskID
			e.cut(17, 23) // the GET that resumed the stream
			at := e.rec(16).Offset + 500*time.Millisecond
			e.insert(17, e.exchange(at, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+task+`"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"taskId":"`+task+`","status":"cancelled","createdAt":"2026-11-23T22:00:51.000Z","lastUpdatedAt":"2026-11-23T22:00:51.300Z","ttl":300000,"pollInterval":500}}`)...)
		}},
	{"TASK-ISOLATION", "isolation-session-origin", "session B's tasks/get of a task of session A is answered with that Task",
		func(t *testing.T, e *editor) {
			task := regexp.MustCompile(`"task":(\{[^}]*\})`).FindStringSubmatch(e.payload(12))[1]
			e.set(26, `{"jsonrpc":"2.0","id":2,"result":`+task+`}`)
		}},
	{"TASK-ID-ENTROPY", "streaming-results", "the server numbers its tasks: task-1, task-2",
		func(t *testing.T, e *editor) {
			e.replaceAll(e.rec(13).RPC.TaskID, "task-1")
			e.replaceAll(e.rec(36).RPC.TaskID, "task-2")
		}},
	{"S1905-MODE-SELECT", "streaming", "the call lists responseModes [task] and is answered in streaming mode",
		func(t *testing.T, e *editor) { e.sub(13, `"responseModes":["streaming"]`, `"responseModes":["task"]`) }},
	{"S1905-FALLBACK-WARNING", "mode-fallback", "the call listing responseModes [streaming] is answered in task mode with neither the fallback-mode meta nor a status message saying so",
		func(t *testing.T, e *editor) {
			e.sub(15, `,"_meta":{"io.modelcontextprotocol/fallback-mode":"task"}`, ``)
			e.sub(15, `"statusMessage":"none of the requested response modes is supported; falling back to task mode",`, ``)
		}},
	{"S1905-MODE-SELECT-priority", "poll", "the call lists responseModes [streaming, task], both sides declare streaming, and it is answered in task mode to the end",
		func(t *testing.T, e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["streaming","task"]`)
		}},
	{"S1905-SEQNR", "streaming", "the first segment has seqNr 0",
		func(t *testing.T, e *editor) { e.sub(18, `"seqNr":1`, `"seqNr":0`) }},
	{"S1905-SEQNR-repeat", "streaming", "the second segment repeats seqNr 1 (with other content)",
		func(t *testing.T, e *editor) { e.sub(19, `"seqNr":2`, `"seqNr":1`) }},
	{"S1905-COMPLETE", "streaming", "the response with isComplete: true carries task status working",
		func(t *testing.T, e *editor) { e.sub(24, `"status":"completed"`, `"status":"working"`) }},
	{"S1905-RESUME", "streaming-results", "tasks/result with lastSeqNr 1 skips segment 2",
		func(t *testing.T, e *editor) { e.re(26, `\{"seqNr":2,[^}]*\},`, ``) }},
	{"S1905-LASTSEQNR-INVALID", "task-errors", "tasks/result with lastSeqNr 0 is answered with the result instead of -32602",
		func(t *testing.T, e *editor) { e.set(37, strings.Replace(e.payload(32), `"id":6`, `"id":7`, 1)) }},
	{"S1905-MERGE", "streaming-results", "tasks/result without lastSeqNr returns segments 1 and 2 swapped",
		func(t *testing.T, e *editor) {
			e.sub(21, `"chunk 1;`, `"CHUNK-A;`)
			e.sub(21, `"chunk 2;`, `"chunk 1;`)
			e.sub(21, `"CHUNK-A;`, `"chunk 2;`)
		}},
	{"S1905-IMMEDIATE", "streaming-results", "the immediate answer carries its task in status working",
		func(t *testing.T, e *editor) {
			id := e.rec(36).RPC.TaskID
			e.sub(36, `"result":{`, `"result":{"task":{"taskId":"`+id+`","status":"working","createdAt":"2026-11-23T21:59:23.812Z","lastUpdatedAt":"2026-11-23T21:59:23.812Z","ttl":300000,"pollInterval":500},`)
		}},
	{"S2679-SEQ", "partial", "the first partial notification has seq 1",
		func(t *testing.T, e *editor) { e.sub(17, `"seq":0`, `"seq":1`) }},
	{"S2679-AFTER-TERMINAL", "partial", "the last partial notification follows the completed status on the GET stream",
		func(t *testing.T, e *editor) { e.swap(19, 20) }},
	{"S2679-AFTER-TERMINAL-stdio", "stdio-streaming", "over stdio, the last partial notification follows the response that completed the task",
		func(t *testing.T, e *editor) { e.swap(10, 11) }},
	{"S2679-CONTENT", "partial", "a partial notification has empty content",
		func(t *testing.T, e *editor) { e.re(18, `"content":\[[^\]]*\]`, `"content":[]`) }},
	{"S2679-NEGOTIATION", "partial", "the client does not declare tasks.streaming.partial, yet gets partial notifications",
		func(t *testing.T, e *editor) { e.sub(1, `,"streaming":{"partial":{}}`, ``) }},
	{"HTTP-EVENT-ID-UNIQUE", "streaming", "an event of the GET stream reuses id 1_2 of the POST stream",
		func(t *testing.T, e *editor) { e.rec(20).SSE.ID = "1_2" }},
	{"HTTP-RESUME-SAME-STREAM", "resume-last-event-id", "the replay after Last-Event-ID 1_2 carries a response to request 1, not request 2",
		func(t *testing.T, e *editor) { e.sub(19, `"id":2`, `"id":1`) }},
	{"HTTP-RESUME-SAME-STREAM-standalone", "streaming", "the final response of the call comes on the standalone GET stream",
		func(t *testing.T, e *editor) {
			r, get := e.rec(24), e.rec(22)
			r.Conn, r.Exchange, r.Stream, r.SSE.ID = get.Conn, get.Exchange, get.Stream, "0_5"
			e.cut(22, 23) // the completed notification: on the same stream before isComplete, an S1905-COMPLETE failure
		}},
	{"HTTP-RESUME-SAME-STREAM-other-stream", "streaming", "a GET with Last-Event-ID 1_5 (the call's stream) replays event 0_3 (a partial notification) of the standalone GET stream",
		func(t *testing.T, e *editor) {
			head, resp := *e.rec(9), *e.rec(10) // a GET like the standalone one
			at := e.rec(25).Offset
			var recs []traces.Record
			for _, r := range []traces.Record{head, resp, *e.rec(21), *e.rec(25)} {
				r = r.Clone()
				r.Conn, r.Exchange, r.Offset = 200, 6, at
				r.Stream = strings.Replace(r.Stream, "3", "6", 1)
				recs = append(recs, r)
			}
			recs[0].HTTP.Header = append(recs[0].HTTP.Header, traces.HeaderField{Name: "Last-Event-ID", Value: "1_5"})
			recs[3].Stream, recs[3].Dir = "get:6", traces.DirServerToClient
			e.insert(26, recs...)
		}},
	{"HTTP-RESUME-COMPLETE", "resume-last-event-id", "the server sent event 1_3 on the call's stream after 1_2, which the client never got (the server's view); the replay after Last-Event-ID 1_2 leaves it out",
		func(t *testing.T, e *editor) {
			sent, post := e.rec(19).Clone(), e.rec(14)
			sent.Conn, sent.Exchange, sent.Stream, sent.Offset, sent.Side = post.Conn, post.Exchange, post.Stream, post.Offset, traces.SideServer
			e.cut(19, 20) // the replay of 1_3
			e.insert(15, sent)
		}},
	{"S1905-COMPLETE-early-same-stream", "streaming", "the task's completed status notification comes on the call's stream before seqNr 3 and isComplete: true",
		func(t *testing.T, e *editor) {
			n, post := e.rec(22), e.rec(23)
			n.Conn, n.Exchange, n.Stream, n.SSE.ID = post.Conn, post.Exchange, post.Stream, "1_35"
		}},
	{"S1905-COMPLETE-never", "streaming", "the call's stream ends without isComplete: true (the final response is gone) though the task completed; the client then asks tasks/get, answered completed",
		func(t *testing.T, e *editor) {
			task := e.rec(16).RPC.TaskID
			at := e.rec(25).Offset
			e.cut(24, 25)
			e.insert(27, e.exchange(at, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+task+`"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"taskId":"`+task+`","status":"completed","createdAt":"2026-11-23T21:58:29.162Z","lastUpdatedAt":"2026-11-23T21:58:29.223Z","ttl":300000,"pollInterval":500}}`)...)
		}},
	{"S1905-COMPLETE-after-seen", "streaming", "the call's stream ends without isComplete: true; after the client saw the task completed it asks tasks/result with lastSeqNr 3, answered isComplete: false",
		func(t *testing.T, e *editor) {
			task := e.rec(16).RPC.TaskID
			at := e.rec(25).Offset
			e.cut(24, 25) // the final response
			e.insert(27, e.exchange(at, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+task+`","lastSeqNr":3}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"partial-content":[],"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+task+`"}}}}`)...)
		}},
	{"TASK-ISOLATION-notification", "isolation-session-origin", "session A's task's status notification goes to session B's stream too",
		func(t *testing.T, e *editor) {
			task := e.rec(12).RPC.TaskID
			head, resp, end := e.rec(23).Clone(), e.rec(25).Clone(), e.rec(27).Clone()
			for _, r := range []*traces.Record{&head, &resp, &end} {
				r.Conn, r.Exchange = 99, 99
			}
			head.Stream, resp.Stream, end.Stream = "req:99", "get:99", "get:99"
			head.HTTP.Method = "GET"
			for i, f := range resp.HTTP.Header {
				if f.Name == "Content-Type" {
					resp.HTTP.Header[i].Value = "text/event-stream"
				}
			}
			msg := `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"` + task + `","status":"completed","createdAt":"2026-11-23T22:00:51.000Z","lastUpdatedAt":"2026-11-23T22:00:51.300Z","ttl":300000}}`
			ev := resp.Clone()
			ev.Kind, ev.HTTP = traces.KindSSEEvent, nil
			ev.SSE = &traces.SSEFields{ID: "0_1", HasID: true, Event: "message", Data: msg}
			ev.RPC = traces.DescribeMessage([]byte(msg))
			e.insert(28, head, resp, ev, end)
		}},
	{"HTTP-NO-BROADCAST", "streaming-results", "the initialize response is sent again on the call's SSE stream",
		func(t *testing.T, e *editor) {
			ev := *e.rec(13)
			ev.SSE = &traces.SSEFields{ID: "1_9", HasID: true, Event: "message"}
			e.insert(14, ev)
			e.set(14, e.payload(3))
		}},
	{"HTTP-ORIGIN", "isolation-session-origin", "a request with Origin http://evil.example is answered 200",
		func(t *testing.T, e *editor) { e.rec(40).HTTP.Status = 200 }},
	{"HTTP-SESSION-MISSING", "isolation-session-origin", "a tasks/list without Mcp-Session-Id is answered 200, not 400",
		func(t *testing.T, e *editor) { e.rec(35).HTTP.Status = 200 }},
	{"HTTP-SESSION-terminated", "isolation-session-origin", "a request of a deleted session is answered 200, not 404",
		func(t *testing.T, e *editor) { e.rec(48).HTTP.Status = 200 }},
	{"HTTP-SESSION-notification", "streaming", "a POST of notifications/initialized alone is answered 200, not 202",
		func(t *testing.T, e *editor) { e.rec(7).HTTP.Status = 200 }},
	{"CLIENT-RESUME", "resume-last-event-id", "the call's stream is cut and the client never resumes it nor asks for the task",
		func(t *testing.T, e *editor) { e.cut(17, 26) }},
	{"CLIENT-RESUME-older-id", "resume-last-event-id", "the client resumes with Last-Event-ID 1_1, though it received 1_2",
		func(t *testing.T, e *editor) {
			e.header(17, "Last-Event-ID", "1_1")
			replay := *e.rec(14)
			get := e.rec(19)
			replay.Conn, replay.Exchange, replay.Stream, replay.Offset = get.Conn, get.Exchange, get.Stream, get.Offset
			e.insert(19, replay)
		}},
	{"CLIENT-RESUME-lastseqnr", "resume-last-event-id", "after the cut, the client asks tasks/result with lastSeqNr 2, though it received only seqNr 1: segment 2 is lost",
		func(t *testing.T, e *editor) {
			task := e.rec(13).RPC.TaskID
			at := e.rec(17).Offset
			e.cut(17, 23) // the GET that resumed the stream
			e.insert(17, e.exchange(at, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+task+`","lastSeqNr":2}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"partial-content":[{"seqNr":3,"type":"text","text":"chunk 3;cccccccccccccccccccccccc"}],"isError":false,"isComplete":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+task+`"}}}}`)...)
		}},
	{"CLIENT-RESUME-deleted", "resume-last-event-id", "the call's stream is cut; instead of resuming, the client deletes its session",
		func(t *testing.T, e *editor) { e.cut(17, 23) }},
	{"CLIENT-RESUME-lastseqnr-zero", "resume-last-event-id", "after the cut, the client resumes with tasks/result and lastSeqNr 0, though it received seqNr 1",
		func(t *testing.T, e *editor) {
			task := e.rec(13).RPC.TaskID
			at := e.rec(17).Offset
			e.cut(17, 23) // the GET that resumed the stream
			e.insert(17, e.exchange(at, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+task+`","lastSeqNr":0}}`,
				`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: lastSeqNr must be a positive integer (seqNr starts at 1), got 0"}}`)...)
		}},
	{"CLIENT-TASKS-GET-INTERVAL", "poll", "the client polls tasks/get 10ms after the previous one; pollInterval is 500ms",
		func(t *testing.T, e *editor) {
			at := e.rec(22).Offset + 10*time.Millisecond
			get := e.take(24, 29)
			for i := range get {
				get[i].Offset = at
			}
			e.insert(23, get...)
		}},
	// 2026-07-28: edits of the reference pair's trace (rev2026).
	{"S2663-RESULT-TYPE", "rev2026", "a tasks/get is answered with resultType task, which only a CreateTaskResult carries",
		func(t *testing.T, e *editor) {
			e.sub(8, `"id":2,"result":{"resultType":"complete"`, `"id":2,"result":{"resultType":"task"`)
		}},
	{"S2663-RESULT-TYPE-create", "rev2026", "a CreateTaskResult has resultType complete, not task",
		func(t *testing.T, e *editor) { e.sub(3, `"resultType":"task"`, `"resultType":"complete"`) }},
	{"S2663-RESULT-TYPE-input", "rev2026", "the multi round-trip answer of a tools/call has resultType input_required but no inputRequests",
		func(t *testing.T, e *editor) {
			e.re(174, `"inputRequests":\{"user_name":\{"method":"elicitation/create","params":\{[^}]*"requestedSchema":\{"properties":\{"name":\{"type":"string"\}\},"required":\["name"\],"type":"object"\}\}\}\},`, ``)
		}},
	{"S2663-GET-SHAPE", "rev2026", "the tasks/get of the failed task carries no error",
		func(t *testing.T, e *editor) { e.re(43, `,"error":\{[^}]*\}`, ``) }},
	{"S2663-GET-SHAPE-completed", "rev2026", "the tasks/get of the task completed with isError carries no result",
		func(t *testing.T, e *editor) {
			e.sub(98, `"result":{"resultType":"complete","_meta":{"dev.tasksim`, `"outcome":{"resultType":"complete","_meta":{"dev.tasksim`)
		}},
	{"S2663-TERMINAL-FINAL", "rev2026", "a tasks/get sent after the client saw the task completed answers working",
		func(t *testing.T, e *editor) { e.sub(118, `"status":"completed"`, `"status":"working"`) }},
	{"S2663-TERMINAL-FINAL-result", "rev2026", "a tasks/get sent after the client saw the task completed answers completed with another result",
		func(t *testing.T, e *editor) { e.sub(118, `in 0.05s`, `in 9s`) }},
	{"S2663-TERMINAL-FINAL-listen", "rev2026", "the listen stream carries the task completed, then working",
		func(t *testing.T, e *editor) { e.swap(162, 163) }},
	{"S2663-TERMINAL-FINAL-two", "rev2026", "the listen also asks for the first task, seen completed by tasks/get, and its notifications/tasks says failed",
		func(t *testing.T, e *editor) {
			id, done := e.rec(156).RPC.TaskID, e.rec(3).RPC.TaskID
			e.sub(159, `"taskIds":["`+id+`"]`, `"taskIds":["`+id+`","`+done+`"]`)
			e.sub(161, `"taskIds":["`+id+`"]`, `"taskIds":["`+id+`","`+done+`"]`)
			var task map[string]any
			if err := json.Unmarshal([]byte(e.payload(8)), &struct {
				Result *map[string]any `json:"result"`
			}{&task}); err != nil {
				t.Fatal(err)
			}
			delete(task, "result")
			delete(task, "resultType")
			task["status"] = "failed"
			task["error"] = map[string]any{"code": -32603, "message": "lost"}
			task["_meta"] = map[string]any{"io.modelcontextprotocol/subscriptionId": 25}
			params, _ := json.Marshal(task)
			msg := `{"jsonrpc":"2.0","method":"notifications/tasks","params":` + string(params) + `}`
			n := e.rec(163).Clone()
			n.SSE.Data, n.RPC = msg, traces.DescribeMessage([]byte(msg))
			e.insert(164, n)
		}},
	{"S2663-DURABLE-CREATE", "rev2026", "the first tasks/get after the CreateTaskResult is answered -32602 (not found)",
		func(t *testing.T, e *editor) {
			e.set(8, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}`)
		}},
	{"S2663-NOT-FOUND", "rev2026", "tasks/get of a task id the server never gave out is answered -32603, not -32602",
		func(t *testing.T, e *editor) { e.sub(123, `"code":-32602`, `"code":-32603`) }},
	{"S2663-REMOVED-METHODS", "rev2026", "tasks/result is answered with a result, as in 2025-11-25",
		func(t *testing.T, e *editor) {
			e.rec(127).HTTP.Status = 200
			e.set(128, `{"jsonrpc":"2.0","id":903,"result":{"resultType":"complete","content":[{"type":"text","text":"Computed \"x\" in 0.05s"}]}}`)
		}},
	{"S2663-ACK-EMPTY", "rev2026", "the acknowledgement of tasks/cancel carries the task's id and status",
		func(t *testing.T, e *editor) {
			e.sub(108, `"result":{"resultType":"complete",`, `"result":{"resultType":"complete","taskId":"`+e.rec(105+1).RPC.TaskID+`","status":"working",`)
		}},
	{"S2663-INPUT-KEYS", "rev2026", "the second tasks/get in input_required names another request under the same inputRequests key",
		func(t *testing.T, e *editor) { e.sub(23, `"message":"Delete ?"`, `"message":"Delete everything?"`) }},
	{"HTTP-HEADER-MISMATCH", "rev2026", "a tasks/get whose Mcp-Name disagrees with its taskId is answered HTTP 200",
		func(t *testing.T, e *editor) { e.rec(137).HTTP.Status = 200 }},
	{"HTTP-STATELESS", "rev2026", "a GET of the 2026-07-28 revision is answered 400, not 405",
		func(t *testing.T, e *editor) { e.rec(141).HTTP.Status = 400 }},
	{"HTTP-STATELESS-session", "rev2026", "the answer to a 2026-07-28 tools/call mints an Mcp-Session-Id",
		func(t *testing.T, e *editor) {
			h := e.rec(2).HTTP
			h.Header = append(h.Header, traces.HeaderField{Name: "Mcp-Session-Id", Value: "7Q2M5WJ3X2T4"})
		}},
	{"S2663-CAPABILITY", "rev2026", "a tasks/get whose capabilities do not declare the tasks extension is answered -32602, not -32021",
		func(t *testing.T, e *editor) {
			e.set(169, `{"jsonrpc":"2.0","id":906,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}`)
		}},
	{"S2663-CAPABILITY-create", "rev2026", "a tools/call whose capabilities do not declare the tasks extension is answered with a CreateTaskResult",
		func(t *testing.T, e *editor) {
			e.set(151, `{"jsonrpc":"2.0","id":23,"result":{"resultType":"task","taskId":"5f0c2a1e-8d3b-4c6e-9a7f-2b1d4e6c8a90","status":"working","createdAt":"2026-11-28T09:05:08.000Z","lastUpdatedAt":"2026-11-28T09:05:08.000Z","ttlMs":300000,"pollIntervalMs":100}}`)
		}},
	{"S2663-ID-ENTROPY", "rev2026", "the server numbers its tasks: task-1, task-2",
		func(t *testing.T, e *editor) {
			for i, n := range []int{3, 13} {
				id := regexp.MustCompile(`"taskId":"([^"]*)"`).FindStringSubmatch(e.payload(n))[1]
				e.replaceEverywhere(id, fmt.Sprintf("task-%d", i+1))
			}
		}},
	{"S2663-LISTEN-TASKS", "rev2026", "the listen asks for (and is agreed) another task, yet gets notifications/tasks of the one it followed",
		func(t *testing.T, e *editor) {
			id, other := e.rec(156).RPC.TaskID, e.rec(3).RPC.TaskID
			e.sub(159, `"taskIds":["`+id+`"]`, `"taskIds":["`+other+`"]`)
			e.sub(161, `"taskIds":["`+id+`"]`, `"taskIds":["`+other+`"]`)
		}},
	{"S2663-LISTEN-TASKS-stream", "rev2026", "a notifications/tasks comes on the stream answering the tools/call that created the task, before its answer",
		func(t *testing.T, e *editor) {
			n := e.rec(162).Clone()
			post := e.rec(156)
			n.Conn, n.Exchange, n.Stream, n.Offset = post.Conn, post.Exchange, post.Stream, post.Offset
			n.Kind, n.Raw, n.SSE = traces.KindMessage, []byte(n.SSE.Data), nil
			e.insert(156, n)
		}},
	{"S2663-TASK-FIELDS", "rev2026", "a tasks/get answer names its ttl the 2025-11-25 way, ttl, not ttlMs",
		func(t *testing.T, e *editor) { e.sub(53, `"ttlMs":300000`, `"ttl":300000`) }},
	{"S2663-LISTEN-TASKS-progress", "rev2026", "a notifications/progress comes on the listen stream",
		func(t *testing.T, e *editor) {
			n := e.rec(162).Clone()
			msg := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":25},"progressToken":"p1","progress":1}}`
			n.SSE.Data, n.RPC = msg, traces.DescribeMessage([]byte(msg))
			e.insert(163, n)
		}},
	// 2026-07-28, the client's side: edits of the same trace.
	{"CLIENT-2663-POLL-INTERVAL", "rev2026", "the client polls the failing task 10ms after its previous tasks/get of it; the server gave pollIntervalMs 100",
		func(t *testing.T, e *editor) {
			at := e.rec(56).Offset + 10*time.Millisecond
			for i := 60; i < 65; i++ {
				e.rec(i).Offset = at
			}
		}},
	{"CLIENT-2663-MCP-NAME", "rev2026", "a tasks/get of the client's task has no Mcp-Name header (and is answered HTTP 400 with -32020)",
		func(t *testing.T, e *editor) {
			h := e.rec(55).HTTP
			h.Header = slices.DeleteFunc(h.Header, func(f traces.HeaderField) bool { return f.Name == "Mcp-Name" })
			e.rec(57).HTTP.Status = 400
			e.set(58, `{"jsonrpc":"2.0","id":11,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header missing"}}`)
		}},
	{"CLIENT-2663-CAPABILITY", "rev2026", "a tasks/get of the client's task does not declare the tasks extension (and is answered -32021)",
		func(t *testing.T, e *editor) {
			e.sub(56, `,"extensions":{"io.modelcontextprotocol/tasks":{}}`, ``)
			e.rec(57).HTTP.Status = 400
			e.set(58, `{"jsonrpc":"2.0","id":11,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`)
		}},
	{"CLIENT-2663-NEW-ID", "rev2026", "the stream of the first tools/call breaks before its answer, and the client re-issues it with the same id 1",
		func(t *testing.T, e *editor) {
			head, msg := e.rec(0).Clone(), e.rec(1).Clone()
			end := traces.Record{Dir: traces.DirServerToClient, Kind: traces.KindBodyEnd, Note: "upstream body broke", End: traces.EndServer, Revision: head.Revision}
			for _, r := range []*traces.Record{&head, &msg, &end} {
				r.Conn, r.Exchange, r.Offset = 100, 100, 0
			}
			head.Stream, msg.Stream, end.Stream = "req:100", "req:100", "post:100"
			e.insert(0, head, msg, end)
		}},
	{"CLIENT-2663-NEW-ID-outstanding", "rev2026", "while its subscriptions/listen (id 25) is open, the client sends a tasks/get with id 25",
		func(t *testing.T, e *editor) {
			get := make([]traces.Record, 0, 5)
			for i := 110; i < 115; i++ {
				r := e.rec(i).Clone()
				r.Conn, r.Exchange, r.Offset = 100, 100, e.rec(162).Offset
				r.Stream = strings.Replace(strings.Replace(r.Stream, ":23", ":100", 1), "req:23", "req:100", 1)
				get = append(get, r)
			}
			e.insert(163, get...)
			e.sub(164, `"id":22,`, `"id":25,`)
			e.sub(166, `"id":22,`, `"id":25,`)
		}},
	{"CLIENT-2663-RESULT-TYPE", "rev2026", "the multi round-trip answer of a tools/call has a resultType the revision does not define, and the client answers its inputRequests as if it were input_required",
		func(t *testing.T, e *editor) {
			e.sub(174, `"resultType":"input_required"`, `"resultType":"x-needs-input"`)
		}},
	{"CLIENT-2663-KEEP-POLLING", "rev2026", "the client stops polling the failing task while it is working: its last tasks/get (the one that saw it completed) is gone",
		func(t *testing.T, e *editor) { e.cut(95, 100) }},
	{"CLIENT-2663-FAILED-OUTCOME", "rev2026", "the CreateTaskResult of the protocol-error task says failed (a Task has no error), and the client never asks tasks/get for its error",
		func(t *testing.T, e *editor) {
			e.sub(38, `"status":"working"`, `"status":"failed"`)
			e.cut(40, 45)
		}},
	{"CLIENT-POLL-INTERVAL-retry", "resume-last-event-id", "the client reconnects 7ms after the stream broke; the server set retry 1000ms",
		func(t *testing.T, e *editor) {
			d := e.rec(17).Offset - e.rec(15).Offset - 7*time.Millisecond
			for i := 17; i < len(e.recs); i++ {
				e.recs[i].Offset -= d
			}
		}},
}

func TestGenerateFailFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fail")
	}
	old, _ := filepath.Glob(filepath.Join("testdata", "fail", "*.jsonl"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, ff := range failFixtures {
		t.Run(ff.name, func(t *testing.T) {
			e := &editor{t: t, recs: readFixture(t, filepath.Join("testdata", "pass", ff.from+".jsonl"))}
			ff.edit(t, e)
			protocol := Revision20251125
			if len(e.recs) > 0 && e.recs[0].Revision != "" {
				protocol = e.recs[0].Revision
			}
			h := traces.Header{FormatVersion: 1, TasksimVersion: "dev", Protocol: protocol, Labels: []traces.Label{
				{Key: "violates", Value: ruleOf(ff.name)},
				{Key: "edit", Value: ff.why},
				{Key: "from", Value: "testdata/pass/" + ff.from + ".jsonl (generated by fixtures_gen_test.go -update)"},
			}}
			writeFixture(t, filepath.Join("testdata", "fail", ff.name+".jsonl"), h, e.recs)
		})
	}
}

func readFixture(t testing.TB, path string) []traces.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := traces.NewJSONLReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var recs []traces.Record
	for rec, err := range traces.All(r) {
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func writeFixture(t *testing.T, path string, h traces.Header, recs []traces.Record) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"header": traces.HeaderJSON(h)}); err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		rec.Index = uint64(i)
		if err := enc.Encode(traces.RecordJSON(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editor edits the records of a fixture, addressed by their index in the
// pass fixture (stable: the pass fixtures are committed). Each edit fails
// the test when its target is not as expected, so that a changed pass
// fixture cannot silently make a fail fixture meaningless.
type editor struct {
	t    *testing.T
	recs []traces.Record
}

func (e *editor) rec(i int) *traces.Record {
	e.t.Helper()
	if i >= len(e.recs) {
		e.t.Fatalf("no record %d", i)
	}
	return &e.recs[i]
}

// payload is the JSON-RPC message a record carries.
func (e *editor) payload(i int) string {
	r := e.rec(i)
	if r.Kind == traces.KindSSEEvent {
		return r.SSE.Data
	}
	return string(r.Raw)
}

// set replaces a record's message and describes it again.
func (e *editor) set(i int, msg string) {
	e.t.Helper()
	if !json.Valid([]byte(msg)) {
		e.t.Fatalf("record %d: edit makes invalid JSON: %s", i, msg)
	}
	r := e.rec(i)
	if r.Kind == traces.KindSSEEvent {
		r.SSE.Data = msg
		r.Raw = nil
	} else {
		r.Raw = []byte(msg)
	}
	r.RPC = traces.DescribeMessage([]byte(msg))
}

// sub replaces the one occurrence of old in a record's message.
func (e *editor) sub(i int, old, new string) {
	e.t.Helper()
	p := e.payload(i)
	if strings.Count(p, old) != 1 {
		e.t.Fatalf("record %d: %q occurs %d times in %s", i, old, strings.Count(p, old), p)
	}
	e.set(i, strings.Replace(p, old, new, 1))
}

// re replaces the one match of pattern in a record's message.
func (e *editor) re(i int, pattern, repl string) {
	e.t.Helper()
	p := e.payload(i)
	rx := regexp.MustCompile(pattern)
	if n := len(rx.FindAllStringIndex(p, -1)); n != 1 {
		e.t.Fatalf("record %d: %s matches %d times in %s", i, pattern, n, p)
	}
	e.set(i, rx.ReplaceAllString(p, repl))
}

// replaceAll replaces old in every message.
func (e *editor) replaceAll(old, new string) {
	e.t.Helper()
	n := 0
	for i := range e.recs {
		if e.recs[i].RPC == nil {
			continue
		}
		if p := e.payload(i); strings.Contains(p, old) {
			e.set(i, strings.ReplaceAll(p, old, new))
			n++
		}
	}
	if n == 0 {
		e.t.Fatalf("%q is in no message", old)
	}
}

// replaceEverywhere replaces old in every message and header value.
func (e *editor) replaceEverywhere(old, new string) {
	e.t.Helper()
	e.replaceAll(old, new)
	for i := range e.recs {
		if h := e.recs[i].HTTP; h != nil {
			for j := range h.Header {
				h.Header[j].Value = strings.ReplaceAll(h.Header[j].Value, old, new)
			}
		}
	}
}

func (e *editor) header(i int, name, value string) {
	e.t.Helper()
	h := e.rec(i).HTTP
	for j := range h.Header {
		if strings.EqualFold(h.Header[j].Name, name) {
			h.Header[j].Value = value
			return
		}
	}
	e.t.Fatalf("record %d has no header %s", i, name)
}

// take removes records [from, to) and returns them.
func (e *editor) take(from, to int) []traces.Record {
	out := append([]traces.Record(nil), e.recs[from:to]...)
	e.cut(from, to)
	return out
}

// cut removes records [from, to).
func (e *editor) cut(from, to int) {
	e.t.Helper()
	if from > to || to > len(e.recs) {
		e.t.Fatalf("cut %d..%d of %d records", from, to, len(e.recs))
	}
	e.recs = append(e.recs[:from:from], e.recs[to:]...)
}

// insert puts recs before record i.
func (e *editor) insert(i int, recs ...traces.Record) {
	e.recs = append(e.recs[:i:i], append(recs, e.recs[i:]...)...)
}

func (e *editor) swap(i, j int) {
	e.recs[i], e.recs[j] = e.recs[j], e.recs[i]
	e.recs[i].Offset, e.recs[j].Offset = e.recs[j].Offset, e.recs[i].Offset
}

// exchange builds a whole POST exchange (request head and message,
// response head, message and body end) modelled on the recorder's, in the
// session of the fixture's first request.
func (e *editor) exchange(at time.Duration, ex uint64, method, req, resp string) []traces.Record {
	e.t.Helper()
	var sid string
	for _, r := range e.recs {
		if v, ok := r.HTTP.Get("Mcp-Session-Id"); ok {
			sid = v
			break
		}
	}
	conn := ex + 100
	n := fmt.Sprint(ex)
	head := []traces.HeaderField{{Name: "Host", Value: "127.0.0.1:17151"}, {Name: "Content-Type", Value: "application/json"}, {Name: "Mcp-Session-Id", Value: sid}}
	recs := []traces.Record{
		{Offset: at, Conn: conn, Exchange: ex, Stream: "req:" + n, Dir: traces.DirClientToServer, Kind: traces.KindRequestHead, HTTP: &traces.HTTPHead{Method: method, URL: "/mcp", Header: head}},
		{Offset: at, Conn: conn, Exchange: ex, Stream: "req:" + n, Dir: traces.DirClientToServer, Kind: traces.KindMessage, Raw: []byte(req), RPC: traces.DescribeMessage([]byte(req))},
		{Offset: at, Conn: conn, Exchange: ex, Stream: "post:" + n, Dir: traces.DirServerToClient, Kind: traces.KindResponseHead, HTTP: &traces.HTTPHead{Status: 200, Header: []traces.HeaderField{{Name: "Content-Type", Value: "application/json"}, {Name: "Mcp-Session-Id", Value: sid}}}},
		{Offset: at, Conn: conn, Exchange: ex, Stream: "post:" + n, Dir: traces.DirServerToClient, Kind: traces.KindMessage, Raw: []byte(resp), RPC: traces.DescribeMessage([]byte(resp))},
		{Offset: at, Conn: conn, Exchange: ex, Stream: "post:" + n, Dir: traces.DirServerToClient, Kind: traces.KindBodyEnd, Note: "eof", End: traces.EndEOF},
	}
	return recs
}
