package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// script is a scripted Streamable HTTP server: an http.Handler that
// answers initialize and notifications itself and hands tools/call,
// tasks/*, and GET requests to the test's functions, which write raw SSE.
// It records every request.
type script struct {
	t *testing.T
	// call answers tools/call. nil: 500.
	call func(w *sseWriter, id mcp.ID, p mcp.CallToolParams)
	// result answers tasks/result; lastSeqNr is 0 when absent. nil: -32603.
	result func(w http.ResponseWriter, id mcp.ID, taskID string, lastSeqNr int64)
	// get answers tasks/get. nil: the task, working.
	get func(w http.ResponseWriter, id mcp.ID, taskID string)
	// cancel answers tasks/cancel. nil: the task, cancelled.
	cancel func(w http.ResponseWriter, id mcp.ID, taskID string)
	// resume answers GET with Last-Event-ID. nil: 405.
	resume func(w *sseWriter, lastEventID string)
	// standalone answers GET without Last-Event-ID. nil: 405.
	standalone func(w *sseWriter, r *http.Request)
	// transport is the client transport start connects with; its URL is
	// set there.
	transport streamhttp.ClientTransport

	mu     sync.Mutex
	log    []scriptRequest
	lastID mcp.ID // of the last tools/call
}

type scriptRequest struct {
	HTTPMethod  string
	RPCMethod   string
	LastEventID string
	LastSeqNr   int64
	Session     string
	Protocol    string
}

const scriptSession = "script-session-1"

func newScript(t *testing.T) *script { return &script{t: t} }

// start serves the script and connects a client to it.
func (s *script) start(copts *client.Options) *client.Session {
	s.t.Helper()
	srv := httptest.NewServer(s)
	ct := s.transport
	ct.URL = srv.URL + "/mcp"
	sess, err := client.New(copts).Connect(testContext(s.t), &ct)
	if err != nil {
		srv.Close()
		s.t.Fatalf("connect: %v", err)
	}
	s.t.Cleanup(func() {
		sess.Close()
		srv.Close()
	})
	return sess
}

func (s *script) requests() []scriptRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]scriptRequest(nil), s.log...)
}

// lastSeqNrs lists the lastSeqNr of every tasks/result with one.
func (s *script) lastSeqNrs() []int64 {
	var out []int64
	for _, r := range s.requests() {
		if r.RPCMethod == mcp.MethodTasksResult && r.LastSeqNr > 0 {
			out = append(out, r.LastSeqNr)
		}
	}
	return out
}

// lastEventIDs lists the Last-Event-ID of every resuming GET.
func (s *script) lastEventIDs() []string {
	var out []string
	for _, r := range s.requests() {
		if r.HTTPMethod == http.MethodGet && r.LastEventID != "" {
			out = append(out, r.LastEventID)
		}
	}
	return out
}

// callID returns the id of the last tools/call, for a resumed stream.
func (s *script) callID() mcp.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastID
}

