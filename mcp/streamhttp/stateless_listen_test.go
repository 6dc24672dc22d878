package streamhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// These tests open subscriptions/listen streams (2026-07-28
// Subscriptions; Tasks, "Task Status Notifications") with raw HTTP
// requests through the in-memory transport inside synctest bubbles: the
// stream is read event by event as the server writes it, and a tool's
// change is awaited with synctest.Wait.

// listenStream is an open listen answer, read one event at a time.
type listenStream struct {
	t    *testing.T
	resp *http.Response
	r    *sse.Reader
}

// listen posts subscriptions/listen with the notifications filter and
// meta; the answer must be an SSE stream.
func (s *statelessServer) listen(filter, meta string) *listenStream {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(request(rev.MethodSubscriptionsListen, `"notifications":`+filter, meta)))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers(rev.MethodSubscriptionsListen, "") {
		req.Header.Set(k, v)
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s.t.Fatalf("listen: status %d, %s: want an SSE stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &listenStream{t: s.t, resp: resp, r: sse.NewReader(resp.Body)}
}

// next reads the stream's next message.
func (l *listenStream) next() *mcp.Message {
	l.t.Helper()
	for {
		ev, err := l.r.Next()
		if err != nil {
			l.t.Fatalf("listen stream: %v, want another message", err)
		}
		if ev.Data == "" {
			continue // a keep-alive comment
		}
		return decode(l.t, []byte(ev.Data))
	}
}

// ended checks that the stream is over.
func (l *listenStream) ended() {
	l.t.Helper()
	if ev, err := l.r.Next(); !errors.Is(err, io.EOF) {
		l.t.Fatalf("listen stream: %+v, %v after the result, want the end", ev, err)
	}
}

// ack reads the acknowledgement, which MUST come first and carry the
// subscription id, the listen's JSON-RPC id (Subscriptions,
// "Acknowledgment"), and returns the agreed task ids.
func (l *listenStream) ack() []string {
	l.t.Helper()
	m := l.next()
	if m.Method != rev.NotificationSubscriptionsAcknowledged {
		l.t.Fatalf("first message %s %s, want the acknowledgement", m.Method, m.Result)
	}
	var p rev.AcknowledgedParams
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Meta == nil || p.Meta.SubscriptionID.String() != "7" {
		l.t.Fatalf("ack %s (%v): want _meta subscriptionId 7", m.Params, err)
	}
	ids, err := tasks.TaskIDs(p.Notifications)
	if err != nil {
		l.t.Fatal(err)
	}
	return ids
}

// push reads a notifications/tasks and returns its params as JSON
// without _meta, which must name the subscription.
func (l *listenStream) push() (tasks.StatusParams, string) {
	l.t.Helper()
	m := l.next()
	if m.Method != tasks.NotificationStatus {
		l.t.Fatalf("message %s %s %v, want notifications/tasks", m.Method, m.Result, m.Error)
	}
	var p tasks.StatusParams
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Meta == nil || p.Meta.SubscriptionID.String() != "7" {
		l.t.Fatalf("push %s (%v): want _meta subscriptionId 7", m.Params, err)
	}
	return p, withoutMeta(l.t, m.Params)
}

// result reads the listen's graceful result (Subscriptions, "Graceful
// Closure") and the end of the stream.
func (l *listenStream) result() {
	l.t.Helper()
	m := l.next()
	if m.ID.String() != "7" || m.Error != nil {
		l.t.Fatalf("message %s %s %v, want the listen's result", m.Method, m.Result, m.Error)
	}
	var res rev.ListenResult
	if err := json.Unmarshal(m.Result, &res); err != nil || res.ResultType != rev.ResultComplete || res.Meta.SubscriptionID.String() != "7" {
		l.t.Fatalf("listen result %s (%v): want resultType complete, subscriptionId 7", m.Result, err)
	}
	l.ended()
}

func withoutMeta(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	delete(members, "_meta")
	delete(members, "resultType")
	b, _ := json.Marshal(members)
	return string(b)
}

// getJSON is tasks/get of id as JSON without _meta and resultType: what a
// push must equal.
func (s *statelessServer) getJSON(id string) string {
	s.t.Helper()
	m := s.taskCall(tasks.MethodGet, id, metaTasks()).last(s.t)
	if m.Error != nil {
		s.t.Fatalf("tasks/get: %v", m.Error)
	}
	return withoutMeta(s.t, m.Result)
}

// A listen naming a task and an unknown id is acknowledged with the known
// one only; the task's state follows at once, then each change, each the
// DetailedTask tasks/get would have returned (result inlined), and when
// the task ends the server answers the listen and closes the stream.
func TestListenTaskNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		s := newMemStatelessServer(t, &server.Options{Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("done"))}})
		c := s.create("job")
		l := s.listen(`{"taskIds":["`+c.TaskID+`","no-such-task","`+c.TaskID+`"]}`, metaTasks())
		if ids := l.ack(); !slices.Equal(ids, []string{c.TaskID}) {
			t.Fatalf("agreed %v, want only the known task", ids)
		}
		p, raw := l.push()
		if p.Status != tasks.Working || raw != s.getJSON(c.TaskID) {
			t.Fatalf("first push %s, want the working task as tasks/get shows it", raw)
		}
		if n := s.srv.Stats().Subscriptions; n != 1 {
			t.Errorf("%d subscriptions open, want 1", n)
		}
		close(g.open)
		p, raw = l.push()
		if p.Status != tasks.Completed || raw != s.getJSON(c.TaskID) {
			t.Fatalf("push %s, want the completed task as tasks/get shows it", raw)
		}
		if text, _ := resultText(t, p.Result); text != "done" {
			t.Errorf("inlined result %q, want done", text)
		}
		l.result()
		synctest.Wait()
		if n := s.srv.Stats().Subscriptions; n != 0 {
			t.Errorf("%d subscriptions open after the listen was answered, want 0", n)
		}
	})
}

