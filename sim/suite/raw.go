package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// rawSession is a Streamable HTTP session driven request by request, for
// scenarios that do what no well-behaved client does: cut a stream and
// resume it by hand, send a foreign Origin, forget the session id.
type rawSession struct {
	e      *Env
	hc     *http.Client
	id     string
	proto  string
	nextID int64
}

func (e *Env) rawSession(caps map[string]any) (*rawSession, error) {
	s := &rawSession{e: e, hc: e.httpClient(), proto: mcp.LatestProtocolVersion}
	if caps == nil {
		caps = map[string]any{"tasks": map[string]any{"responses": map[string]any{"modes": []string{"immediate", "streaming", "task"}}, "streaming": map[string]any{"partial": map[string]any{}}}}
	}
	resp, err := s.post(s.request("initialize", map[string]any{
		"protocolVersion": mcp.LatestProtocolVersion, "capabilities": caps,
		"clientInfo": map[string]any{"name": "tasksim-check", "version": "dev"},
	}), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("initialize: HTTP %d", resp.StatusCode)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if _, err := readAnswer(resp); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	n, err := s.post(notification("notifications/initialized"), nil)
	if err != nil {
		return nil, err
	}
	n.Body.Close()
	return s, nil
}

func (s *rawSession) request(method string, params any) []byte {
	s.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": method, "params": params})
	return b
}

func notification(method string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	return b
}

// post sends body with the session's headers; hdr adds or, with an
// empty value, removes headers.
func (s *rawSession) post(body []byte, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(s.e.Ctx, http.MethodPost, s.e.httpURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req, hdr)
	resp, err := s.hc.Do(req)
	if err != nil {
		// Say what waited: a scenario cut by its timeout ends here.
		return nil, fmt.Errorf("POST %s: no answer: %w", bodyMethod(body), err)
	}
	return resp, nil
}

// bodyMethod names the JSON-RPC message in body: its method, or
// "a response".
func bodyMethod(body []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" {
		return "a response"
	}
	return m.Method
}

func (s *rawSession) headers(req *http.Request, hdr map[string]string) {
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	req.Header.Set("Mcp-Protocol-Version", s.proto)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
}

// get opens a GET stream, resuming after lastEventID when it is set.
func (s *rawSession) get(lastEventID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(s.e.Ctx, http.MethodGet, s.e.httpURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	s.headers(req, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET (Last-Event-ID %q): no answer: %w", lastEventID, err)
	}
	return resp, nil
}

func (s *rawSession) delete() (*http.Response, error) {
	req, err := http.NewRequestWithContext(s.e.Ctx, http.MethodDelete, s.e.httpURL, nil)
	if err != nil {
		return nil, err
	}
	s.headers(req, nil)
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("DELETE: no answer: %w", err)
	}
	return resp, nil
}

// call sends a request and returns its one answer (JSON or the last
// response of an SSE stream).
func (s *rawSession) call(method string, params any) (*mcp.Message, error) {
	resp, err := s.post(s.request(method, params), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
	}
	m, err := readAnswer(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	return m, nil
}

// readAnswer returns the response in a JSON body or the last response of
// an event stream.
func readAnswer(resp *http.Response) (*mcp.Message, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		if err != nil {
			return nil, err
		}
		return mcp.DecodeMessage(b)
	}
	st := newEventStream(resp)
	var last *mcp.Message
	for i := 0; i < maxEvents; i++ {
		_, m, err := st.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if last != nil {
				// The answer arrived; how the stream ended after it
				// is not what a scenario asks of this request.
				return last, nil
			}
			return nil, err
		}
		if m != nil && m.Kind() == mcp.KindResponse {
			last = m
		}
	}
	if last == nil {
		return nil, fmt.Errorf("the stream ended without a response")
	}
	return last, nil
}

// maxEvents bounds every loop over a stream's events.
const maxEvents = 10000

type eventStream struct {
	resp *http.Response
	r    *sse.Reader
}

func newEventStream(resp *http.Response) *eventStream {
	return &eventStream{resp: resp, r: sse.NewReader(resp.Body)}
}

// next returns the next event and its JSON-RPC message (nil for an event
// without data); io.EOF at the end of the stream.
func (st *eventStream) next() (sse.Event, *mcp.Message, error) {
	for {
		ev, err := st.r.Next()
		if err != nil {
			return ev, nil, err
		}
		if ev.Data == "" {
			if ev.HasID {
				return ev, nil, nil
			}
			continue
		}
		m, err := mcp.DecodeMessage([]byte(ev.Data))
		if err != nil {
			return ev, nil, fmt.Errorf("event %q: %w", ev.ID, err)
		}
		return ev, m, nil
	}
}

func (st *eventStream) close() { st.resp.Body.Close() }

// noRedirects is the HTTP client of every request the suite makes to the
// target: a redirect is the target's answer, judged as it is, never
// followed (following one would send the suite's traffic, unrecorded, to
// wherever the target points).
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
