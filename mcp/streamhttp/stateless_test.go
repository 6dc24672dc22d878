package streamhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// These tests send 2026-07-28 requests, as raw HTTP, to the reference
// server behind a Handler on a loopback httptest server, and assert the
// status, the JSON-RPC answer and that nothing was left behind: a
// stateless request makes no session, in the handler or the server.

// statelessServer is a reference server behind a Handler on 127.0.0.1.
type statelessServer struct {
	t   *testing.T
	srv *server.Server
	h   *streamhttp.Handler
	url string
	// client sends the requests; nil means http.DefaultClient.
	client *http.Client
}

func newStatelessServer(t *testing.T, revs ...mcp.Revision) *statelessServer {
	t.Helper()
	return newStatelessServerWith(t, &server.Options{Revisions: revs})
}

func newStatelessServerWith(t *testing.T, o *server.Options) *statelessServer {
	t.Helper()
	srv := server.New(o)
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.Close()
		srv.Close()
	})
	return &statelessServer{t: t, srv: srv, h: h, url: ts.URL + streamhttp.DefaultPath}
}

// noState fails the test if a session exists, in the handler or in the
// server.
func (s *statelessServer) noState() {
	s.t.Helper()
	if n := s.h.Stats().Sessions; n != 0 {
		s.t.Errorf("handler holds %d sessions after stateless requests, want 0", n)
	}
	if n := s.srv.Stats().Sessions; n != 0 {
		s.t.Errorf("server holds %d sessions after stateless requests, want 0", n)
	}
}

// answer is one HTTP response: its status, headers and JSON-RPC messages
// (one for a JSON body, each event's for SSE).
type answer struct {
	status int
	header http.Header
	msgs   []*mcp.Message
}

// last is the answer's last message.
func (a *answer) last(t *testing.T) *mcp.Message {
	t.Helper()
	if len(a.msgs) == 0 {
		t.Fatalf("status %d: no JSON-RPC message in the answer", a.status)
	}
	return a.msgs[len(a.msgs)-1]
}

// httpClient is the client that sends the requests.
func (s *statelessServer) httpClient() *http.Client {
	if s.client == nil {
		return http.DefaultClient
	}
	return s.client
}

func (s *statelessServer) do(method string, body string, hdr map[string]string) *answer {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r := sse.NewReader(bytes.NewReader(raw))
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.HasID {
				s.t.Errorf("SSE event with id %q: this revision's streams have no event ids", ev.ID)
			}
			a.msgs = append(a.msgs, decode(s.t, []byte(ev.Data)))
		}
		return a
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		a.msgs = append(a.msgs, decode(s.t, raw))
	}
	return a
}

func decode(t *testing.T, b []byte) *mcp.Message {
	t.Helper()
	m, err := mcp.DecodeMessage(b)
	if err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return m
}

