package recorder_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

const (
	modern = string(mcp.Revision20260728)
	legacy = string(mcp.Revision20251125)
)

// gatedTool is a tool that may run as a task and returns "done" once open
// is closed: a task the test reads stays working until then.
func gatedTool(open <-chan struct{}) *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, _ *server.Call) (*mcp.CallToolResult, error) {
				select {
				case <-open:
					return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("done")}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}, nil
		},
	}
}

// meta2026 is the per-request _meta of a client that declares the tasks
// extension.
const meta2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// request2026 builds a 2026-07-28 request with the params' other members
// fields, and its routing headers as a conforming client sets them.
func request2026(t *testing.T, id int, method, fields string) (string, http.Header) {
	t.Helper()
	params := `{` + fields
	if fields != "" {
		params += ","
	}
	params += `"_meta":` + meta2026 + `}`
	h := http.Header{}
	if err := rev.SetHeaders(h, method, json.RawMessage(params), rev.ProtocolVersion, rev.CoreNameRules().With(tasks.NameRules())); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": json.RawMessage(params)})
	return string(body), h
}

// post sends a request through the proxy and returns its one JSON-RPC
// answer (from a JSON body or the last SSE event).
func post(t *testing.T, u, body string, h http.Header) *mcp.Message {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		i := strings.LastIndex(text, "data: ")
		if i < 0 {
			t.Fatalf("event stream without data: %q", text)
		}
		text, _, _ = strings.Cut(text[i+len("data: "):], "\n")
	}
	m, err := mcp.DecodeMessage([]byte(text))
	if err != nil {
		t.Fatalf("answer %q: %v", text, err)
	}
	return m
}

