package streamhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Tests of the client side against fake servers written with net/http and
// raw SSE text.

func clCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clFake is a fake Streamable HTTP server: it answers initialize with a
// session id and protocol version, notifications with 202, and hands the
// rest to the test's functions. It logs every request's headers.
type clFake struct {
	version string // answered to initialize
	post    func(w http.ResponseWriter, r *http.Request, msg *mcp.Message)
	note    func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) // notifications; nil: 202
	get     func(w http.ResponseWriter, r *http.Request)
	del     func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	reqs []clReq
	// written counts the response body bytes the fake wrote.
	written atomic.Int64
}

type clReq struct {
	method, rpc string
	header      http.Header
}

func (f *clFake) log() []clReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

type clCounting struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c clCounting) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (c clCounting) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

func (f *clFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w = clCounting{w, &f.written}
	var msg *mcp.Message
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		m, err := mcp.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg = m
	}
	rec := clReq{method: r.Method, header: r.Header.Clone()}
	if msg != nil {
		rec.rpc = msg.Method
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && msg.Method == mcp.MethodInitialize:
		w.Header().Set("Mcp-Session-Id", "sid-42")
		clJSON(w, clResult(msg.ID, map[string]any{"protocolVersion": f.version, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "1"}}))
	case r.Method == http.MethodPost && msg.Kind() == mcp.KindNotification && f.note != nil:
		f.note(w, r, msg)
	case r.Method == http.MethodPost && msg.Kind() != mcp.KindRequest:
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && f.post != nil:
		f.post(w, r, msg)
	case r.Method == http.MethodGet && f.get != nil:
		f.get(w, r)
	case r.Method == http.MethodDelete && f.del != nil:
		f.del(w, r)
	case r.Method == http.MethodDelete:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func clResult(id mcp.ID, v any) *mcp.Message {
	m, err := mcp.NewResult(id, v)
	if err != nil {
		panic(err)
	}
	return m
}