func (s *script) record(r scriptRequest) {
	s.mu.Lock()
	s.log = append(s.log, r)
	s.mu.Unlock()
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := scriptRequest{HTTPMethod: r.Method, LastEventID: r.Header.Get("Last-Event-ID"),
		Session: r.Header.Get("Mcp-Session-Id"), Protocol: r.Header.Get("Mcp-Protocol-Version")}
	switch r.Method {
	case http.MethodGet:
		s.record(rec)
		switch {
		case rec.LastEventID != "" && s.resume != nil:
			s.resume(startSSE(w, r), rec.LastEventID)
		case rec.LastEventID == "" && s.standalone != nil:
			s.standalone(startSSE(w, r), r)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
		return
	case http.MethodDelete:
		s.record(rec)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec.RPCMethod = msg.Method
	var p struct {
		TaskID    string          `json:"taskId"`
		LastSeqNr json.RawMessage `json:"lastSeqNr"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	rec.LastSeqNr, _ = strconv.ParseInt(string(p.LastSeqNr), 10, 64)
	s.record(rec)
	if msg.Kind() != mcp.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		w.Header().Set("Mcp-Session-Id", scriptSession)
		writeJSON(w, result(msg.ID, mcp.InitializeResult{
			ProtocolVersion: mcp.LatestProtocolVersion,
			Capabilities: mcp.ServerCapabilities{Tasks: &mcp.TasksCapability{
				Responses: &mcp.ResponsesCapability{Modes: mcp.AllModes()},
				Streaming: &mcp.StreamingCapability{Partial: &mcp.Empty{}},
			}},
			ServerInfo: mcp.Implementation{Name: "script", Version: "1"},
		}))
	case mcp.MethodToolsCall:
		var cp mcp.CallToolParams
		_ = json.Unmarshal(msg.Params, &cp)
		if s.call == nil {
			http.Error(w, "no call script", http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		s.lastID = msg.ID
		s.mu.Unlock()
		s.call(startSSE(w, r), msg.ID, cp)
	case mcp.MethodTasksResult:
		if s.result == nil {
			writeJSON(w, rpcError(msg.ID, mcp.CodeInternalError, "no tasks/result script"))
			return
		}
		s.result(w, msg.ID, p.TaskID, rec.LastSeqNr)
	case mcp.MethodTasksGet:
		if s.get == nil {
			writeJSON(w, result(msg.ID, task(mcp.StatusWorking)))
			return
		}
		s.get(w, msg.ID, p.TaskID)
	case mcp.MethodTasksCancel:
		if s.cancel == nil {
			writeJSON(w, result(msg.ID, task(mcp.StatusCancelled)))
			return
		}
		s.cancel(w, msg.ID, p.TaskID)
	default:
		writeJSON(w, mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method)))
	}
}

// sseWriter writes raw SSE to a response, flushing each write.
type sseWriter struct {
	w   http.ResponseWriter
	ctx context.Context // the request's: done when the client goes
}

func startSSE(w http.ResponseWriter, r *http.Request) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return &sseWriter{w: w, ctx: r.Context()}
}

// raw writes text as is.
func (s *sseWriter) raw(text string) {
	io.WriteString(s.w, text)
	s.w.(http.Flusher).Flush()
}

// prime writes a priming event: an id, an empty data field and a retry.
func (s *sseWriter) prime(id string, retryMs int) {
	s.raw(fmt.Sprintf("id: %s\nretry: %d\ndata:\n\n", id, retryMs))
}

// send writes a message as one event, with an id unless id is "".
func (s *sseWriter) send(id string, msg *mcp.Message) {
	b, err := msg.MarshalJSON()
	if err != nil {
		panic(err)
	}
	if id != "" {
		s.raw("id: " + id + "\n")
	}
	s.raw("event: message\ndata: " + string(b) + "\n\n")
}

func writeJSON(w http.ResponseWriter, msg *mcp.Message) {
	b, err := msg.MarshalJSON()
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func result(id mcp.ID, v any) *mcp.Message {
	m, err := mcp.NewResult(id, v)
	if err != nil {
		panic(err)
	}
	return m
}

func notification(method string, params any) *mcp.Message {
	m, err := mcp.NewNotification(method, params)
	if err != nil {
		panic(err)
	}
	return m
}

const scriptTask = "task-7f3e"

func task(status mcp.TaskStatus) *mcp.Task {
	ttl, poll := int64(60000), int64(10)
	return &mcp.Task{TaskID: scriptTask, Status: status, CreatedAt: "2025-11-25T10:30:00.000Z", LastUpdatedAt: "2025-11-25T10:30:01.000Z", TTL: &ttl, PollInterval: &poll}
}

// seg returns segment n with the text "s<n>".
func seg(n int64) mcp.Segment {
	return mcp.Segment{SeqNr: n, ContentBlock: mcp.TextBlock(fmt.Sprintf("s%d", n))}
}

func segs(ns ...int64) []mcp.Segment {
	out := make([]mcp.Segment, len(ns))
	for i, n := range ns {
		out[i] = seg(n)
	}
	return out
}

// blocks returns the content "s<a>".."s<b>".
func blocks(a, b int64) []mcp.ContentBlock {
	var out []mcp.ContentBlock
	for n := a; n <= b; n++ {
		out = append(out, seg(n).ContentBlock)
	}
	return out
}

// partial returns a SEP-1905 streaming response.
func partial(id mcp.ID, t *mcp.Task, complete bool, ss ...mcp.Segment) *mcp.Message {
	if ss == nil {
		ss = []mcp.Segment{}
	}
	return result(id, mcp.PartialResult{Task: t, PartialContent: ss, IsComplete: complete, Meta: mcp.Meta{}.WithRelatedTask(scriptTask)})
}

func rpcError(id mcp.ID, code int, msg string) *mcp.Message {
	return mcp.NewError(id, mcp.Errorf(code, "%s", msg))
}
