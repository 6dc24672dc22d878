package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
)

// resumeWait is how long, in simulated time, the HTTP probe leaves a cut
// call to end before it resumes its stream, and how long it reads the
// resumption.
const resumeWait = 2 * time.Second

// httpProbes asks, once the faults stopped, over raw HTTP what the
// reference client never sends, so that the HTTP record's rules judge the
// answers (docs/sim.md, "Probes"). It opens a session of its own, then:
//
//   - a ping without Mcp-Session-Id, which the server must answer 400
//     (HTTP-SESSION; 2025-11-25 Transports › Streamable HTTP › Session
//     Management: "Servers that require a session ID SHOULD respond to
//     requests without an Mcp-Session-Id header (other than
//     initialization) with HTTP 400 Bad Request");
//   - a slow tools/call streamed to its end, then a second one whose SSE
//     stream is cut just before its response (cutBeforeResponse); once
//     the call ended, a GET with the last event id the stream carried,
//     whose replay must bring the response and nothing of the first
//     call's stream, and whose ids must differ from the first stream's
//     (HTTP-RESUME-COMPLETE, HTTP-RESUME-SAME-STREAM,
//     HTTP-EVENT-ID-UNIQUE; Transports › Streamable HTTP › Resumability
//     and Redelivery: event IDs unique across all streams of a session;
//     the server MAY replay the messages that would have been sent after
//     the last event ID on the stream that was disconnected, and MUST NOT
//     replay messages that would have been delivered on a different
//     stream).
//
// Every request goes through the HTTP place (its faults stopped) and the
// HTTP record; nothing is drawn.
func (r *run) httpProbes(hc *http.Client, url string) {
	p := &rawHTTP{hc: hc, url: url}
	var sid string
	r.step(func(ctx context.Context) {
		resp, err := p.post(ctx, "", `{"jsonrpc":"2.0","id":"probe-init","method":"initialize","params":{"protocolVersion":"`+mcp.LatestProtocolVersion+`","capabilities":{},"clientInfo":{"name":"tasksim-probe","version":"0"}}}`)
		if err != nil {
			return
		}
		sid = resp.Header.Get("Mcp-Session-Id")
		drain(resp)
	})
	if sid == "" {
		return
	}
	r.step(func(ctx context.Context) {
		if resp, err := p.post(ctx, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			drain(resp)
		}
	})
	r.step(func(ctx context.Context) {
		if resp, err := p.post(ctx, "", `{"jsonrpc":"2.0","id":"probe-no-session","method":"ping"}`); err == nil {
			drain(resp)
		}
	})
	// A first call streams to its end: the session then has a POST
	// stream that holds events besides the one cut below, whose ids must
	// differ from its ids (HTTP-EVENT-ID-UNIQUE) and whose events its
	// replay must not carry (HTTP-RESUME-SAME-STREAM).
	r.step(func(ctx context.Context) {
		p.events(ctx, sid, "probe-whole", "", func(sse.Event, bool) bool { return true })
	})
	// The second call's stream ends just before its response: the cut sits
	// between the HTTP record and the server (cutBeforeResponse), so
	// that the record shows the stream ending with the response unsent,
	// whatever the scheduler does at that instant. The client reads to
	// the end and keeps the last event id.
	var lastID string
	r.step(func(ctx context.Context) {
		p.events(ctx, sid, "probe-cut", "before-response", func(ev sse.Event, final bool) bool {
			if ev.HasID && ev.ID != "" {
				lastID = ev.ID
			}
			return !final
		})
	})
	if lastID == "" {
		return
	}
	if !r.sleepUntil(r.sim.Now().Add(resumeWait)) {
		return
	}
	r.step(func(ctx context.Context) {
		ctx, cancel := r.within(resumeWait)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
		if err != nil {
			return
		}
		p.headers(req, sid)
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := p.hc.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		// The replay ends when the server ends it (after the response) or
		// after resumeWait: read it to its end, so that how it ended is
		// the server's doing.
		_, _ = io.Copy(io.Discard, resp.Body)
	})
}