func clJSON(w http.ResponseWriter, m *mcp.Message) {
	b, _ := m.MarshalJSON()
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func clSSE(w http.ResponseWriter) func(string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return func(s string) {
		io.WriteString(w, s)
		w.(http.Flusher).Flush()
	}
}

func clEvent(id string, m *mcp.Message) string {
	b, _ := m.MarshalJSON()
	if id == "" {
		return "data: " + string(b) + "\n\n"
	}
	return "id: " + id + "\ndata: " + string(b) + "\n\n"
}

// clStart serves f and returns a Conn, after an initialize exchange and
// notifications/initialized.
func clStart(t *testing.T, f *clFake, ct streamhttp.ClientTransport) (mcp.Conn, string) {
	t.Helper()
	if f.version == "" {
		f.version = mcp.LatestProtocolVersion
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	ct.URL = srv.URL + "/mcp"
	conn, err := ct.Connect(clCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	init, _ := mcp.NewRequest(mcp.IntID(1), mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.LatestProtocolVersion})
	if err := conn.Write(clCtx(t), init); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(1) {
		t.Fatalf("initialize answer %v, %v", m, err)
	}
	note, _ := mcp.NewNotification(mcp.NotificationInitialized, nil)
	if err := conn.Write(clCtx(t), note); err != nil {
		t.Fatal(err)
	}
	return conn, ct.URL
}

// clClock is a simulated clock for a ClientTransport that reports every
// timer made on it, so that a test moves time once the wait it means has
// begun.
type clClock struct {
	*clock.Sim
	made chan time.Duration
}

func newClClock() *clClock {
	return &clClock{Sim: clock.NewSim(time.Unix(0, 0)), made: make(chan time.Duration, 256)}
}

func (c *clClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	tm := c.Sim.AfterFunc(d, f)
	select {
	case c.made <- d:
	default:
	}
	return tm
}

// await waits until a timer of d was made, skipping others; false if ctx
// ended first.
func (c *clClock) await(ctx context.Context, d time.Duration) bool {
	for {
		select {
		case got := <-c.made:
			if got == d {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

func clRequest(id int64, method string) *mcp.Message {
	m, _ := mcp.NewRequest(mcp.IntID(id), method, map[string]any{})
	return m
}

func TestClientHeaders(t *testing.T) {
	f := &clFake{version: "2025-06-18"}
	gotGET := make(chan struct{})
	f.get = func(w http.ResponseWriter, r *http.Request) {
		close(gotGET)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clJSON(w, clResult(msg.ID, struct{}{}))
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{Header: http.Header{"Authorization": {"Bearer t"}}})
	<-gotGET // the standalone stream was asked for, and refused: fine
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodPing)); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(2) {
		t.Fatalf("ping answer %v, %v", m, err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	log := f.log()
	var kinds []string
	for _, r := range log {
		kinds = append(kinds, r.method+" "+r.rpc)
		if r.header.Get("Authorization") != "Bearer t" {
			t.Errorf("%s %s without the user's header", r.method, r.rpc)
		}
		first := r.rpc == mcp.MethodInitialize
		if sid := r.header.Get("Mcp-Session-Id"); first != (sid == "") || !first && sid != "sid-42" {
			t.Errorf("%s %s: session id %q", r.method, r.rpc, sid)
		}
		if v := r.header.Get("Mcp-Protocol-Version"); first != (v == "") || !first && v != "2025-06-18" {
			t.Errorf("%s %s: protocol version %q, want the negotiated 2025-06-18", r.method, r.rpc, v)
		}
		switch r.method {
		case http.MethodPost:
			if r.header.Get("Accept") != "application/json, text/event-stream" || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("POST headers %v", r.header)
			}
		case http.MethodGet:
			if r.header.Get("Accept") != "text/event-stream" || r.header.Get("Last-Event-ID") != "" {
				t.Errorf("GET headers %v", r.header)
			}
		}
	}
	want := []string{"POST initialize", "POST notifications/initialized", "GET ", "POST ping", "DELETE "}
	slices.Sort(kinds)
	slices.Sort(want)
	if !slices.Equal(kinds, want) {
		t.Errorf("requests %q, want %q", kinds, want)
	}
	st := conn.(mcp.StatsReporter).Stats()
	if st.POST != 3 || st.GET != 1 || st.DELETE != 1 || st.Reconnects != 0 {
		t.Errorf("stats %+v", st)
	}
	if st.BytesReceived != f.written.Load() {
		t.Errorf("bytes received %d, the server wrote %d", st.BytesReceived, f.written.Load())
	}
}

// The standalone GET stream delivers notifications; when its connection
// ends it is resumed with the last event id, like any stream.
func TestClientStandaloneStream(t *testing.T) {
	f := &clFake{}
	note := func(status string) *mcp.Message {
		n, _ := mcp.NewNotification(mcp.NotificationTaskStatus, map[string]any{"taskId": "t1", "status": status})
		return n
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Last-Event-ID") {
		case "":
			send := clSSE(w)
			send("id: g1\nretry: 1\ndata:\n\n")
			send(clEvent("g2", note("working")))
		case "g2":
			send := clSSE(w)
			send(clEvent("g3", note("completed")))
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{})
	for _, want := range []string{"working", "completed"} {
		m, err := conn.Read(clCtx(t))
		if err != nil || m.Method != mcp.NotificationTaskStatus || !strings.Contains(string(m.Params), want) {
			t.Fatalf("read %v, %v; want status %s", m, err, want)
		}
	}
	if st := conn.(mcp.StatsReporter).Stats(); st.GET != 2 || st.Reconnects != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A POST stream cut twice is resumed with the newest event id each time,
// after the retry the server asked for. The transport's clock is
// simulated: each resume waits for a timer of exactly the retry, and
// goes out only once the test moved time past it.
func TestClientResumesWithNewestEventID(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		send := clSSE(w)
		send("id: a0\nretry: 30\ndata:\n\n")
		n, _ := mcp.NewNotification(mcp.NotificationProgress, map[string]any{"progressToken": 1, "progress": 1})
		send(clEvent("a1", n))
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		last := r.Header.Get("Last-Event-ID")
		switch last {
		case "":
			w.WriteHeader(http.StatusMethodNotAllowed)
		case "a1":
			send := clSSE(w)
			n, _ := mcp.NewNotification(mcp.NotificationProgress, map[string]any{"progressToken": 1, "progress": 2})
			send(clEvent("a2", n))
			send("id: a3\ndata: {\"jsonrpc\":\"2.0\",") // cut inside an event
		case "a2":
			send := clSSE(w)
			send(clEvent("a3", clResult(mcp.IntID(2), map[string]any{"content": []any{}})))
		default:
			t.Errorf("resume after %q", last)
			w.WriteHeader(http.StatusBadRequest)
		}
	}
	resumes := func() int {
		n := 0
		for _, r := range f.log() {
			if r.method == http.MethodGet && r.header.Get("Last-Event-ID") != "" {
				n++
			}
		}
		return n
	}
	clk := newClClock()
	conn, _ := clStart(t, f, streamhttp.ClientTransport{Clock: clk})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodToolsCall)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		m, err := conn.Read(clCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Params)+string(m.Result))
		if len(got) == 3 {
			break
		}
		// The connection was cut: the client waits the retry, 30 ms.
		if !clk.await(clCtx(t), 30*time.Millisecond) {
			t.Fatalf("after message %d: no wait of the 30 ms retry", len(got))
		}
		if n := resumes(); n != len(got)-1 {
			t.Fatalf("%d resumes before the retry elapsed, want %d", n, len(got)-1)
		}
		clk.Advance(30 * time.Millisecond)
	}
	if !strings.Contains(got[0], `"progress":1`) || !strings.Contains(got[1], `"progress":2`) || !strings.Contains(got[2], `"content"`) {
		t.Errorf("messages %q", got)
	}
	var ids []string
	for _, r := range f.log() {
		if r.method == http.MethodGet && r.header.Get("Last-Event-ID") != "" {
			ids = append(ids, r.header.Get("Last-Event-ID"))
		}
	}
	if !slices.Equal(ids, []string{"a1", "a2"}) {
		t.Errorf("Last-Event-ID sequence %q, want a1 a2", ids)
	}
	if st := conn.(mcp.StatsReporter).Stats(); st.Reconnects != 2 {
		t.Errorf("reconnects %d", st.Reconnects)
	}
}

// The answers to a streaming tools/call share its id: one with isComplete
// false is not the end, and a stream ending after it without an event id
// loses the answer; a tasks/result answer with isComplete false is final.
func TestClientSEP1905Final(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		send := clSSE(w)
		send(clEvent("", clResult(msg.ID, map[string]any{"partial-content": []any{}, "isComplete": false})))
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{})
	for _, tc := range []struct {
		id       int64
		method   string
		wantLoss bool
	}{{2, mcp.MethodToolsCall, true}, {3, mcp.MethodTasksResult, false}} {
		if err := conn.Write(clCtx(t), clRequest(tc.id, tc.method)); err != nil {
			t.Fatal(err)
		}
		if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(tc.id) {
			t.Fatalf("%s: %v, %v", tc.method, m, err)
		}
		if !tc.wantLoss {
			continue
		}
		_, err := conn.Read(clCtx(t))
		var se *streamhttp.StreamError
		if !errors.As(err, &se) || se.ID != mcp.IntID(tc.id) || se.Method != tc.method || !strings.Contains(err.Error(), "no event id") {
			t.Fatalf("%s: read %v, want a StreamError", tc.method, err)
		}
	}
	// The Conn is still usable, and nothing else was pending: the next
	// message Read returns is the answer to the next request.
	if err := conn.Write(clCtx(t), clRequest(4, mcp.MethodPing)); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(4) {
		t.Errorf("read %v, %v: want the answer to ping, nothing before it", m, err)
	}
}

// Resuming fails every time: the client gives up after MaxReconnects
// attempts and says so.
func TestClientResumeGivesUp(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clSSE(w)("id: x1\nretry: 1\ndata:\n\n")
	}
	var gets atomic.Int64
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") == "" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		gets.Add(1)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{MaxReconnects: 3})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodToolsCall)); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Read(clCtx(t))
	var se *streamhttp.StreamError
	if !errors.As(err, &se) || se.LastEventID != "x1" {
		t.Fatalf("read %v, want a StreamError", err)
	}
	if !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "503 Service Unavailable: overloaded") {
		t.Errorf("error %q", err)
	}
	if gets.Load() != 3 {
		t.Errorf("%d resume attempts, want 3", gets.Load())
	}
}