// metaJSON is a well-formed per-request _meta of version v.
func metaJSON(v string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"` + v + `",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}`
}

// request is a JSON-RPC request with id 7 whose params are fields plus
// _meta (none when meta is "").
func request(method, fields, meta string) string {
	var parts []string
	if fields != "" {
		parts = append(parts, fields)
	}
	if meta != "" {
		parts = append(parts, `"_meta":`+meta)
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + strings.Join(parts, ",") + `}}`
}

// headers are the routing headers a conforming client sends.
func headers(method, name string) map[string]string {
	h := map[string]string{rev.HeaderProtocolVersion: rev.ProtocolVersion, rev.HeaderMethod: method}
	if name != "" {
		h[rev.HeaderName] = rev.EncodeHeaderValue(name)
	}
	return h
}

// with returns h with more set ("" deletes the header).
func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// wantError checks an answer's status and its one message: an error
// response to id 7 with code, whose message contains each of says.
func wantError(t *testing.T, a *answer, status, code int, says ...string) *mcp.Error {
	t.Helper()
	if a.status != status {
		t.Errorf("status %d, want %d", a.status, status)
	}
	if got := a.header.Get("Mcp-Session-Id"); got != "" {
		t.Errorf("Mcp-Session-Id %q on a stateless answer", got)
	}
	m := a.last(t)
	if m.Error == nil {
		t.Fatalf("answer is not an error: %s", m.Result)
	}
	if m.Error.Code != code {
		t.Errorf("error code %d (%s), want %d", m.Error.Code, m.Error.Message, code)
	}
	if m.ID.String() != "7" {
		t.Errorf("error id %s, want 7", m.ID)
	}
	for _, s := range says {
		if !strings.Contains(m.Error.Message, s) {
			t.Errorf("error message %q does not say %q", m.Error.Message, s)
		}
	}
	return m.Error
}

func TestStatelessDiscoverListCall(t *testing.T) {
	s := newStatelessServer(t)

	a := s.do(http.MethodPost, request(rev.MethodServerDiscover, "", metaJSON(rev.ProtocolVersion)), headers(rev.MethodServerDiscover, ""))
	if a.status != http.StatusOK {
		t.Fatalf("server/discover: status %d", a.status)
	}
	var d rev.DiscoverResult
	if err := json.Unmarshal(a.last(t).Result, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
	if want := append([]string{rev.ProtocolVersion}, mcp.SupportedProtocolVersions()...); !slices.Equal(d.SupportedVersions, want) {
		t.Errorf("supportedVersions %q, want %q", d.SupportedVersions, want)
	}
	if d.Capabilities.Tools == nil || !d.Capabilities.HasExtension(tasks.ExtensionID) {
		t.Errorf("capabilities %+v: want tools and the tasks extension", d.Capabilities)
	}
	if d.Meta == nil || d.Meta.ServerInfo == nil || d.Meta.ServerInfo.Name != "tasksim" {
		t.Errorf("_meta %+v: want the server's identity", d.Meta)
	}

	a = s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsList, ""))
	var list struct {
		rev.ListToolsResult
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(a.last(t).Result, &list); err != nil {
		t.Fatal(err)
	}
	if list.ResultType != rev.ResultComplete || list.CacheScope != rev.CacheScopePublic || list.TTLMs <= 0 {
		t.Errorf("tools/list: resultType %q, cacheScope %q, ttlMs %d", list.ResultType, list.CacheScope, list.TTLMs)
	}
	var names []string
	for _, tool := range list.Tools {
		var name string
		_ = json.Unmarshal(tool["name"], &name)
		names = append(names, name)
		if _, ok := tool["execution"]; ok {
			t.Errorf("tool %s has an execution member, which this revision does not define", name)
		}
	}
	if !slices.Contains(names, server.ToolInstant) || !slices.Contains(names, server.ToolEcho) {
		t.Errorf("tools/list names %q, want the reference tools", names)
	}

	a = s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant","arguments":{"text":"hi"}`, metaJSON(rev.ProtocolVersion)),
		headers(mcp.MethodToolsCall, server.ToolInstant))
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("tools/call: status %d, Content-Type %q", a.status, a.header.Get("Content-Type"))
	}
	var res rev.CallToolResult
	if err := json.Unmarshal(a.last(t).Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ResultType != rev.ResultComplete || len(res.Content) != 1 || res.Content[0].Text != "hi" || res.IsError {
		t.Errorf("tools/call result %+v, want resultType complete and the text hi", res)
	}
	if typ, err := rev.ResultTypeOf(a.last(t).Result); err != nil || typ != rev.ResultComplete {
		t.Errorf("ResultTypeOf = %q, %v", typ, err)
	}
	s.noState()
}

// A call whose tool reports progress is answered as an SSE stream: the
// notifications, then the result, and no event ids (2026-07-28 Streamable
// HTTP, "Receiving Messages").
func TestStatelessCallStreamsProgress(t *testing.T) {
	s := newStatelessServer(t)
	meta := strings.TrimSuffix(metaJSON(rev.ProtocolVersion), "}") + `,"progressToken":"p1"}`
	a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"slow_text","arguments":{"chunks":2,"intervalMs":0}`, meta),
		headers(mcp.MethodToolsCall, server.ToolSlowText))
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q: want an SSE answer", a.status, a.header.Get("Content-Type"))
	}
	var kinds []string
	for _, m := range a.msgs {
		kinds = append(kinds, m.Method+m.ID.String())
	}
	if want := []string{mcp.NotificationProgress, mcp.NotificationProgress, "7"}; !slices.Equal(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
	if typ, err := rev.ResultTypeOf(a.last(t).Result); err != nil || typ != rev.ResultComplete {
		t.Errorf("final result: resultType %q, %v", typ, err)
	}
	s.noState()
}

// Mcp-Name may carry the Base64 sentinel; the server decodes it before it
// compares (2026-07-28 Streamable HTTP, "Value Encoding").
func TestStatelessBase64Name(t *testing.T) {
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant"`, metaJSON(rev.ProtocolVersion)),
		with(headers(mcp.MethodToolsCall, ""), rev.HeaderName, "=?base64?aW5zdGFudA==?="))
	if a.status != http.StatusOK || a.last(t).Error != nil {
		t.Fatalf("status %d, answer %+v", a.status, a.last(t))
	}
}