// events sends a slow tools/call with request id id (and a progress
// token, so that the answer is an event stream), with probeCutHeader cut
// unless it is "", and passes each event of its stream to f, final for
// the response, until f returns false or the stream ends.
func (p *rawHTTP) events(ctx context.Context, sid, id, cut string, f func(ev sse.Event, final bool) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	params, _ := json.Marshal(map[string]any{
		"name":      server.ToolSlowText,
		"arguments": Call{Tool: server.ToolSlowText, Chunks: 3, IntervalMs: 100, FailAfter: -1}.args(),
		"_meta":     map[string]any{"progressToken": id},
	})
	req, err := p.request(ctx, sid, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":`+string(params)+`}`)
	if err != nil {
		return
	}
	if cut != "" {
		req.Header.Set(probeCutHeader, cut)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	for {
		ev, err := rd.Next()
		if err != nil {
			return
		}
		if !f(ev, strings.Contains(ev.Data, `"id":"`+id+`"`)) {
			return
		}
	}
}

// rawHTTP sends raw Streamable HTTP requests.
type rawHTTP struct {
	hc  *http.Client
	url string
}

func (p *rawHTTP) headers(req *http.Request, sid string) {
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.LatestProtocolVersion)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
}

// post sends body as a POST, with session id sid unless it is "".
func (p *rawHTTP) post(ctx context.Context, sid, body string) (*http.Response, error) {
	req, err := p.request(ctx, sid, body)
	if err != nil {
		return nil, err
	}
	return p.hc.Do(req)
}

// request is a POST of body, with session id sid unless it is "".
func (p *rawHTTP) request(ctx context.Context, sid, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	p.headers(req, sid)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// probeCutHeader on a request asks cutBeforeResponse to end its event
// stream just before the response.
const probeCutHeader = "Tasksim-Probe-Cut"

// cutBeforeResponse sits between the HTTP record and the server. A
// request with probeCutHeader has its event stream end, as a connection
// the network broke, just before the event that carries a JSON-RPC
// result or error: the server's write of it fails, and the stream ends
// after the events before it (Transports › Streamable HTTP › Sending
// Messages to the Server: the stream may be disconnected before the
// response; the client resumes it with GET and Last-Event-ID). The cut
// is decided by what the server writes, not by when: the same for every
// run. Any other request passes untouched.
type cutBeforeResponse struct{ h http.Handler }

func (c cutBeforeResponse) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(probeCutHeader) == "" {
		c.h.ServeHTTP(w, r)
		return
	}
	c.h.ServeHTTP(&responseCut{ResponseWriter: w}, r)
}

// responseCut fails the write of a response event and every write after.
type responseCut struct {
	http.ResponseWriter
	cut bool
}

func (c *responseCut) Write(p []byte) (int, error) {
	if !c.cut && (bytes.Contains(p, []byte(`"result":`)) || bytes.Contains(p, []byte(`"error":`))) {
		c.cut = true
	}
	if c.cut {
		return 0, errProbeCut
	}
	return c.ResponseWriter.Write(p)
}

// FlushError passes a flush on until the cut.
func (c *responseCut) FlushError() error {
	if c.cut {
		return errProbeCut
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (c *responseCut) Flush() { _ = c.FlushError() }

// Unwrap lets http.ResponseController reach the writer underneath.
func (c *responseCut) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// drain reads a response to its end and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// errProbeCut is what the no-resume probe's writer returns once it cut
// its stream.
var errProbeCut = errors.New("probe: the stream was cut")

// noResume stands, for one probe session, for a server without
// resumability (2025-11-25 Transports › Streamable HTTP › Resumability and
// Redelivery: resumption is optional; Listening for Messages from the
// Server: a server that offers no SSE stream at the endpoint answers a
// GET 405 Method Not Allowed). It answers every GET 405, and it cuts the
// first event stream that carries a SEP-1905 segment (an event whose data
// has a seqNr) right after that event. A client then cannot resume the
// stream with Last-Event-ID; it must ask tasks/result with lastSeqNr, the
// highest seqNr it received (SEP-1905, Case 3 › Resuming Streaming;
// CLIENT-RESUME). It sits in front of the HTTP place, outside the HTTP
// record: the record shows the server's stream cut and what the client
// did next.
type noResume struct {
	h http.Handler

	mu  sync.Mutex
	cut bool // the one stream was cut
}

func (n *noResume) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.Error(w, "Method Not Allowed: no SSE stream at this endpoint", http.StatusMethodNotAllowed)
		return
	}
	n.h.ServeHTTP(&cutWriter{ResponseWriter: w, n: n}, r)
}

// claim reports whether the caller is the first to cut.
func (n *noResume) claim() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	first := !n.cut
	n.cut = true
	return first
}

// cutWriter passes a response on until it carried a whole event with a
// seqNr, if it is the first to; then every write fails.
type cutWriter struct {
	http.ResponseWriter
	n    *noResume
	tail []byte // the bytes since the last event's end
	cut  bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return 0, errProbeCut
	}
	n, err := c.ResponseWriter.Write(p)
	c.tail = append(c.tail, p[:n]...)
	if i := bytes.LastIndex(c.tail, []byte("\n\n")); i >= 0 {
		if bytes.Contains(c.tail[:i], []byte(`"seqNr"`)) && c.n.claim() {
			c.cut = true
		}
		c.tail = append(c.tail[:0], c.tail[i+2:]...)
	}
	return n, err
}

// FlushError passes a flush on, so that the event before the cut reaches
// the client.
func (c *cutWriter) FlushError() error {
	if c.cut {
		// The event before the cut goes out; nothing after it.
		_ = http.NewResponseController(c.ResponseWriter).Flush()
		return errProbeCut
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (c *cutWriter) Flush() { _ = c.FlushError() }

// Unwrap lets http.ResponseController reach the writer underneath.
func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// noResumeProbe connects ss over t, a transport to a noResume front, and
// makes a SEP-1905 streamed call whose stream the front cuts after its
// first segment. What the client does then the HTTP record and the
// run's trace judge (CLIENT-RESUME); only a hang is a finding here, and
// the probe makes none: a client that gives up fails the rule, not the
// probe.
func (r *run) noResumeProbe(ss *simSession, t mcp.Transport) {
	r.connectNow(ss, t)
	if ss.err != nil {
		return
	}
	r.step(func(ctx context.Context) { _, _ = ss.s.CallTool(ctx, probeStream.options()) })
}