// A negative MaxReconnects gives a broken stream up at once: no resume
// is tried.
func TestClientNoResume(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clSSE(w)("id: x1\nretry: 1\ndata:\n\n")
	}
	var gets atomic.Int64
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			gets.Add(1)
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{MaxReconnects: -1})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodToolsCall)); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Read(clCtx(t))
	var se *streamhttp.StreamError
	if !errors.As(err, &se) || se.LastEventID != "x1" || !strings.Contains(err.Error(), "gave up after 0 attempts") {
		t.Fatalf("read %v, want a StreamError after no attempt", err)
	}
	if gets.Load() != 0 {
		t.Errorf("%d resume attempts, want none", gets.Load())
	}
}

// A refused resume (4xx) is not retried.
func TestClientResumeRefused(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clSSE(w)("id: x1\nretry: 1\ndata:\n\n")
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") == "" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"events after x1 are no longer stored"}}`)
	}
	conn, url := clStart(t, f, streamhttp.ClientTransport{})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodToolsCall)); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Read(clCtx(t))
	want := "GET " + url + ": 409 Conflict: events after x1 are no longer stored"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("read %v, want %q", err, want)
	}
}

// A 404 to the session id: the session is gone; other messages fail at
// once, and a new initialize starts a new session.
func TestClientSessionGone(t *testing.T) {
	f := &clFake{}
	var gone atomic.Bool
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		if gone.Load() {
			http.NotFound(w, r)
			return
		}
		clJSON(w, clResult(msg.ID, struct{}{}))
	}
	conn, url := clStart(t, f, streamhttp.ClientTransport{NoStandaloneStream: true})
	gone.Store(true)
	err := conn.Write(clCtx(t), clRequest(2, mcp.MethodPing))
	if !errors.Is(err, streamhttp.ErrSessionGone) || !strings.HasPrefix(err.Error(), "POST "+url+": session terminated") {
		t.Fatalf("write: %v", err)
	}
	before := conn.(mcp.StatsReporter).Stats().POST
	if err := conn.Write(clCtx(t), clRequest(3, mcp.MethodPing)); !errors.Is(err, streamhttp.ErrSessionGone) {
		t.Fatalf("second write: %v", err)
	}
	if conn.(mcp.StatsReporter).Stats().POST != before {
		t.Error("a request went out for a session known to be gone")
	}
	gone.Store(false)
	init, _ := mcp.NewRequest(mcp.IntID(4), mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.LatestProtocolVersion})
	if err := conn.Write(clCtx(t), init); err != nil {
		t.Fatal(err)
	}
	log := f.log()
	if last := log[len(log)-1]; last.rpc != mcp.MethodInitialize || last.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("re-initialize sent session id %q", last.header.Get("Mcp-Session-Id"))
	}
}

func TestClientErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(w http.ResponseWriter)
		want   string
	}{
		{"json-rpc error body", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"missing session id"}}`)
		}, ": 400 Bad Request: missing session id"},
		{"plain text body", func(w http.ResponseWriter) { http.Error(w, "upstream down\nmore", http.StatusBadGateway) }, ": 502 Bad Gateway: upstream down"},
		{"html body", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "<html>no</html>")
		}, ": 403 Forbidden"},
		{"html page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>hello</html>")
		}, `: 200 OK: unexpected Content-Type "text/html" (is this an MCP endpoint?)`},
		{"bad json", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"hello":`)
		}, ": 200 OK: body is not a JSON-RPC message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.handle(w) }))
			defer srv.Close()
			conn, err := (&streamhttp.ClientTransport{URL: srv.URL}).Connect(clCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			err = conn.Write(clCtx(t), clRequest(1, mcp.MethodInitialize))
			if err == nil || !strings.HasPrefix(err.Error(), "POST "+srv.URL+tc.want) {
				t.Errorf("error %v, want prefix %q", err, "POST "+srv.URL+tc.want)
			}
		})
	}
}

func TestClientBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/mcp", "localhost:7070/mcp", "http://%zz"} {
		if _, err := (&streamhttp.ClientTransport{URL: u}).Connect(clCtx(t)); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}

// Close unblocks a pending Read and ends the streams; Read and Write
// afterwards say the connection is closed.
func TestClientClose(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clSSE(w)("id: s1\ndata:\n\n")
		<-r.Context().Done()
	}
	var deleted atomic.Bool
	f.del = func(w http.ResponseWriter, r *http.Request) {
		deleted.Store(r.Header.Get("Mcp-Session-Id") == "sid-42")
		w.WriteHeader(http.StatusMethodNotAllowed) // the server does not allow it: fine
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{NoStandaloneStream: true})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodToolsCall)); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		read <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := <-read; !errors.Is(err, streamhttp.ErrClosed) {
		t.Errorf("pending read: %v", err)
	}
	if err := conn.Write(clCtx(t), clRequest(3, mcp.MethodPing)); !errors.Is(err, streamhttp.ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	if !deleted.Load() {
		t.Error("no DELETE with the session id")
	}
}

