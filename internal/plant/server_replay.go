package plant

import (
	"bytes"
	"net/http"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp/sse"
)

// ReplayOtherStreams plants modelcontextprotocol/servers#4087 on a
// Streamable HTTP handler with event ids: a resumption (GET with
// Last-Event-ID) first replays the events the server sent after that
// one on the session's other streams, then what h replays. The server
// "MUST NOT replay messages that would have been delivered on a different
// stream" (2025-11-25 Transports › Streamable HTTP › Resumability and
// Redelivery); HTTP-RESUME-SAME-STREAM names the breach.
func ReplayOtherStreams(h http.Handler) http.Handler {
	return &replayer{h: h, log: map[string][]loggedEvent{}}
}

// maxLogged bounds the events kept per session.
const maxLogged = 1000

type loggedEvent struct {
	stream int
	id     string
	block  []byte
}

type replayer struct {
	h       http.Handler
	mu      sync.Mutex
	streams int
	log     map[string][]loggedEvent // by session id
}

func (p *replayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		p.h.ServeHTTP(&injectWriter{ResponseWriter: w, pending: p.othersAfter(sid, r.Header.Get("Last-Event-ID"))}, r)
	case r.Method == http.MethodPost && sid != "":
		p.mu.Lock()
		p.streams++
		n := p.streams
		p.mu.Unlock()
		p.h.ServeHTTP(&teeWriter{ResponseWriter: w, p: p, sid: sid, stream: n, split: sse.NewSplitter()}, r)
	default:
		p.h.ServeHTTP(w, r)
	}
}

func (p *replayer) add(sid string, ev loggedEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := append(p.log[sid], ev)
	if len(l) > maxLogged {
		l = l[len(l)-maxLogged:]
	}
	p.log[sid] = l
}

// othersAfter returns the events logged after id on streams other than
// id's, as they were written.
func (p *replayer) othersAfter(sid, id string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.log[sid]
	var out bytes.Buffer
	for i, ev := range l {
		if ev.id != id {
			continue
		}
		for _, later := range l[i+1:] {
			if later.stream != ev.stream {
				out.Write(later.block)
			}
		}
		break
	}
	return out.Bytes()
}

// teeWriter logs every event with an id of an SSE answer as it passes.
type teeWriter struct {
	http.ResponseWriter
	p      *replayer
	sid    string
	stream int
	split  *sse.Splitter
	dec    sse.BlockDecoder
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_ = w.split.Write(b, func(block []byte, fields bool) error {
			if ev, err := w.dec.Decode(block); err == nil && ev.HasID {
				w.p.add(w.sid, loggedEvent{stream: w.stream, id: ev.ID, block: bytes.Clone(block)})
			}
			return nil
		}, func(bool) error { return nil })
	}
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush()                      { http.NewResponseController(w.ResponseWriter).Flush() }
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// injectWriter writes pending at the start of a 200 event stream, before
// anything the handler writes.
type injectWriter struct {
	http.ResponseWriter
	pending []byte
	started bool
}

func (w *injectWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && len(w.pending) > 0 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.ResponseWriter.Write(w.pending)
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *injectWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *injectWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *injectWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
