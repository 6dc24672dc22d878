package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestProxyEveryMode records the reference client and server through the
// proxy in every response mode, one session per mode, all at once.
func TestProxyEveryMode(t *testing.T) {
	rg := newRig(t, &streamhttp.Options{Retry: 10 * time.Millisecond})
	t.Run("modes", func(t *testing.T) {
		for _, mode := range client.Modes() {
			t.Run(string(mode), func(t *testing.T) {
				t.Parallel()
				ctx := testContext(t)
				sess := rg.connect(ctx, nil)
				res, err := sess.CallTool(ctx, client.CallOptions{
					Name: server.ToolSlowText, Args: map[string]any{"chunks": 5, "intervalMs": 5}, Mode: mode, PollInterval: 20 * time.Millisecond,
				})
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if !res.Complete || res.IsError {
					t.Fatalf("result complete=%v isError=%v", res.Complete, res.IsError)
				}
				if err := sess.Close(); err != nil {
					t.Errorf("close session: %v", err)
				}
			})
		}
	})
	// A streaming call that cannot end before the client has its first
	// answer: its POST is answered on an event stream, whatever the load
	// (a short call of slow_text may be answered whole, as JSON).
	t.Run("streamed POST", func(t *testing.T) {
		ctx := testContext(t)
		sess := rg.connect(ctx, nil)
		res, err := sess.CallTool(ctx, client.CallOptions{Name: "gated_text", Mode: client.ModeStreaming, OnSegment: func(mcp.Segment) {
			select {
			case rg.seen <- struct{}{}:
			default:
			}
		}})
		if err != nil || !res.Complete || res.Answer != client.AnswerStreaming {
			t.Fatalf("gated_text: %+v, %v; want a complete streaming answer", res, err)
		}
		if err := sess.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	recs := rg.records()
	sum := checkTrace(t, recs, rg.client, rg.server)
	if sum.sseEvents["POST"] == 0 || sum.sseEvents["GET"] == 0 {
		t.Errorf("SSE events recorded by method: %v; want some on POST and on GET streams", sum.sseEvents)
	}
	sessions := len(client.Modes()) + 1 // and the streamed POST's
	if sum.methods["DELETE"] != sessions {
		t.Errorf("%d DELETE exchanges, want %d (one per session)", sum.methods["DELETE"], sessions)
	}
	if sum.sessions < sessions {
		t.Errorf("%d sessions in the trace, want %d", sum.sessions, sessions)
	}
	for _, m := range []string{"initialize", "tools/call", "tasks/get", "tasks/result"} {
		if sum.rpcRequests[m] == 0 {
			t.Errorf("no %s request recorded as a message (requests: %v)", m, sum.rpcRequests)
		}
	}
	if sum.connOpens == 0 || sum.connOpens != sum.connCloses {
		t.Errorf("%d connections opened, %d closed in the trace", sum.connOpens, sum.connCloses)
	}
}

// TestProxyCutAndResume: the client cuts the stream answering its
// tools/call; the trace shows the cut on that stream, from the client's
// side, and the GET with Last-Event-ID that resumes it.
func TestProxyCutAndResume(t *testing.T) {
	// The client waits the retry before it resumes; meanwhile the stream
	// goes on and the proxy finds the client gone.
	rg := newRig(t, &streamhttp.Options{Retry: 200 * time.Millisecond})
	ctx := testContext(t)
	cutDone := false
	sess := rg.connect(ctx, func(body []byte) int {
		if !cutDone && bytes.Contains(body, []byte(`"tools/call"`)) {
			cutDone = true
			return 3 // priming event and two segments
		}
		return 0
	})
	res, err := sess.CallTool(ctx, client.CallOptions{
		Name: server.ToolSlowText, Args: map[string]any{"chunks": 10, "intervalMs": 30}, Mode: client.ModeStreaming,
	})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if !res.Complete {
		t.Fatal("incomplete result")
	}
	sess.Close()
	recs := rg.records()
	checkTrace(t, recs, rg.client, rg.server)

	// The cut POST stream.
	var callEx uint64
	for _, r := range recs {
		if r.Kind == traces.KindMessage && r.RPC != nil && r.RPC.Method == "tools/call" {
			callEx = r.Exchange
		}
	}
	stream := fmt.Sprintf("post:%d", callEx)
	var cut *traces.Record
	var lastID string
	for i, r := range recs {
		if r.Stream != stream {
			continue
		}
		switch r.Kind {
		case traces.KindSSEEvent:
			if r.SSE.HasID {
				lastID = r.SSE.ID
			}
		case traces.KindConnError:
			cut = &recs[i]
		}
	}
	if cut == nil || !strings.HasPrefix(cut.Note, "client: ") {
		t.Fatalf("stream %s: conn-error %+v; want one saying the client disconnected", stream, cut)
	}
	// The resume.
	found := false
	for _, r := range recs {
		if r.Kind != traces.KindRequestHead || r.HTTP.Method != "GET" || header(r.HTTP, "Last-Event-Id") == "" {
			continue
		}
		found = true
		if id := header(r.HTTP, "Last-Event-Id"); !strings.HasPrefix(id, strings.SplitN(lastID, "_", 2)[0]+"_") {
			t.Errorf("resume with Last-Event-ID %q, want one of the cut stream (last recorded id %q)", id, lastID)
		}
		var final bool
		for _, e := range recs {
			if e.Stream == fmt.Sprintf("get:%d", r.Exchange) && e.Kind == traces.KindSSEEvent && e.RPC != nil && e.RPC.Type == "response" {
				final = true
			}
		}
		if !final {
			t.Errorf("resumed GET (exchange %d) carries no response", r.Exchange)
		}
	}
	if !found {
		t.Error("no GET with Last-Event-ID in the trace")
	}
}

// TestProxyShortConnections: the server closes every SSE connection after
// 30 ms with a retry field, the client resumes again and again; every
// event and retry field is recorded where it passed.
func TestProxyShortConnections(t *testing.T) {
	rg := newRig(t, &streamhttp.Options{MaxStreamDuration: 30 * time.Millisecond, Retry: time.Millisecond})
	ctx := testContext(t)
	sess := rg.connect(ctx, nil)
	res, err := sess.CallTool(ctx, client.CallOptions{
		Name: server.ToolSlowText, Args: map[string]any{"chunks": 6, "intervalMs": 20}, Mode: client.ModeStreaming,
	})
	if err != nil || !res.Complete {
		t.Fatalf("call: %v (complete %v)", err, res != nil && res.Complete)
	}
	sess.Close()
	recs := rg.records()
	sum := checkTrace(t, recs, rg.client, rg.server)
	if sum.resumes == 0 {
		t.Error("no GET with Last-Event-ID recorded")
	}
	if sum.retryOnly == 0 {
		t.Error("no retry field closing a connection was recorded")
	}
}

// TestProxyUpstreamDown: no server behind the proxy: the client gets 502
// and the trace says the upstream failed.
func TestProxyUpstreamDown(t *testing.T) {
	rg := newRig(t, nil)
	rg.stopUpstream()
	ctx := testContext(t)
	_, err := client.New(nil).Connect(ctx, rg.transport(nil))
	if err == nil {
		t.Fatal("connect succeeded with no server")
	}
	recs := rg.records()
	var note string
	var status int
	for _, r := range recs {
		switch r.Kind {
		case traces.KindConnError:
			note = r.Note
		case traces.KindResponseHead:
			status = r.HTTP.Status
		}
	}
	if !strings.HasPrefix(note, "upstream: ") || status != 502 {
		t.Errorf("conn-error %q, response %d; want an upstream failure and 502", note, status)
	}
}

// traceSummary counts what checkTrace saw.
type traceSummary struct {
	methods     map[string]int // exchanges by HTTP method
	sseEvents   map[string]int // dispatched events by HTTP method
	rpcRequests map[string]int // JSON-RPC requests by method
	sessions    int
	resumes     int // GETs with Last-Event-ID
	retryOnly   int // blocks with a retry field and no data
	connOpens   int
	connCloses  int
}

// checkTrace holds the trace against what the client read and the server
// wrote, exchange by exchange: the bytes recorded for a response are the
// bytes the client read, which are the bytes the server wrote; every SSE
// event the client read is recorded, whole and in order, on the stream of
// its exchange. A response the client did not read to its end (a stream
// it cut or closed) must be a prefix of what was recorded, itself a prefix
// of what the server wrote.
func checkTrace(t *testing.T, recs []traces.Record, clientLog, serverLog *wireLog) traceSummary {
	t.Helper()
	sum := traceSummary{methods: map[string]int{}, sseEvents: map[string]int{}, rpcRequests: map[string]int{}}
	type exchange struct {
		seq, method, stream string
		answered, sse       bool
		raw                 bytes.Buffer
		events              []sse.Event
		ended               bool
		cut                 string
	}
	exs := map[uint64]*exchange{}
	sessions := map[string]bool{}
	var lastIndex uint64
	for i, r := range recs {
		if i > 0 && r.Index != lastIndex+1 {
			t.Errorf("record %d has index %d after %d", i, r.Index, lastIndex)
		}
		lastIndex = r.Index
		ex := exs[r.Exchange]
		switch r.Kind {
		case traces.KindConnOpen:
			sum.connOpens++
		case traces.KindConnClose:
			sum.connCloses++
		case traces.KindRequestHead:
			ex = &exchange{seq: header(r.HTTP, seqHeader), method: r.HTTP.Method, stream: fmt.Sprintf("%s:%d", strings.ToLower(r.HTTP.Method), r.Exchange)}
			exs[r.Exchange] = ex
			sum.methods[r.HTTP.Method]++
			if r.HTTP.Method == "GET" && header(r.HTTP, "Last-Event-Id") != "" {
				sum.resumes++
			}
			if r.Stream != fmt.Sprintf("req:%d", r.Exchange) || r.Dir != traces.DirClientToServer || r.Conn == 0 {
				t.Errorf("request head %d: stream %q dir %v conn %d", r.Index, r.Stream, r.Dir, r.Conn)
			}
		case traces.KindResponseHead:
			ex.answered = true
			ct, _, _ := mime.ParseMediaType(header(r.HTTP, "Content-Type"))
			ex.sse = ct == "text/event-stream"
			if s := header(r.HTTP, "Mcp-Session-Id"); s != "" {
				sessions[s] = true
			}
			if r.Stream != ex.stream {
				t.Errorf("response head %d on stream %q, want %q", r.Index, r.Stream, ex.stream)
			}
		case traces.KindMessage:
			if r.RPC == nil {
				t.Errorf("message record %d has no RPC fields: %s", r.Index, r.Raw)
			} else if r.RPC.Type == "request" && r.Dir == traces.DirClientToServer {
				sum.rpcRequests[r.RPC.Method]++
			}
			if r.Dir == traces.DirServerToClient {
				ex.raw.Write(r.Raw)
			}
		case traces.KindSSEEvent, traces.KindBodyChunk:
			if r.Dir != traces.DirServerToClient {
				continue
			}
			if r.Stream != ex.stream {
				t.Errorf("record %d (%s) on stream %q, want %q", r.Index, r.Kind, r.Stream, ex.stream)
			}
			ex.raw.Write(r.Raw)
			if r.Kind == traces.KindSSEEvent {
				if r.Note != "" {
					if r.SSE.HasRetry {
						sum.retryOnly++
					}
					continue
				}
				ev := sse.Event{ID: r.SSE.ID, HasID: r.SSE.HasID, Name: r.SSE.Event, Data: r.SSE.Data, Retry: r.SSE.Retry, HasRetry: r.SSE.HasRetry}
				ex.events = append(ex.events, ev)
				sum.sseEvents[ex.method]++
				if ev.Data != "" && (r.RPC == nil || r.RPC.Type == "") {
					t.Errorf("SSE event %d carries JSON-RPC data but no RPC fields: %s", r.Index, ev.Data)
				}
			}
		case traces.KindBodyEnd:
			if r.Dir == traces.DirServerToClient {
				ex.ended = true
			}
		case traces.KindConnError:
			if r.Exchange != 0 {
				ex.cut = r.Note
			}
		}
	}
	sum.sessions = len(sessions)

	clientBodies, serverBodies := clientLog.snapshot(), serverLog.snapshot()
	recorded := map[string]bool{}
	for _, ex := range exs {
		recorded[ex.seq] = true
	}
	for seq, b := range clientBodies {
		if b.responded && !recorded[seq] {
			t.Errorf("the client's request %s (%s) got a response but is not in the trace", seq, b.method)
		}
	}
	for id, ex := range exs {
		cb, ok := clientBodies[ex.seq]
		if !ok {
			t.Errorf("exchange %d (%s): the client made no request %q", id, ex.method, ex.seq)
			continue
		}
		sb := serverBodies[ex.seq]
		if !ex.answered {
			// Cut before the response head: the client got nothing.
			if !strings.HasPrefix(ex.cut, "client: ") || cb.responded {
				t.Errorf("exchange %d (%s) has no response head; cut %q, client got a response: %v", id, ex.method, ex.cut, cb.responded)
			}
			continue
		}
		if !ex.ended {
			t.Errorf("exchange %d (%s): no body end recorded", id, ex.method)
		}
		got, recorded, sent := cb.buf.Bytes(), ex.raw.Bytes(), sb.buf.Bytes()
		if cb.eof {
			if !bytes.Equal(got, sent) {
				t.Errorf("exchange %d (%s): the client read %d bytes, the server wrote %d:\nclient %q\nserver %q", id, ex.method, len(got), len(sent), got, sent)
			}
			if !bytes.Equal(recorded, got) {
				t.Errorf("exchange %d (%s): the trace holds %d bytes, the client read %d:\ntrace  %q\nclient %q", id, ex.method, len(recorded), len(got), recorded, got)
			}
		} else if !bytes.HasPrefix(recorded, got) || !bytes.HasPrefix(sent, recorded) {
			t.Errorf("exchange %d (%s), not read to its end: want client %d bytes ⊑ trace %d ⊑ server %d\nclient %q\ntrace  %q\nserver %q",
				id, ex.method, len(got), len(recorded), len(sent), got, recorded, sent)
		}
		if !ex.sse {
			continue
		}
		var read []sse.Event
		rd := sse.NewReader(bytes.NewReader(got))
		for ev, err := range rd.Events() {
			if err != nil {
				t.Errorf("exchange %d: client bytes do not decode: %v", id, err)
			}
			read = append(read, ev)
		}
		if len(read) > len(ex.events) || (cb.eof && len(read) != len(ex.events)) {
			t.Errorf("exchange %d (%s): the client read %d events, the trace holds %d", id, ex.method, len(read), len(ex.events))
		}
		for i := range min(len(read), len(ex.events)) {
			if read[i] != ex.events[i] {
				t.Errorf("exchange %d event %d: client read %+v, trace holds %+v", id, i, read[i], ex.events[i])
			}
		}
	}
	return sum
}

func header(h *traces.HTTPHead, name string) string {
	for _, f := range h.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// TestProxyUpstreamCut: the server breaks its stream after two events; the
// client sees the same cut, and the trace says the upstream did it.
func TestProxyUpstreamCut(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: one\n\nid: 2\ndata: two\n\nid: 3\ndata: thr")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer upstream.Close()
	path := filepath.Join(t.TempDir(), "cut.trace")
	w, err := traces.Create(path, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	resp, err := http.Get(front.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	front.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if readErr == nil || string(body) != "id: 1\ndata: one\n\nid: 2\ndata: two\n\nid: 3\ndata: thr" {
		t.Errorf("client read %q, %v; want the two events, the partial third and an error", body, readErr)
	}
	var got []string
	for _, r := range readTrace(t, path) {
		switch r.Kind {
		case traces.KindSSEEvent:
			got = append(got, "event "+r.SSE.ID+" "+r.SSE.Data)
		case traces.KindBodyChunk, traces.KindBodyEnd, traces.KindConnError:
			got = append(got, fmt.Sprintf("%s %q %s", r.Kind, r.Note, r.End))
		}
	}
	want := []string{
		"event 1 one", "event 2 two",
		`body-chunk "partial SSE event: the stream ended inside it" `,
		`body-end "unexpected EOF" server`,
		`conn-error "upstream: unexpected EOF" server`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProxyAnswerBeforeBodyEnd: an upstream may answer once it read the
// request's bytes, before the proxy's transport made its last read of the
// client's body (the one that finds its end). The answer's head then goes
// to the client first; the response must still pass whole. Without full
// duplex the proxy's server closed the client's body when the head went
// out; the transport's last read failed, the transport dropped the
// upstream connection, and the response broke after its first event
// (seen against the Go SDK's server under CPU load).
func TestProxyAnswerBeforeBodyEnd(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"n\":1}\n\n")
		w.(http.Flusher).Flush()
		<-release // the client has the head and the first event
		io.WriteString(w, "id: 2\ndata: {\"n\":2}\n\n")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	headSeen := make(chan struct{})
	w, err := traces.Create(filepath.Join(t.TempDir(), "t.trace"), traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, err := recorder.NewProxy(u, w, &recorder.ProxyOptions{Transport: lateEndTransport{recorder.NewTransport(), headSeen}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer func() { front.Close(); p.Close() }()
	resp, err := http.Post(front.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	close(headSeen) // now the transport reads the body's end
	rd := sse.NewReader(resp.Body)
	if ev, err := rd.Next(); err != nil || ev.ID != "1" {
		t.Fatalf("first event %+v: %v", ev, err)
	}
	close(release)
	if ev, err := rd.Next(); err != nil || ev.ID != "2" {
		t.Fatalf("second event %+v: %v; want the response whole", ev, err)
	}
}

// lateEndTransport holds the read that would find the request body's end
// until the client has the response's head.
type lateEndTransport struct {
	inner    http.RoundTripper
	headSeen chan struct{}
}

func (t lateEndTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.ContentLength > 0 {
		r.Body = &lateEnd{ReadCloser: r.Body, left: r.ContentLength, wait: t.headSeen}
	}
	return t.inner.RoundTrip(r)
}

type lateEnd struct {
	io.ReadCloser
	left int64
	wait chan struct{}
}

func (b *lateEnd) Read(p []byte) (int, error) {
	if b.left == 0 {
		<-b.wait
		return b.ReadCloser.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if err == io.EOF && b.left == 0 {
		err = nil // the end is for the next read to find
	}
	return n, err
}

// TestProxyForwardsUpstreamQuery: the upstream URL's query and user are
// sent upstream (its query first, then the client's), not dropped.
func TestProxyForwardsUpstreamQuery(t *testing.T) {
	type seen struct{ query, user, pass string }
	got := make(chan seen, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		got <- seen{r.URL.RawQuery, u, p}
	}))
	defer up.Close()
	u, err := url.Parse(up.URL + "/mcp?token=up-secret")
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("alice", "pw")
	w, err := traces.NewWriter(io.Discard, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	for _, tc := range []struct{ path, want string }{
		{"/mcp", "token=up-secret"},
		{"/mcp?x=1", "token=up-secret&x=1"},
	} {
		resp, err := http.Get(front.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s := <-got; s != (seen{tc.want, "alice", "pw"}) {
			t.Errorf("GET %s: upstream saw %+v, want query %q and alice:pw", tc.path, s, tc.want)
		}
	}
	front.Close()
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}