func TestStatelessMissingHeader(t *testing.T) {
	for _, header := range []string{rev.HeaderProtocolVersion, rev.HeaderMethod, rev.HeaderName} {
		t.Run(header, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant"`, metaJSON(rev.ProtocolVersion)),
				with(headers(mcp.MethodToolsCall, server.ToolInstant), header, ""))
			e := wantError(t, a, http.StatusBadRequest, rev.CodeHeaderMismatch, header, "missing")
			if len(e.Data) != 0 {
				t.Errorf("data %s: -32020 carries none", e.Data)
			}
			s.noState()
		})
	}
}

func TestStatelessMismatchedHeader(t *testing.T) {
	for _, tc := range []struct {
		name, header, value string
	}{
		{"name", rev.HeaderName, server.ToolEcho},
		{"method", rev.HeaderMethod, mcp.MethodToolsList},
		{"version", rev.HeaderProtocolVersion, "2025-11-25"},
		{"malformed base64", rev.HeaderName, "=?base64?not base64!?="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant"`, metaJSON(rev.ProtocolVersion)),
				with(headers(mcp.MethodToolsCall, server.ToolInstant), tc.header, tc.value))
			wantError(t, a, http.StatusBadRequest, rev.CodeHeaderMismatch, tc.header)
			s.noState()
		})
	}
}

func TestStatelessMissingMeta(t *testing.T) {
	for _, tc := range []struct {
		name, meta, says string
	}{
		{"no _meta", "", "_meta is missing"},
		{"no protocolVersion", `{"io.modelcontextprotocol/clientCapabilities":{}}`, rev.MetaProtocolVersion},
		{"no clientCapabilities", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, rev.MetaClientCapabilities},
		{"clientInfo without version", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x"}}`, rev.MetaClientInfo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, request(mcp.MethodToolsList, "", tc.meta), headers(mcp.MethodToolsList, ""))
			e := wantError(t, a, http.StatusBadRequest, mcp.CodeInvalidParams, tc.says)
			if len(e.Data) != 0 {
				t.Errorf("data %s: none expected", e.Data)
			}
			s.noState()
		})
	}
}

func TestStatelessUnsupportedVersion(t *testing.T) {
	for _, v := range []string{"1900-01-01", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(v)),
				with(headers(mcp.MethodToolsList, ""), rev.HeaderProtocolVersion, v))
			e := wantError(t, a, http.StatusBadRequest, rev.CodeUnsupportedProtocolVersion)
			var data rev.UnsupportedVersionData
			if err := rev.DecodeErrorData(e, &data); err != nil {
				t.Fatal(err)
			}
			want := append([]string{rev.ProtocolVersion}, mcp.SupportedProtocolVersions()...)
			if data.Requested != v || !slices.Equal(data.Supported, want) {
				t.Errorf("data %+v, want requested %q, supported %q", data, v, want)
			}
			s.noState()
		})
	}
}

func TestStatelessUnknownMethod(t *testing.T) {
	for _, method := range []string{mcp.MethodTasksResult, mcp.MethodTasksList, mcp.NotificationTaskStatus, mcp.MethodPing, "logging/setLevel", "no/such"} {
		t.Run(method, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, request(method, "", metaJSON(rev.ProtocolVersion)), headers(method, ""))
			e := wantError(t, a, http.StatusNotFound, mcp.CodeMethodNotFound, method)
			if len(e.Data) != 0 {
				t.Errorf("data %s: none expected", e.Data)
			}
			s.noState()
		})
	}
}

func TestStatelessGetDelete405(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(method, "", map[string]string{rev.HeaderProtocolVersion: rev.ProtocolVersion, "Mcp-Session-Id": "ABC", "Last-Event-ID": "1_1"})
			if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != "POST" {
				t.Errorf("status %d, Allow %q: want 405, POST", a.status, a.header.Get("Allow"))
			}
			if m := a.last(t); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
				t.Errorf("body %+v: want a -32600 error", m)
			}
			s.noState()
		})
	}
}