// A request whose answer never comes: Write gives up with ctx.
func TestClientWriteTimeout(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) { <-r.Context().Done() }
	conn, url := clStart(t, f, streamhttp.ClientTransport{NoStandaloneStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := conn.Write(ctx, clRequest(2, mcp.MethodToolsCall))
	if err == nil || err.Error() != fmt.Sprintf("POST %s: context deadline exceeded", url) {
		t.Fatalf("write: %v", err)
	}
}

// The observer sees every request, with the JSON-RPC request it carries.
func TestClientObserver(t *testing.T) {
	f := &clFake{}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clJSON(w, clResult(msg.ID, struct{}{}))
	}
	conn, _ := clStart(t, f, streamhttp.ClientTransport{NoStandaloneStream: true})
	var seen []streamhttp.RequestInfo
	var mu sync.Mutex
	conn.(streamhttp.RequestObserver).ObserveRequests(func(i streamhttp.RequestInfo) {
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
	})
	if err := conn.Write(clCtx(t), clRequest(9, mcp.MethodPing)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Method != http.MethodPost || seen[0].RPCID != mcp.IntID(9) || seen[0].RPCMethod != mcp.MethodPing || seen[0].Status != 200 || seen[0].BytesSent < 50 {
		t.Errorf("observed %+v", seen)
	}
}

// A server that answers a notification with 200 and a body instead of the
// 202 it MUST send has accepted it all the same: the body answers no
// request and is ignored (the conformance suite's initialize scenario
// answers notifications/initialized with {"jsonrpc":"2.0","result":{}}).
func TestClientNotificationAnsweredWithBody(t *testing.T) {
	for name, body := range map[string]string{
		"result without id": `{"jsonrpc":"2.0","result":{}}`,
		"not JSON":          `ok`,
		"a notification":    `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := &clFake{}
			f.note = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			}
			f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
				clJSON(w, clResult(msg.ID, struct{}{}))
			}
			conn, _ := clStart(t, f, streamhttp.ClientTransport{NoStandaloneStream: true}) // writes notifications/initialized
			if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodPing)); err != nil {
				t.Fatal(err)
			}
			if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(2) {
				t.Fatalf("read %v, %v; want the answer to ping", m, err)
			}
		})
	}
}

// The Write of notifications/initialized returns once the standalone GET
// was answered, so the client's next request cannot overtake it, however
// slowly the server answers the GET. The server answers only once the
// client waits for it (its bounded wait began on the simulated clock,
// which never moves here).
func TestClientStandaloneOpenBeforeNextRequest(t *testing.T) {
	f := &clFake{}
	clk := newClClock()
	release := make(chan struct{})
	var answered, pingAfterGET atomic.Bool
	f.get = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		answered.Store(true)
		clSSE(w)(": open\n\n")
		<-r.Context().Done()
	}
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		pingAfterGET.Store(answered.Load())
		clJSON(w, clResult(msg.ID, struct{}{}))
	}
	ctx := clCtx(t)
	go func() {
		if clk.await(ctx, 2*time.Second) { // the client waits for the GET's answer
			close(release)
		}
	}()
	conn, _ := clStart(t, f, streamhttp.ClientTransport{Clock: clk})
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodPing)); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(2) {
		t.Fatalf("read %v, %v; want the answer to ping", m, err)
	}
	if !pingAfterGET.Load() {
		t.Error("ping was sent before the server answered the standalone GET")
	}
}

// A standalone GET the server never answers holds up the Write of
// notifications/initialized for 2 s on the transport's clock, no longer.
func TestClientStandaloneWaitBounded(t *testing.T) {
	f := &clFake{}
	f.get = func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	f.post = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		clJSON(w, clResult(msg.ID, struct{}{}))
	}
	clk := newClClock()
	ctx := clCtx(t)
	go func() {
		if clk.await(ctx, 2*time.Second) {
			clk.Advance(2 * time.Second)
		}
	}()
	conn, _ := clStart(t, f, streamhttp.ClientTransport{Clock: clk}) // returns once 2 s passed
	if got := clk.Now().Sub(time.Unix(0, 0)); got != 2*time.Second {
		t.Errorf("initialized returned at %v on the clock, want 2s", got)
	}
	if err := conn.Write(clCtx(t), clRequest(2, mcp.MethodPing)); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(clCtx(t)); err != nil || m.ID != mcp.IntID(2) {
		t.Fatalf("read %v, %v; want the answer to ping", m, err)
	}
}

// TestClientRequestAnsweredEmpty: a request answered 200 with an empty
// body has lost its answer; Write says so rather than leave the caller
// waiting for a response that cannot come (it hung the reference client's
// poll loop under a drop-response fault).
func TestClientRequestAnsweredEmpty(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	conn, err := (&streamhttp.ClientTransport{URL: srv.URL, NoStandaloneStream: true}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := mcp.NewRequest(mcp.IntID(3), mcp.MethodTasksGet, map[string]any{"taskId": "t"})
	if err := conn.Write(context.Background(), req); err == nil || !strings.Contains(err.Error(), "the answer to request 3 is lost") {
		t.Fatalf("Write of a request answered 200 with nothing = %v", err)
	}
	note, _ := mcp.NewNotification(mcp.NotificationInitialized, nil)
	if err := conn.Write(context.Background(), note); err != nil {
		t.Fatalf("Write of a notification answered 200 with nothing = %v", err)
	}
}
