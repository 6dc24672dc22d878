package streamhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
)

// holdTool runs until its context ends; started gets a value when it runs,
// stopped when it has seen its context end.
func holdTool(started, stopped chan<- struct{}) *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				stopped <- struct{}{}
				return nil, ctx.Err()
			}, nil
		},
	}
}

// A stateless request still unanswered when the handler closes gets 503
// with a -32603 error, as a request after Close does, not a 200 with no
// body.
func TestStatelessCloseAnswers503(t *testing.T) {
	started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	s := newStatelessServerWith(t, &server.Options{Tools: []*server.Tool{holdTool(started, stopped)}})
	answers := make(chan *answer, 1)
	go func() {
		answers <- s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"hold"`, metaJSON(rev.ProtocolVersion)),
			headers(mcp.MethodToolsCall, "hold"))
	}()
	<-started
	s.h.Close()
	wantError(t, <-answers, http.StatusServiceUnavailable, mcp.CodeInternalError, "shutting down")
	<-stopped
}

// Many stateless requests from a real HTTP peer, good and bad, leave no
// session, no goroutine and no memory behind beyond the tasks they made,
// which the server keeps until their ttl (generous bounds: what is
// measured is growth per request, not speed).
func TestStatelessManyRequestsHoldLittle(t *testing.T) {
	s := newStatelessServer(t)
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	s.client = &http.Client{Transport: tr}
	metaT := strings.Replace(metaJSON(rev.ProtocolVersion), `"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, 1)
	var created []string // the instant tasks, which end on their own
	round := func() {
		s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"echo","arguments":{"x":1}`, metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsCall, "echo"))
		a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"instant","arguments":{"text":"hi"}`, metaT), headers(mcp.MethodToolsCall, "instant"))
		var c tasks.CreateTaskResult
		if err := json.Unmarshal(a.last(t).Result, &c); err != nil || c.TaskID == "" {
			t.Fatalf("instant: %s, want a task", a.last(t).Result)
		}
		created = append(created, c.TaskID)
		s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"echo"`, metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsCall, "other"))
		s.do(http.MethodPost, request("tasks/get", `"taskId":"nope"`, metaT), headers("tasks/get", "nope"))
		s.do(http.MethodPost, request(mcp.MethodToolsList, ``, `{}`), headers(mcp.MethodToolsList, ""))
	}
	round() // warm up: connections, lazily made state
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	const rounds = 400
	for range rounds {
		round()
	}
	// A task answers its CreateTaskResult before its tool ran: each is
	// asked until it ended (bounded by the test's timeout), so that what
	// is left is what the server keeps, not what is still running.
	for _, id := range created {
		for !s.get(id).Status.IsTerminal() {
		}
	}
	tr.CloseIdleConnections()
	s.noState()
	if st := s.srv.Stats(); st.Tasks != rounds+1 || st.Live != 0 {
		t.Errorf("server holds %+v, want the %d finished tasks only", st, rounds+1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes over %d requests, want under 8 MiB (the tasks kept hold ~1 KiB each)", grew, 5*rounds)
	}
	if n := runtime.NumGoroutine(); n > goroutines+8 {
		t.Errorf("%d goroutines after %d requests, %d before", n, 5*rounds, goroutines)
	}
}
