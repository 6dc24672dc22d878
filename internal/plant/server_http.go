package plant

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// Planted bugs of the Streamable HTTP transport (2025-11-25 Transports ›
// Streamable HTTP), as decorators of the transport's http.Handler, or, for
// Broadcast, of the server the transport serves.

// SharedEventIDs numbers the events of every POST stream as if they were
// all stream 1: two streams of a session give out the same event ids
// (HTTP-EVENT-ID-UNIQUE: ids "MUST be globally unique across all streams
// within that session", Resumability and Redelivery). The reference
// transport's ids read S_E, event E of stream S; priming events (S_0)
// keep their stream. A resume with a shared id resumes stream 1.
func SharedEventIDs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(newEventEditor(w, func(block []byte, ev sse.Event) []byte {
			s, e, ok := strings.Cut(ev.ID, "_")
			if !ok || s == "0" || s == "1" || e == "0" || strings.Contains(e, "_") {
				return block
			}
			return bytes.Replace(block, []byte("id: "+ev.ID+"\n"), []byte("id: 1_"+e+"\n"), 1)
		}), r)
	})
}

// ResumeSkipsOne resumes a stream after Last-Event-ID one event too far:
// the first event due is lost (HTTP-RESUME-COMPLETE: a resumed stream
// replays the messages after the last event the client received).
func ResumeSkipsOne(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || strings.TrimSpace(r.Header.Get("Last-Event-ID")) == "" {
			h.ServeHTTP(w, r)
			return
		}
		skipped := false
		h.ServeHTTP(newEventEditor(w, func(block []byte, ev sse.Event) []byte {
			if !skipped {
				skipped = true
				return nil
			}
			return block
		}), r)
	})
}

// MissingSession404 answers a request without Mcp-Session-Id (other than
// the initialize that makes a session) 404 instead of 400
// (HTTP-SESSION-MISSING: "Servers that require a session ID SHOULD respond
// to requests without an MCP-Session-Id header (other than initialization)
// with HTTP 400 Bad Request", Session Management). A client that gets 404
// starts a new session.
func MissingSession404(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" {
			h.ServeHTTP(w, r)
			return
		}
		bw := &statusWriter{ResponseWriter: w, status: http.StatusBadRequest}
		h.ServeHTTP(bw, r)
		if !bw.held {
			return
		}
		body := bw.body.Bytes()
		var m struct {
			Error *mcp.Error `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil && m.Error != nil && strings.HasPrefix(m.Error.Message, "Bad Request: missing MCP-Session-Id") {
			bw.code = http.StatusNotFound
			body = bytes.Replace(body, []byte(strconv.Quote(m.Error.Message)), []byte(`"Not Found: unknown or terminated session"`), 1)
		}
		w.WriteHeader(bw.code)
		_, _ = w.Write(body)
	})
}

// statusWriter holds back a response of one status code, to be rewritten
// once the handler is done with it; any other passes through.
type statusWriter struct {
	http.ResponseWriter
	status int
	held   bool
	code   int
	body   bytes.Buffer
	passed bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.held || w.passed {
		return
	}
	if code == w.status {
		w.held, w.code = true, code
		return
	}
	w.passed = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.held && !w.passed {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.passed {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// CancelOnDisconnect cancels the task of a POST stream whose connection
// ends before the stream's final message, as a server that runs the task
// on the request's context does (TASK-SURVIVES-REQUEST: "Disconnection
// SHOULD NOT be interpreted as the client cancelling its request",
// 2025-11-25 Transports › Streamable HTTP). The task is the one the
// stream's messages first name (result.task.taskId); the final message
// is the response to the POSTed request that ends the answer: an error,
// or a result that is no SEP-1905 partial one (isComplete: false). The
// tasks/cancel goes to h in the same session; its answer is discarded.
func CancelOnDisconnect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		var body bytes.Buffer
		r.Body = copyBody{r.Body, &body}
		var reqID struct {
			ID json.RawMessage `json:"id"`
		}
		taskID, final := "", false
		ew := newEventEditor(w, func(block []byte, ev sse.Event) []byte {
			if reqID.ID == nil {
				_ = json.Unmarshal(body.Bytes(), &reqID)
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Error  json.RawMessage `json:"error"`
				Result *struct {
					Task *struct {
						TaskID string `json:"taskId"`
					} `json:"task"`
					Segments   json.RawMessage `json:"partial-content"`
					IsComplete bool            `json:"isComplete"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(ev.Data), &m) != nil || !bytes.Equal(m.ID, reqID.ID) {
				return block
			}
			if m.Result != nil && m.Result.Task != nil && taskID == "" {
				taskID = m.Result.Task.TaskID
			}
			if m.Error != nil || (m.Result != nil && (m.Result.Segments == nil || m.Result.IsComplete)) {
				final = true
			}
			return block
		})
		h.ServeHTTP(ew, r)
		if ew.sse && !final && taskID != "" {
			handCancel(h, r, "tasksim-plant-cancel", taskID, ew.Header().Get("Mcp-Session-Id"))
		}
	})
}

