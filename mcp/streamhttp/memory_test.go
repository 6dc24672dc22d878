package streamhttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// These tests run the reference server behind a Handler and the reference
// client over the in-memory transport, inside synctest bubbles: time is
// virtual (a tool's 100 ms pause passes when everything else waits), and
// they assert what crossed the wire, never how long it took.

// exchange is one HTTP request as the wire saw it, and the response body
// the client read.
type exchange struct {
	method, sessionID, lastEventID string
	status                         int
	contentType                    string
	respSession                    string
	body                           bytes.Buffer // guarded by wire.mu
}

// events returns the SSE events of the body read so far, each summarised
// as "id message": the message's method, or "result <id>" / "error <id>"
// for a response; "id -" for an event without data (priming, retry).
func (e *exchange) events(t *testing.T, w *wire) []string {
	t.Helper()
	w.mu.Lock()
	data := slices.Clone(e.body.Bytes())
	w.mu.Unlock()
	var out []string
	r := sse.NewReader(bytes.NewReader(data))
	for {
		ev, err := r.Next()
		if err != nil {
			return out
		}
		what := "-"
		if ev.Data != "" {
			m, err := mcp.DecodeMessage([]byte(ev.Data))
			if err != nil {
				t.Fatalf("event %s: %v", ev.ID, err)
			}
			what = summary(m)
		}
		out = append(out, ev.ID+" "+what)
	}
}

func summary(m *mcp.Message) string {
	switch m.Kind() {
	case mcp.KindResponse:
		if m.Error != nil {
			return "error " + m.ID.String()
		}
		return "result " + m.ID.String()
	default:
		return m.Method
	}
}

// wire records every exchange of a client with its server.
type wire struct {
	rt http.RoundTripper
	mu sync.Mutex
	ex []*exchange
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &exchange{method: req.Method, sessionID: req.Header.Get("Mcp-Session-Id"), lastEventID: req.Header.Get("Last-Event-Id")}
	w.mu.Lock()
	w.ex = append(w.ex, ex)
	w.mu.Unlock()
	resp, err := w.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	ex.status, ex.contentType, ex.respSession = resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Mcp-Session-Id")
	w.mu.Unlock()
	resp.Body = &teeBody{ReadCloser: resp.Body, w: w, ex: ex}
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	w  *wire
	ex *exchange
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.mu.Lock()
	b.ex.body.Write(p[:n])
	b.w.mu.Unlock()
	return n, err
}

// find returns the exchanges f selects, in order.
func (w *wire) find(f func(*exchange) bool) []*exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*exchange
	for _, e := range w.ex {
		if f(e) {
			out = append(out, e)
		}
	}
	return out
}

// memSetup is a reference server behind a Handler, and a reference client
// session connected to it in memory. Call it inside a bubble.
type memSetup struct {
	h    *streamhttp.Handler
	srv  *server.Server
	ct   *streamhttp.ClientTransport
	wire *wire
	sess *client.Session
}

func newMemSetup(t *testing.T, hopts *streamhttp.Options, copts *client.Options) *memSetup {
	t.Helper()
	srv := server.New(nil)
	if hopts == nil {
		hopts = &streamhttp.Options{}
	}
	hopts.Logger = slog.New(slog.DiscardHandler)
	h := streamhttp.NewHandler(srv, hopts)
	ct := streamhttp.Pipe(h)
	w := &wire{rt: ct.HTTPClient.Transport}
	ct.HTTPClient = &http.Client{Transport: w}
	m := &memSetup{h: h, srv: srv, ct: ct, wire: w}
	t.Cleanup(func() {
		if m.sess != nil {
			m.sess.Close()
		}
		h.Close()
		srv.Close()
	})
	sess, err := client.New(copts).Connect(t.Context(), ct)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	m.sess = sess
	return m
}

func chunkTexts(n, size int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = server.ChunkText(i+1, size)
	}
	return strings.Join(parts, "|")
}

func texts(blocks []mcp.ContentBlock) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.Text
	}
	return strings.Join(parts, "|")
}

var slowText3 = map[string]any{"chunks": 3, "chunkSize": 16, "intervalMs": 100}

// standalone returns the one standalone GET of the session.
func (m *memSetup) standalone(t *testing.T) *exchange {
	t.Helper()
	gets := m.wire.find(func(e *exchange) bool { return e.method == http.MethodGet && e.lastEventID == "" })
	if len(gets) != 1 || gets[0].status != http.StatusOK || gets[0].contentType != "text/event-stream" {
		t.Fatalf("standalone GETs: %+v", gets)
	}
	return gets[0]
}

