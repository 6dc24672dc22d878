package stdio_test

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// Over stdio a request with the 2026-07-28 per-request _meta is served
// statelessly beside the process's 2025-11-25 session: server/discover,
// tools/call with resultType, the _meta and version checks, and -32601 for
// what the revision removed. The HTTP routing headers do not apply.
func TestServeStatelessOverStdio(t *testing.T) {
	in, out, _ := pipeServer(t, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	send := func(line string) *mcp.Message {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		return readMsg(t, out)
	}

	m := send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	var d rev.DiscoverResult
	if err := json.Unmarshal(m.Result, &d); err != nil || d.Validate() != nil || !d.Capabilities.HasExtension(tasks.ExtensionID) {
		t.Fatalf("server/discover: %s (%v)", m.Result, err)
	}

	m = send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant","arguments":{"text":"hi"},` + meta + `}}`)
	var res rev.CallToolResult
	if err := json.Unmarshal(m.Result, &res); err != nil || res.ResultType != rev.ResultComplete || len(res.Content) != 1 || res.Content[0].Text != "hi" {
		t.Fatalf("tools/call: %s (%v)", m.Result, err)
	}

	for _, tc := range []struct {
		line string
		code int
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, mcp.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, rev.CodeUnsupportedProtocolVersion},
		{`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"x",` + meta + `}}`, mcp.CodeMethodNotFound},
	} {
		if m := send(tc.line); m.Error == nil || m.Error.Code != tc.code {
			t.Errorf("%s: answer %+v, want error %d", tc.line, m, tc.code)
		}
	}

	// The 2025-11-25 session of the process is still there.
	m = send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m.Error != nil || string(m.Result) != "{}" {
		t.Errorf("ping of the session: %+v", m)
	}
}

// Over stdio an initialize that carries the per-request _meta is a
// request of 2026-07-28, which has no initialize: -32601, and the
// process's session is not opened by it (2026-07-28 Versioning, "Backward
// Compatibility with Initialization-Based Versions"). A later initialize
// sent the 2025-11-25 way still opens the session.
func TestServeStatelessInitializeOverStdio(t *testing.T) {
	in, out, _ := pipeServer(t, nil)
	send := func(line string) *mcp.Message {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		return readMsg(t, out)
	}
	m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m.Error == nil || m.Error.Code != mcp.CodeMethodNotFound {
		t.Fatalf("modern initialize: %+v, want -32601", m)
	}
	m = send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	var init mcp.InitializeResult
	if m.Error != nil || json.Unmarshal(m.Result, &init) != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("legacy initialize: %+v", m)
	}
}

// Over stdio notifications/cancelled is how a client cancels a stateless
// request (2026-07-28 Cancellation, "Transport-Specific Cancellation"):
// the call stops and gets no response, and the process's session is not
// touched by it.
func TestStatelessCancelOverStdio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, out, errc := pipeServer(t, nil)
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		write := func(line string) {
			t.Helper()
			if _, err := io.WriteString(in, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		write(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":60000},` + meta + `}}`)
		synctest.Wait()
		write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"no longer needed"}}`)
		synctest.Wait()
		write(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		if m := readMsg(t, out); m.ID.String() != "9" || m.Error != nil {
			t.Fatalf("after the cancellation: %+v, want the ping's answer", m)
		}
		in.Close()
		if out.Scan() {
			t.Errorf("the cancelled call answered %s", out.Bytes())
		}
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if d := time.Since(start); d >= time.Minute {
			t.Errorf("Serve waited %s for the cancelled call, its whole duration", d)
		}
	})
}

// Over stdio subscriptions/listen shares the pipe with everything else:
// its acknowledgement comes first of its messages, every one carries its
// subscription id, each change of an agreed task is pushed, and the
// listen is answered once the task ended (2026-07-28 Subscriptions;
// Tasks, "Task Status Notifications"). A second listen is cancelled with
// notifications/cancelled and gets nothing more; a third is still open
// when the client closes its side, and Serve returns all the same.
func TestListenOverStdio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, out, errc := pipeServer(t, nil)
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		write := func(line string) {
			t.Helper()
			if _, err := io.WriteString(in, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":1000},` + meta + `}}`)
		var created tasks.CreateTaskResult
		if m := readMsg(t, out); json.Unmarshal(m.Result, &created) != nil || created.TaskID == "" {
			t.Fatalf("tools/call: %s %v, want a task", m.Result, m.Error)
		}
		write(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + created.TaskID + `"]},` + meta + `}}`)
		m := readMsg(t, out)
		var ack rev.AcknowledgedParams
		if m.Method != rev.NotificationSubscriptionsAcknowledged || json.Unmarshal(m.Params, &ack) != nil || ack.Meta.SubscriptionID.String() != "2" {
			t.Fatalf("first message %s %s, want the ack of subscription 2", m.Method, m.Params)
		}
		var seen []mcp.TaskStatus
		for {
			m = readMsg(t, out)
			var p tasks.StatusParams
			if m.Method != tasks.NotificationStatus || json.Unmarshal(m.Params, &p) != nil || p.Meta.SubscriptionID.String() != "2" {
				t.Fatalf("message %s %s, want notifications/tasks of subscription 2", m.Method, m.Params)
			}
			seen = append(seen, p.Status)
			if p.Status.IsTerminal() {
				break
			}
		}
		if !slices.Equal(seen, []mcp.TaskStatus{tasks.Working, tasks.Completed}) {
			t.Errorf("pushed %v, want working, completed", seen)
		}
		if m = readMsg(t, out); m.ID.String() != "2" || m.Error != nil || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
			t.Fatalf("message %s %s, want the listen's graceful result", m.Method, m.Result)
		}

		write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":60000},` + meta + `}}`)
		if m := readMsg(t, out); json.Unmarshal(m.Result, &created) != nil || created.TaskID == "" {
			t.Fatalf("tools/call: %s %v, want a task", m.Result, m.Error)
		}
		for _, id := range []string{"4", "5"} {
			write(`{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + created.TaskID + `"]},` + meta + `}}`)
			if m = readMsg(t, out); m.Method != rev.NotificationSubscriptionsAcknowledged {
				t.Fatalf("message %s, want an ack", m.Method)
			}
			if m = readMsg(t, out); m.Method != tasks.NotificationStatus {
				t.Fatalf("message %s, want the task's state", m.Method)
			}
		}
		write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
		write(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		if m := readMsg(t, out); m.ID.String() != "9" {
			t.Fatalf("after the cancellation: %s %s, want the ping's answer", m.Method, m.Result)
		}
		in.Close()
		if out.Scan() {
			t.Errorf("after the pipe closed: %s, want nothing (listen 4 cancelled, 5 cut with the pipe)", out.Bytes())
		}
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}