// eventEditor passes each event of an SSE response through edit before it
// is written (nil drops it); anything else passes as it is. The transport
// writes whole events, so a block is written as soon as it is complete.
type eventEditor struct {
	http.ResponseWriter
	edit    func(block []byte, ev sse.Event) []byte
	split   *sse.Splitter
	dec     sse.BlockDecoder
	started bool
	sse     bool // the response is an event stream
}

func newEventEditor(w http.ResponseWriter, edit func(block []byte, ev sse.Event) []byte) *eventEditor {
	return &eventEditor{ResponseWriter: w, edit: edit, split: sse.NewSplitter()}
}

func (w *eventEditor) WriteHeader(code int) {
	if !w.started {
		w.started = true
		w.sse = code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *eventEditor) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sse {
		return w.ResponseWriter.Write(b)
	}
	err := w.split.Write(b, func(block []byte, fields bool) error {
		out := block
		if ev, derr := w.dec.Decode(block); derr == nil && fields && ev.HasID {
			out = w.edit(block, ev)
		}
		if len(out) == 0 {
			return nil
		}
		_, werr := w.ResponseWriter.Write(out)
		return werr
	}, func(bool) error { return nil })
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w *eventEditor) Flush()                      { http.NewResponseController(w.ResponseWriter).Flush() }
func (w *eventEditor) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Broadcast sends every message the server sends on its own (the
// session's standalone stream) on the open POST streams of the session
// too: those that carried a message and not yet their final one
// (HTTP-NO-BROADCAST: "the server MUST send each of its JSON-RPC messages
// on only one of the connected streams", Multiple Connections). It
// decorates the server as the Streamable HTTP transport serves it: over
// stdio there are no streams.
func Broadcast(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, perSession: func(mcp.Outbox) hooks {
		var mu sync.Mutex
		open := map[*openAnswer]bool{}
		return hooks{
			handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
				if r == nil {
					next(msg, r)
					return
				}
				a := &openAnswer{r: r}
				next(msg, replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
					err := out.Reply(ctx, m, final)
					mu.Lock()
					switch {
					case final:
						delete(open, a)
					case err == nil && m != nil:
						open[a] = true
					}
					mu.Unlock()
					return err
				}})
			},
			send: func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
				mu.Lock()
				answers := make([]*openAnswer, 0, len(open))
				for a := range open {
					answers = append(answers, a)
				}
				mu.Unlock()
				for _, a := range answers {
					_ = a.r.Reply(ctx, msg, false)
				}
				return self.Send(ctx, msg)
			},
		}
	}}
}

// openAnswer is the answer to one request, as Broadcast tracks it.
type openAnswer struct{ r mcp.Replier }