// A task call: CreateTaskResult, polling, tasks/result; the task's status
// notification comes on the standalone GET stream.
func TestMemoryTaskCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemSetup(t, nil, &client.Options{NoPartial: true})
		res, err := m.sess.CallTool(t.Context(), client.CallOptions{Name: server.ToolSlowText, Args: slowText3, Mode: client.ModeTask})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerTask || !res.Complete || texts(res.Content) != chunkTexts(3, 16) {
			t.Fatalf("answer %q complete %v content %q", res.Answer, res.Complete, texts(res.Content))
		}
		synctest.Wait()
		evs := m.standalone(t).events(t, m.wire)
		if len(evs) != 2 || !strings.HasSuffix(evs[0], " -") || !strings.HasSuffix(evs[1], " "+mcp.NotificationTaskStatus) {
			t.Fatalf("standalone stream carried %q, want the priming event and the status notification", evs)
		}
		posts := m.wire.find(func(e *exchange) bool { return e.method == http.MethodPost })
		for _, p := range posts {
			if p.status == http.StatusOK && p.contentType != "application/json" {
				t.Errorf("a task-mode POST was answered with %s", p.contentType)
			}
		}
	})
}

// A SEP-1905 streaming call: one POST answered by an SSE stream of
// responses sharing the request's id, the last one complete.
func TestMemoryStreamingCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemSetup(t, nil, &client.Options{NoPartial: true})
		res, err := m.sess.CallTool(t.Context(), client.CallOptions{Name: server.ToolSlowText, Args: slowText3, Mode: client.ModeStreaming})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerStreaming || !res.Complete || res.Segments != 3 || texts(res.Content) != chunkTexts(3, 16) {
			t.Fatalf("answer %q complete %v segments %d content %q", res.Answer, res.Complete, res.Segments, texts(res.Content))
		}
		calls := m.wire.find(func(e *exchange) bool { return e.method == http.MethodPost && e.contentType == "text/event-stream" })
		if len(calls) != 1 {
			t.Fatalf("%d POSTs answered with SSE, want the tools/call", len(calls))
		}
		evs := calls[0].events(t, m.wire)
		results := 0
		for _, ev := range evs {
			if strings.Contains(ev, " result ") {
				results++
			}
		}
		if !strings.HasSuffix(evs[0], " -") || results < 2 || !strings.Contains(evs[len(evs)-1], " result ") {
			t.Fatalf("the call's stream carried %q: want a priming event, then several responses, the last one final", evs)
		}
		if n := len(m.wire.find(func(e *exchange) bool { return e.lastEventID != "" })); n != 0 {
			t.Fatalf("%d resumptions of an unbroken stream", n)
		}
	})
}

// The server closes the POST stream's connection before answering
// (mcp.ConnectionCloser); the client resumes with GET and the priming
// event's id, and the answer comes on that GET.
func TestMemoryResumeAfterCloseConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemSetup(t, nil, nil)
		res, err := m.sess.CallTool(t.Context(), client.CallOptions{Name: "test_reconnection", Mode: client.ModePlain})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || texts(res.Content) != server.ReconnectionResult || res.Counts.Reconnects != 1 {
			t.Fatalf("complete %v reconnects %d content %q", res.Complete, res.Counts.Reconnects, texts(res.Content))
		}
		post := m.wire.find(func(e *exchange) bool { return e.method == http.MethodPost && e.contentType == "text/event-stream" })
		if len(post) != 1 {
			t.Fatalf("%d POSTs answered with SSE", len(post))
		}
		if evs := post[0].events(t, m.wire); !slices.Equal(evs, []string{"1_0 -"}) {
			t.Fatalf("the cut POST stream carried %q, want only its priming event", evs)
		}
		if !bytes.HasSuffix(post[0].body.Bytes(), []byte("retry: 1000\n\n")) {
			t.Fatalf("the cut POST stream did not end with a retry field: %q", post[0].body.String())
		}
		resumed := m.wire.find(func(e *exchange) bool { return e.lastEventID != "" })
		if len(resumed) != 1 || resumed[0].method != http.MethodGet || resumed[0].lastEventID != "1_0" || resumed[0].status != http.StatusOK {
			t.Fatalf("resumptions %+v, want one GET after 1_0", resumed)
		}
		if evs := resumed[0].events(t, m.wire); len(evs) != 1 || !strings.HasPrefix(evs[0], "1_1 result ") {
			t.Fatalf("the resumed stream carried %q, want the answer as event 1_1", evs)
		}
	})
}

