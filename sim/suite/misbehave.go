package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// errCut is what a cut stream's writes return to the server.
var errCut = errors.New("the scripted server cut this stream on purpose")

// misbehave wraps the scripted server's handler: it acts, as mb says, on
// the SSE events of POST answers, one whole event at a time, and counts
// into acts what it did.
func misbehave(h http.Handler, mb Misbehavior, acts *misbehaviorActs) http.Handler {
	if mb == (Misbehavior{}) {
		return h
	}
	// One cut and one drop per scenario, whichever stream comes first.
	var cutDone, dropDone atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		mw := &misbehavingWriter{ResponseWriter: w, mb: mb, acts: acts, cancel: cancel}
		mw.claimCut = func() bool { return cutDone.CompareAndSwap(false, true) }
		mw.claimDrop = func() bool { return dropDone.CompareAndSwap(false, true) }
		h.ServeHTTP(mw, r.WithContext(ctx))
	})
}

type misbehavingWriter struct {
	http.ResponseWriter
	mb        Misbehavior
	acts      *misbehaviorActs
	cancel    context.CancelFunc
	claimCut  func() bool
	claimDrop func() bool

	sse    bool
	headed bool
	buf    []byte
	events int
	cut    bool
}

func (w *misbehavingWriter) WriteHeader(code int) {
	w.headed = true
	w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	if w.sse {
		w.acts.sseAnswers.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *misbehavingWriter) Write(p []byte) (int, error) {
	if !w.headed {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sse {
		return w.ResponseWriter.Write(p)
	}
	if w.cut {
		return 0, errCut
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.Index(w.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		ev := bytes.Clone(w.buf[:i+2])
		w.buf = w.buf[i+2:]
		if err := w.event(ev); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// event passes one whole event on, or not, or twice.
func (w *misbehavingWriter) event(ev []byte) error {
	msg := eventMessage(ev)
	var seqs []int64
	if msg != nil && msg.Kind() == mcp.KindResponse {
		seqs = seqNrs(msg)
	}
	if len(seqs) > 0 {
		w.acts.segmentEvents.Add(1)
	}
	if w.mb.CutAfter > 0 && w.events > 0 && finalResponse(msg) && w.claimCut() {
		// The response would come before the CutAfter'th event: the
		// stream is cut before it instead, so that the client has an
		// event id to resume from and a response still to get, however
		// few events the tool made.
		return w.cutNow()
	}
	if w.mb.DropSeqNr > 0 && containsInt(seqs, w.mb.DropSeqNr) && w.claimDrop() {
		w.acts.dropped.Add(1)
		return nil
	}
	if _, err := w.ResponseWriter.Write(ev); err != nil {
		return err
	}
	if w.mb.Duplicate && len(seqs) > 0 {
		// The copy has no id: a transport cannot drop it as a repeated
		// event; the segments' seqNr are what tell it is a duplicate.
		if _, err := w.ResponseWriter.Write(withoutID(ev)); err != nil {
			return err
		}
		w.acts.duplicated.Add(1)
	}
	if bytes.Contains(ev, []byte("data: {")) {
		w.events++
	}
	if w.mb.CutAfter > 0 && w.events >= w.mb.CutAfter && w.claimCut() {
		return w.cutNow()
	}
	return nil
}

// cutNow ends the stream's connection after what was written so far.
func (w *misbehavingWriter) cutNow() error {
	w.flush()
	w.cut = true
	w.acts.cut.Add(1)
	w.cancel()
	return errCut
}

func (w *misbehavingWriter) flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Flush implements http.Flusher.
func (w *misbehavingWriter) Flush() {
	if !w.cut {
		w.flush()
	}
}

// FlushError is what http.ResponseController calls.
func (w *misbehavingWriter) FlushError() error {
	if w.cut {
		return errCut
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// eventMessage returns the message an SSE event carries, or nil.
func eventMessage(ev []byte) *mcp.Message {
	e, err := sse.NewReader(bytes.NewReader(ev)).Next()
	if err != nil || e.Data == "" {
		return nil
	}
	m, err := mcp.DecodeMessage([]byte(e.Data))
	if err != nil {
		return nil
	}
	return m
}

// finalResponse reports whether m is the response that ends its request:
// an error, or a result that is no SEP-1905 streaming response with
// isComplete false (Case 3: the stream's last response has isComplete
// true).
func finalResponse(m *mcp.Message) bool {
	if m == nil || m.Kind() != mcp.KindResponse {
		return false
	}
	if m.Error != nil {
		return true
	}
	var r mcp.ToolCallResponse
	if json.Unmarshal(m.Result, &r) != nil {
		return true
	}
	return r.IsComplete == nil || *r.IsComplete
}

func containsInt(ns []int64, n int64) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// withoutID returns ev without its id line.
func withoutID(ev []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(ev, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("id:")) {
			out = append(out, line...)
		}
	}
	return out
}