// TestProxyRecordsRevisions records real traffic of both eras through one
// proxy in front of the dual-era reference server over HTTP on 127.0.0.1:
// every record of a 2026-07-28 exchange says 2026-07-28, every record of
// the 2025-11-25 session 2025-11-25 (the head of its initialize, which has
// neither header nor session, none), the routing headers are in the
// request heads, and the task ids and result types of the tasks
// extension's shapes are in the rpc fields.
func TestProxyRecordsRevisions(t *testing.T) {
	open := make(chan struct{})
	srv := server.New(&server.Options{Tools: []*server.Tool{gatedTool(open)}})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	upstream := httptest.NewServer(h)
	defer func() {
		close(open)
		upstream.Close()
		h.Close()
		srv.Close()
	}()
	path := filepath.Join(t.TempDir(), "run.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL + streamhttp.DefaultPath)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	proxyURL := "http://" + ln.Addr().String() + streamhttp.DefaultPath

	// 2026-07-28: discover, a task, its state.
	body, hdr := request2026(t, 1, rev.MethodServerDiscover, "")
	if m := post(t, proxyURL, body, hdr); m.Error != nil {
		t.Fatalf("server/discover: %v", m.Error)
	}
	body, hdr = request2026(t, 2, mcp.MethodToolsCall, `"name":"job","arguments":{}`)
	var created tasks.CreateTaskResult
	if m := post(t, proxyURL, body, hdr); m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.TaskID == "" {
		t.Fatalf("tools/call: %s %v, want a CreateTaskResult", m.Result, m.Error)
	}
	body, hdr = request2026(t, 3, tasks.MethodGet, `"taskId":"`+created.TaskID+`"`)
	if m := post(t, proxyURL, body, hdr); m.Error != nil {
		t.Fatalf("tasks/get: %v", m.Error)
	}
	// 2025-11-25: a session.
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: proxyURL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	sess.Close()

	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readTrace(t, path)

	// An exchange is of 2026-07-28 if its request has Mcp-Method (the
	// client sent the routing headers), else of the 2025-11-25 session.
	exchangeRev := map[uint64]string{}
	for _, r := range recs {
		if r.Kind == traces.KindRequestHead {
			exchangeRev[r.Exchange] = legacy
			if _, ok := r.HTTP.Get(rev.HeaderMethod); ok {
				exchangeRev[r.Exchange] = modern
			}
		}
	}
	methods := map[string]traces.Record{} // request message by method
	answers := map[string]traces.Record{} // answer of 2026-07-28 by request id
	heads := map[string]traces.Record{}   // request head by Mcp-Method
	for _, r := range recs {
		if r.Exchange == 0 {
			if r.Revision != "" {
				t.Errorf("record %d (%s) of no exchange has revision %q", r.Index, r.Kind, r.Revision)
			}
			continue
		}
		want := exchangeRev[r.Exchange]
		switch {
		case r.Kind == traces.KindRequestHead && want == modern:
			m, _ := r.HTTP.Get(rev.HeaderMethod)
			heads[m] = r
		case r.Kind == traces.KindRequestHead && !hasAny(r.HTTP, "Mcp-Session-Id", rev.HeaderProtocolVersion):
			want = "" // initialize's: nothing in the head says
		case r.RPC != nil && r.RPC.Type == "request":
			methods[r.RPC.Method] = r
		case r.RPC != nil && r.RPC.Type == "response" && want == modern:
			answers[r.RPC.ID] = r
		}
		if r.Revision != want {
			t.Errorf("record %d (%s %s, exchange %d) revision %q, want %q", r.Index, r.Kind, r.Stream, r.Exchange, r.Revision, want)
		}
	}
	for _, m := range []string{rev.MethodServerDiscover, mcp.MethodToolsCall, tasks.MethodGet, mcp.MethodInitialize, mcp.MethodToolsList} {
		if _, ok := methods[m]; !ok {
			t.Errorf("no %s request recorded", m)
		}
	}
	if r := methods[tasks.MethodGet]; r.Revision != modern || r.RPC.TaskID != created.TaskID {
		t.Errorf("tasks/get recorded as %+v, revision %q", r.RPC, r.Revision)
	}
	if r := methods[mcp.MethodToolsList]; r.Revision != legacy {
		t.Errorf("the session's tools/list has revision %q, want %s", r.Revision, legacy)
	}
	if r := answers["2"]; r.Revision != modern || r.RPC.ResultType != "task" || r.RPC.TaskID != created.TaskID || r.RPC.Status != "working" {
		t.Errorf("CreateTaskResult recorded as %+v, revision %q", r.RPC, r.Revision)
	}
	if r := answers["3"]; r.Revision != modern || r.RPC.ResultType != "complete" || r.RPC.TaskID != created.TaskID || r.RPC.Status != "working" {
		t.Errorf("DetailedTask recorded as %+v, revision %q", r.RPC, r.Revision)
	}
	for method, name := range map[string]string{mcp.MethodToolsCall: "job", tasks.MethodGet: created.TaskID, rev.MethodServerDiscover: ""} {
		r, ok := heads[method]
		if !ok {
			t.Errorf("no request head with Mcp-Method %s", method)
			continue
		}
		if v, _ := r.HTTP.Get(rev.HeaderProtocolVersion); v != modern || r.Revision != modern {
			t.Errorf("%s head: MCP-Protocol-Version %q, revision %q", method, v, r.Revision)
		}
		if v, ok := r.HTTP.Get(rev.HeaderName); v != name || ok != (name != "") {
			t.Errorf("%s head: Mcp-Name %q (%v), want %q", method, v, ok, name)
		}
	}
}

func hasAny(h *traces.HTTPHead, names ...string) bool {
	for _, n := range names {
		if _, ok := h.Get(n); ok {
			return true
		}
	}
	return false
}

// TestConnRecordsRevisions records real traffic of both eras on two
// in-process connections to the dual-era reference server (over the stdio
// transport's pipes): the stateless connection's requests say 2026-07-28
// by their _meta and its answers by their requests, the session's every
// message 2025-11-25; the tasks extension's shapes keep their task ids and
// result types.
func TestConnRecordsRevisions(t *testing.T) {
	open := make(chan struct{})
	srv := server.New(&server.Options{Tools: []*server.Tool{gatedTool(open)}})
	defer srv.Close()
	defer close(open)
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, traces.Header{Command: []string{"test"}}, &traces.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	pipe := recorder.NewPipeline(w, nil)
	ctx := context.Background()
	tr := stdio.Pipe(srv, nil)

	inner, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := recorder.Conn(inner, pipe, &recorder.ConnOptions{ID: 1})
	roundTrip := func(id int, method, fields string) *mcp.Message {
		t.Helper()
		body, _ := request2026(t, id, method, fields)
		m, err := mcp.DecodeMessage([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
		got, err := c.Read(ctx)
		if err != nil || got.Error != nil {
			t.Fatalf("%s: %v %v", method, err, got)
		}
		return got
	}
	roundTrip(1, rev.MethodServerDiscover, "")
	var created tasks.CreateTaskResult
	if m := roundTrip(2, mcp.MethodToolsCall, `"name":"job","arguments":{}`); json.Unmarshal(m.Result, &created) != nil || created.TaskID == "" {
		t.Fatalf("tools/call: %s, want a CreateTaskResult", m.Result)
	}
	roundTrip(3, tasks.MethodGet, `"taskId":"`+created.TaskID+`"`)
	c.Close()

	inner, err = tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.New(nil).Connect(ctx, fixedConn{recorder.Conn(inner, pipe, &recorder.ConnOptions{ID: 2})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	sess.Close()

	if err := pipe.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := traces.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Conn                        uint64
		Dir                         traces.Direction
		Method, ID, Task, Type, Rev string
	}
	var got []row
	for r, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != traces.KindMessage {
			if r.Revision != "" {
				t.Errorf("record %d (%s) has revision %q", r.Index, r.Kind, r.Revision)
			}
			continue
		}
		got = append(got, row{r.Conn, r.Dir, r.RPC.Method, r.RPC.ID, r.RPC.TaskID, r.RPC.ResultType, r.Revision})
	}
	id := created.TaskID
	cs, sc := traces.DirClientToServer, traces.DirServerToClient
	want := []row{
		{1, cs, rev.MethodServerDiscover, "1", "", "", modern},
		{1, sc, "", "1", "", "complete", modern},
		{1, cs, mcp.MethodToolsCall, "2", "", "", modern},
		{1, sc, "", "2", id, "task", modern},
		{1, cs, tasks.MethodGet, "3", id, "", modern},
		{1, sc, "", "3", id, "complete", modern},
		{2, cs, mcp.MethodInitialize, "1", "", "", legacy},
		{2, sc, "", "1", "", "", legacy},
		{2, cs, "notifications/initialized", "", "", "", legacy},
		{2, cs, mcp.MethodToolsList, "2", "", "", legacy},
		{2, sc, "", "2", "", "", legacy},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// fixedConn is a Transport that hands out one Conn.
type fixedConn struct{ c mcp.Conn }

func (f fixedConn) Connect(context.Context) (mcp.Conn, error) { return f.c, nil }

// TestStdioRecordsRevisions records both eras on one stdio child, the
// dual-era reference server: a stateless server/discover and its answer
// say 2026-07-28; initialize, and everything after it that claims no
// revision of its own, 2025-11-25.
func TestStdioRecordsRevisions(t *testing.T) {
	w, path := createTrace(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := recorder.RunStdio(context.Background(), helperCmd(t, "serve"), inR, outW, io.Discard, w)
		outW.Close()
		done <- err
	}()
	answers := bufio.NewReader(outR)
	discover, _ := request2026(t, 1, rev.MethodServerDiscover, "")
	for _, line := range []string{
		discover,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"id"`) {
			if _, err := answers.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	inW.Close()
	_, _ = io.Copy(io.Discard, answers)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	type row struct{ Dir, Method, ID, Rev string }
	var got []row
	for _, r := range readTrace(t, path) {
		if r.Kind == traces.KindStdioLine && r.RPC != nil {
			got = append(got, row{r.Dir.String(), r.RPC.Method, r.RPC.ID, r.Revision})
		}
	}
	want := []row{
		{"c>s", rev.MethodServerDiscover, "1", modern},
		{"s>c", "", "1", modern},
		{"c>s", mcp.MethodInitialize, "2", legacy},
		{"s>c", "", "2", legacy},
		{"c>s", "notifications/initialized", "", legacy},
		{"c>s", mcp.MethodToolsList, "3", legacy},
		{"s>c", "", "3", legacy},
	}
	// The stdout side records after it passed a line on: only the order
	// within a direction is fixed.
	byDir := func(a, b row) int { return strings.Compare(a.Dir, b.Dir) }
	slices.SortStableFunc(want, byDir)
	slices.SortStableFunc(got, byDir)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