// Mcp-Session-Id (of no live session) and Last-Event-ID on a stateless
// request are ignored, and no session id is minted or echoed (2026-07-28
// Streamable HTTP, "Earlier Streamable HTTP Revisions").
func TestStatelessIgnoresSessionAndLastEventID(t *testing.T) {
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant"`, metaJSON(rev.ProtocolVersion)),
		with(headers(mcp.MethodToolsCall, server.ToolInstant), "Mcp-Session-Id", "NOSUCHSESSION", "Last-Event-ID", "3_4"))
	if a.status != http.StatusOK || a.last(t).Error != nil {
		t.Fatalf("status %d, answer %+v", a.status, a.last(t))
	}
	if got := a.header.Get("Mcp-Session-Id"); got != "" {
		t.Errorf("Mcp-Session-Id %q echoed", got)
	}
	s.noState()
}

// One endpoint, both eras: an initialize opens a 2025-11-25 session that
// goes on as before while stateless requests come and go beside it.
func TestDualEraEndpoint(t *testing.T) {
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q", a.status, sid)
	}
	var init mcp.InitializeResult
	if err := json.Unmarshal(a.last(t).Result, &init); err != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result %s: %v", a.last(t).Result, err)
	}
	a = s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant"`, metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsCall, server.ToolInstant))
	if typ, err := rev.ResultTypeOf(a.last(t).Result); a.status != http.StatusOK || err != nil || typ != rev.ResultComplete {
		t.Fatalf("stateless call beside a session: status %d, %q, %v", a.status, typ, err)
	}
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	a = s.do(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant"}}`, legacy)
	if a.status != http.StatusOK || a.header.Get("Mcp-Session-Id") != sid {
		t.Fatalf("session call: status %d, session %q", a.status, a.header.Get("Mcp-Session-Id"))
	}
	if bytes.Contains(a.last(t).Result, []byte("resultType")) {
		t.Errorf("a 2025-11-25 result carries resultType: %s", a.last(t).Result)
	}
	if n := s.h.Stats().Sessions; n != 1 {
		t.Errorf("%d sessions, want the one initialize opened", n)
	}
	// GET of the session's client is the 2025-11-25 standalone stream's,
	// not a 405: its protocol version is not a stateless one. Without
	// Accept it is refused with 406 before any stream opens.
	a = s.do(http.MethodGet, "", with(legacy, "Accept", ""))
	if a.status != http.StatusNotAcceptable {
		t.Errorf("GET of a session client without Accept: status %d, want 406 as before", a.status)
	}
}

// A server restricted to one era answers the other's requests with the
// version error (2026-07-28 Versioning, "Protocol Version Negotiation",
// "Backward Compatibility with Initialization-Based Versions").
func TestRevisionRestricted(t *testing.T) {
	t.Run("2025-11-25 only", func(t *testing.T) {
		s := newStatelessServer(t, mcp.Revision20251125)
		a := s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsList, ""))
		e := wantError(t, a, http.StatusBadRequest, rev.CodeUnsupportedProtocolVersion)
		var data rev.UnsupportedVersionData
		if err := rev.DecodeErrorData(e, &data); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(data.Supported, mcp.SupportedProtocolVersions()) || data.Requested != rev.ProtocolVersion {
			t.Errorf("data %+v", data)
		}
		s.noState()
	})
	t.Run("2026-07-28 only", func(t *testing.T) {
		s := newStatelessServer(t, mcp.Revision20260728)
		a := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
		e := wantError(t, a, http.StatusBadRequest, rev.CodeUnsupportedProtocolVersion)
		var data rev.UnsupportedVersionData
		if err := rev.DecodeErrorData(e, &data); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(data.Supported, []string{rev.ProtocolVersion}) || data.Requested != "2025-11-25" {
			t.Errorf("data %+v", data)
		}
		a = s.do(http.MethodGet, "", nil)
		if a.status != http.StatusMethodNotAllowed {
			t.Errorf("GET without headers: status %d, want 405", a.status)
		}
		s.noState()
	})
}