// A task asking for input is pushed input_required with its inputRequests
// inlined, then working and completed once tasks/update answered it.
func TestListenTaskInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		c := s.createWith(server.ToolConfirmDelete, `"arguments":{"filename":"a.txt"}`)
		synctest.Wait()
		l := s.listen(`{"taskIds":["`+c.TaskID+`"]}`, metaTasks())
		l.ack()
		p, raw := l.push()
		if p.Status != tasks.InputRequired || len(p.InputRequests) != 1 || raw != s.getJSON(c.TaskID) {
			t.Fatalf("push %s, want input_required with its request, as tasks/get shows it", raw)
		}
		var key string
		for k := range p.InputRequests {
			key = k
		}
		s.update(c.TaskID, `{"`+key+`":`+accept(`{"confirm":true}`)+`}`)
		var seen []mcp.TaskStatus
		for {
			p, _ = l.push()
			seen = append(seen, p.Status)
			if p.Status.IsTerminal() {
				break
			}
		}
		// The reader keeps up here, so no state is skipped.
		if !slices.Equal(seen, []mcp.TaskStatus{tasks.Working, tasks.Completed}) {
			t.Errorf("pushed %v after the answer, want working, completed", seen)
		}
		if text, _ := resultText(t, p.Result); text != "Deleted a.txt (pretend)." {
			t.Errorf("inlined result %q", text)
		}
		l.result()
	})
}

// taskIds without the tasks extension declared on the listen itself is
// -32021 naming it, HTTP 400 (Tasks, "Task Status Notifications"); a
// listen that asks for nothing the server sends is acknowledged with an
// empty filter and answered at once.
func TestListenNeedsExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		s := newMemStatelessServer(t, &server.Options{Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("done"))}})
		c := s.create("job")
		for _, ids := range []string{`["` + c.TaskID + `"]`, `[]`} {
			a := s.do(http.MethodPost, request(rev.MethodSubscriptionsListen, `"notifications":{"taskIds":`+ids+`}`, metaJSON(rev.ProtocolVersion)),
				headers(rev.MethodSubscriptionsListen, ""))
			e := wantError(t, a, http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
			if !strings.Contains(string(e.Data), tasks.ExtensionID) {
				t.Errorf("data %s does not name the extension", e.Data)
			}
		}
		l := s.listen(`{"toolsListChanged":true}`, metaJSON(rev.ProtocolVersion))
		m := l.next()
		if m.Method != rev.NotificationSubscriptionsAcknowledged || withoutMeta(t, m.Params) != `{"notifications":{}}` {
			t.Fatalf("first message %s %s, want the ack agreeing to nothing", m.Method, m.Params)
		}
		l.result()
		synctest.Wait()
		if n := s.srv.Stats().Subscriptions; n != 0 {
			t.Errorf("%d subscriptions open, want 0", n)
		}
	})
}

// listenToJob creates a task of a gated tool and listens to it, past the
// ack and the task's first state.
func listenToJob(t *testing.T) (*gate, *statelessServer, tasks.CreateTaskResult, *listenStream) {
	t.Helper()
	g := newGate()
	s := newMemStatelessServer(t, &server.Options{Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("done"))}})
	c := s.create("job")
	l := s.listen(`{"taskIds":["`+c.TaskID+`"]}`, metaTasks())
	l.ack()
	l.push()
	return g, s, c, l
}

// Closing the listen stream ends the subscription (2026-07-28
// Subscriptions, "Cancellation"): the server lets go of it, and the task
// changing afterwards sends nothing and holds nothing.
func TestListenClientCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, s, c, l := listenToJob(t)
		l.resp.Body.Close()
		synctest.Wait()
		if n := s.srv.Stats().Subscriptions; n != 0 {
			t.Fatalf("%d subscriptions open after the client closed its stream, want 0", n)
		}
		close(g.open)
		synctest.Wait()
		if st := s.get(c.TaskID).Status; st != tasks.Completed {
			t.Errorf("task %q, want completed: closing a listen does not touch the task", st)
		}
	})
}

// Server.Close answers every open listen with its result before the
// stream closes (Subscriptions, "Graceful Closure").
func TestListenServerShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, _, l := listenToJob(t)
		s.srv.Close()
		l.result()
	})
}