// SEP-2679 partial notifications are sent outside any request: they come on
// the standalone GET stream, in order, before the status notification.
func TestMemoryStandaloneStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemSetup(t, nil, nil)
		res, err := m.sess.CallTool(t.Context(), client.CallOptions{Name: server.ToolSlowText, Args: slowText3, Mode: client.ModePartial})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || res.Partials != 3 || texts(res.PartialContent) != chunkTexts(3, 16) {
			t.Fatalf("complete %v partials %d partial content %q", res.Complete, res.Partials, texts(res.PartialContent))
		}
		synctest.Wait()
		got := m.standalone(t).events(t, m.wire)
		want := []string{
			"0_0_1 -",
			"0_1 " + mcp.NotificationTaskPartial,
			"0_2 " + mcp.NotificationTaskPartial,
			"0_3 " + mcp.NotificationTaskPartial,
			"0_4 " + mcp.NotificationTaskStatus,
		}
		if !slices.Equal(got, want) {
			t.Fatalf("standalone stream:\n got %q\nwant %q", got, want)
		}
	})
}

// Closing the client session sends DELETE; the session is gone for the
// server, which answers 404 to its id from then on.
func TestMemoryDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemSetup(t, nil, nil)
		if err := m.sess.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		sid := m.wire.find(func(e *exchange) bool { return e.respSession != "" })[0].respSession
		if err := m.sess.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		dels := m.wire.find(func(e *exchange) bool { return e.method == http.MethodDelete })
		if len(dels) != 1 || dels[0].sessionID != sid || dels[0].status != http.StatusOK {
			t.Fatalf("DELETEs %+v, want one for session %s answered 200", dels, sid)
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, m.ct.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := m.ct.HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("POST in the deleted session: %s, want 404", resp.Status)
		}
	})
}

// The transport itself, with a plain http.Handler.
func TestMemoryTransport(t *testing.T) {
	do := func(t *testing.T, h http.HandlerFunc, ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://memory/x", nil)
		return (&http.Client{Transport: streamhttp.NewMemoryTransport(h)}).Do(req)
	}
	t.Run("a finished answer has a length and a sniffed type", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			resp, err := do(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusTeapot)
				fmt.Fprint(w, "<html>hi")
			}, t.Context())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusTeapot || resp.Status != "418 I'm a teapot" || resp.ContentLength != 8 ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || string(body) != "<html>hi" {
				t.Fatalf("%s length %d type %q body %q", resp.Status, resp.ContentLength, resp.Header.Get("Content-Type"), body)
			}
		})
	})
	t.Run("flush sends the head; closing the body cancels the handler", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ended := make(chan error, 1)
			resp, err := do(t, func(w http.ResponseWriter, r *http.Request) {
				rc := http.NewResponseController(w)
				if err := rc.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
					ended <- err
					return
				}
				fmt.Fprint(w, "first")
				if err := rc.Flush(); err != nil {
					ended <- err
					return
				}
				<-r.Context().Done()
				_, err := w.Write([]byte("late"))
				ended <- err
			}, t.Context())
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 5)
			if _, err := io.ReadFull(resp.Body, b); err != nil || string(b) != "first" || resp.ContentLength != -1 {
				t.Fatalf("read %q, %v; length %d", b, err, resp.ContentLength)
			}
			synctest.Wait()
			select {
			case err := <-ended:
				t.Fatalf("the handler ended before the client closed: %v", err)
			default:
			}
			resp.Body.Close()
			if err := <-ended; err == nil {
				t.Fatal("a write after the client left succeeded")
			}
			if _, err := resp.Body.Read(b); err == nil {
				t.Fatal("read after Close succeeded")
			}
		})
	})
	t.Run("the handler returning ends the body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			resp, err := do(t, func(w http.ResponseWriter, r *http.Request) {
				w.(http.Flusher).Flush()
				<-release
				fmt.Fprint(w, strings.Repeat("x", 5000))
			}, t.Context())
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || len(body) != 5000 {
				t.Fatalf("read %d bytes, %v", len(body), err)
			}
		})
	})
	t.Run("a request cancelled before the head", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			handlerCtx := make(chan context.Context, 1)
			done := make(chan error, 1)
			go func() {
				_, err := do(t, func(w http.ResponseWriter, r *http.Request) {
					handlerCtx <- r.Context()
					<-r.Context().Done()
				}, ctx)
				done <- err
			}()
			hctx := <-handlerCtx
			cancel()
			if err := <-done; err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
				t.Fatalf("Do = %v, want context canceled", err)
			}
			<-hctx.Done()
		})
	})
	t.Run("a handler panic is an error, not a crash", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, err := do(t, func(w http.ResponseWriter, r *http.Request) { panic("boom") }, t.Context())
			if err == nil || !strings.Contains(err.Error(), "boom") {
				t.Fatalf("Do = %v, want the panic", err)
			}
		})
	})
}