// Closing the SSE answer of a stateless call cancels the call (2026-07-28
// Streamable HTTP, "Cancellation": the server MUST treat it as
// cancellation and MUST NOT send further messages for the request): the
// tool's context ends, and what the tool returns afterwards is not sent.
func TestStatelessCancelOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := make(chan struct{})
		hold := &server.Tool{
			Tool: mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Prepare: func(json.RawMessage) (server.RunFunc, error) {
				return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
					if err := c.Progress(ctx, 1, nil, "started"); err != nil {
						return nil, err
					}
					<-ctx.Done()
					close(stopped)
					// A tool that ignores its cancellation: its result
					// must not reach the transport.
					return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("late")}}, nil
				}, nil
			},
		}
		ep := &lateReplies{Server: server.New(&server.Options{Tools: []*server.Tool{hold}})}
		h := streamhttp.NewHandler(ep, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
		defer ep.Close()
		defer h.Close()
		s := &statelessServer{t: t, srv: ep.Server, h: h, url: "http://" + streamhttp.MemoryHost + streamhttp.DefaultPath,
			client: &http.Client{Transport: streamhttp.NewMemoryTransport(h)}}
		meta := strings.TrimSuffix(metaJSON(rev.ProtocolVersion), "}") + `,"progressToken":1}`
		req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(request(mcp.MethodToolsCall, `"name":"hold"`, meta)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers(mcp.MethodToolsCall, "hold") {
			req.Header.Set(k, v)
		}
		resp, err := s.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := sse.NewReader(resp.Body).Next()
		if err != nil || !strings.Contains(ev.Data, mcp.NotificationProgress) {
			t.Fatalf("first event %+v, %v: want the progress notification", ev, err)
		}
		ep.closed.Store(true)
		resp.Body.Close() // the client closes the stream
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("closing the answer stream did not cancel the call")
		}
		if late := ep.late(); len(late) != 0 {
			t.Errorf("after the stream closed the server sent %d messages, the first %s %s", len(late), late[0].Method, late[0].Result)
		}
		s.noState()
	})
}

// lateReplies serves a reference server and keeps the messages replied to
// a stateless request once closed is set.
type lateReplies struct {
	*server.Server
	closed atomic.Bool

	mu   sync.Mutex
	msgs []*mcp.Message
}

func (e *lateReplies) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil {
		r = lateReplier{e: e, inner: r}
	}
	e.Server.HandleStateless(ctx, msg, r)
}

func (e *lateReplies) late() []*mcp.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.msgs)
}

type lateReplier struct {
	e     *lateReplies
	inner mcp.Replier
}

func (r lateReplier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	if msg != nil && r.e.closed.Load() {
		r.e.mu.Lock()
		r.e.msgs = append(r.e.msgs, msg)
		r.e.mu.Unlock()
	}
	return r.inner.Reply(ctx, msg, final)
}

// An initialize sent the 2026-07-28 way, with the per-request _meta and
// the routing headers, is a request of that revision, which has no
// initialize: 404 with -32601 (2026-07-28 Streamable HTTP, "Protocol
// Version Header"; Versioning, "Backward Compatibility with
// Initialization-Based Versions"). No session is opened. The conformance
// check sep-2575-http-server-method-not-found-404-initialize sends
// exactly this. The one sent the 2025-11-25 way still opens a session.
func TestStatelessInitializeNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"meta and headers", request(mcp.MethodInitialize, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodInitialize, "")},
		{"meta only", request(mcp.MethodInitialize, "", metaJSON(rev.ProtocolVersion)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStatelessServer(t)
			a := s.do(http.MethodPost, tc.body, tc.hdr)
			if tc.hdr == nil {
				// Without the headers the transport's header check
				// answers first: -32020, 400.
				wantError(t, a, http.StatusBadRequest, rev.CodeHeaderMismatch)
			} else {
				wantError(t, a, http.StatusNotFound, mcp.CodeMethodNotFound, mcp.MethodInitialize)
			}
			s.noState()
		})
	}
	t.Run("2026 header without _meta", func(t *testing.T) {
		s := newStatelessServer(t)
		a := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			headers(mcp.MethodInitialize, ""))
		wantError(t, a, http.StatusBadRequest, mcp.CodeInvalidParams)
		s.noState()
	})
	t.Run("2025-11-25 way", func(t *testing.T) {
		s := newStatelessServer(t)
		a := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
		if a.status != http.StatusOK || a.header.Get("Mcp-Session-Id") == "" || a.last(t).Error != nil {
			t.Fatalf("legacy initialize: status %d, session %q, %+v", a.status, a.header.Get("Mcp-Session-Id"), a.last(t))
		}
	})
}