// A transport that closes after Server.EndListens delivers the results
// the listens queued on their way down: the stream ends with the result,
// not cut, however the closing handler and the queued answer race; and a
// listen that arrives afterwards is refused.
func TestListenEndedThenHandlerCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, c, l := listenToJob(t)
		if err := s.srv.EndListens(t.Context()); err != nil {
			t.Fatal(err)
		}
		s.h.Close()
		l.result()
		a := s.do(http.MethodPost, request(rev.MethodSubscriptionsListen, `"notifications":{"taskIds":["`+c.TaskID+`"]}`, metaTasks()),
			headers(rev.MethodSubscriptionsListen, ""))
		wantError(t, a, http.StatusServiceUnavailable, mcp.CodeInternalError, "shutting down")
	})
}

// heldEndpoint is the reference server whose stateless requests are
// answered by the test: each gets one notification, then its Replier
// goes to held.
type heldEndpoint struct {
	*server.Server
	held chan mcp.Replier
}

func (e *heldEndpoint) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	n, _ := mcp.NewNotification(rev.NotificationSubscriptionsAcknowledged, map[string]any{})
	_ = r.Reply(ctx, n, false)
	e.held <- r
}

// An answer the endpoint queued before the handler closed is written
// before the stream ends, even when the handler's closing and the answer
// reach the stream's writer at once (its select would pick either): a
// listen ended by Server.EndListens gets its result although the handler
// closes right after.
func TestStatelessAnswerQueuedBeforeCloseIsWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep := &heldEndpoint{Server: server.New(nil), held: make(chan mcp.Replier, 1)}
		h := streamhttp.NewHandler(ep, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
		defer ep.Close()
		s := &statelessServer{t: t, srv: ep.Server, h: h, url: "http://" + streamhttp.MemoryHost + streamhttp.DefaultPath,
			client: &http.Client{Transport: streamhttp.NewMemoryTransport(h)}}
		l := s.listen(`{}`, metaTasks())
		l.next()
		r := <-ep.held
		// A second notification the client does not read yet: the
		// stream's writer is busy writing it while the final answer is
		// queued and the handler closes, and finds both at once after.
		n, _ := mcp.NewNotification(rev.NotificationSubscriptionsAcknowledged, map[string]any{})
		if err := r.Reply(t.Context(), n, false); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		final, _ := mcp.NewResult(mcp.IntID(7), &rev.ListenResult{ResultType: rev.ResultComplete, Meta: rev.ResultMeta{SubscriptionID: mcp.IntID(7)}})
		if err := r.Reply(t.Context(), final, true); err != nil {
			t.Fatal(err)
		}
		h.Close()
		l.next()
		l.result()
	})
}

// Hostile listens meet the bounds: more distinct task ids than
// MaxListenTaskIDs (-32602), a malformed taskIds (-32602), more open
// listens than MaxSubscriptions (-32603); none of them leaves a
// subscription behind, and duplicate ids count once.
func TestListenBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		s := newMemStatelessServer(t, &server.Options{MaxSubscriptions: 2, MaxListenTaskIDs: 2,
			Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("done"))}})
		c := s.create("job")
		post := func(filter string) *answer {
			return s.do(http.MethodPost, request(rev.MethodSubscriptionsListen, `"notifications":`+filter, metaTasks()),
				headers(rev.MethodSubscriptionsListen, ""))
		}
		wantError(t, post(`{"taskIds":["a","b","c"]}`), http.StatusOK, mcp.CodeInvalidParams, "3 tasks", "2")
		wantError(t, post(`{"taskIds":"a"}`), http.StatusOK, mcp.CodeInvalidParams)
		many := make([]string, 10_000)
		for i := range many {
			many[i] = strconv.Quote(c.TaskID)
		}
		dup := `{"taskIds":[` + strings.Join(many, ",") + `]}`
		l1 := s.listen(dup, metaTasks())
		if ids := l1.ack(); !slices.Equal(ids, []string{c.TaskID}) {
			t.Fatalf("agreed %v, want the one task once", ids)
		}
		l2 := s.listen(`{"taskIds":["`+c.TaskID+`"]}`, metaTasks())
		l2.ack()
		wantError(t, post(`{"taskIds":["`+c.TaskID+`"]}`), http.StatusOK, mcp.CodeInternalError, "2 subscriptions")
		if n := s.srv.Stats().Subscriptions; n != 2 {
			t.Errorf("%d subscriptions open, want the 2 allowed", n)
		}
		l1.resp.Body.Close()
		synctest.Wait()
		l3 := s.listen(`{"taskIds":["`+c.TaskID+`"]}`, metaTasks())
		l3.ack()
		close(g.open)
		for _, l := range []*listenStream{l2, l3} {
			for {
				if p, _ := l.push(); p.Status.IsTerminal() {
					break
				}
			}
			l.result()
		}
		synctest.Wait()
		if n := s.srv.Stats().Subscriptions; n != 0 {
			t.Errorf("%d subscriptions open at the end, want 0", n)
		}
	})
}
