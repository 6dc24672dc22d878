package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/tasksim/tasksim/clock"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
)

// The tests in this package drive the reference server over real HTTP, with
// a deliberately small client written here: it sees the raw wire (status
// codes, content types, SSE event ids) that a full client would hide.

// serve starts the reference server behind the Streamable HTTP transport.
func serve(t testing.TB, opts *server.Options) (string, *server.Server) {
	t.Helper()
	return refserver.Start(t, opts)
}

type client struct {
	t    testing.TB
	hc   *http.Client // nil: http.DefaultClient
	url  string
	sid  string
	next int64
}

// wantPartials declares tasks.streaming.partial.
var wantPartials = mcp.ClientCapabilities{Tasks: &mcp.TasksCapability{Streaming: &mcp.StreamingCapability{Partial: &mcp.Empty{}}}}

// connect initializes a session with the given capabilities.
func connect(t testing.TB, url string, caps mcp.ClientCapabilities) *client {
	t.Helper()
	return connectVia(t, nil, url, caps)
}

// connectVia is connect over hc (the in-memory transport, say).
func connectVia(t testing.TB, hc *http.Client, url string, caps mcp.ClientCapabilities) *client {
	t.Helper()
	c := &client{t: t, hc: hc, url: url}
	a := c.post(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion, Capabilities: caps, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}})
	if a.status != http.StatusOK || a.last().Error != nil {
		t.Fatalf("initialize: %d %v", a.status, a.last().Error)
	}
	c.sid = a.header.Get("Mcp-Session-Id")
	if c.sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	n, _ := mcp.NewNotification(mcp.NotificationInitialized, nil)
	if st := c.send(n).status; st != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d, want 202", st)
	}
	return c
}

type answer struct {
	status int
	header http.Header
	sse    bool
	msgs   []*mcp.Message
	ids    []string // SSE ids of the message events, in order
	body   []byte   // a JSON body
}

func (a *answer) last() *mcp.Message {
	if len(a.msgs) == 0 {
		return &mcp.Message{}
	}
	return a.msgs[len(a.msgs)-1]
}

// responses returns the answer's responses (not notifications).
func (a *answer) responses() []*mcp.Message {
	var out []*mcp.Message
	for _, m := range a.msgs {
		if m.Kind() == mcp.KindResponse {
			out = append(out, m)
		}
	}
	return out
}

func (c *client) request(method string, params any) *mcp.Message {
	c.next++
	msg, err := mcp.NewRequest(mcp.IntID(c.next), method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return msg
}

func (c *client) httpReq(method string, body []byte) *http.Request {
	req, err := http.NewRequest(method, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.LatestProtocolVersion)
	}
	return req
}

// post sends a request and reads its whole answer.
func (c *client) post(method string, params any) *answer {
	return c.send(c.request(method, params))
}

func (c *client) send(msg *mcp.Message) *answer {
	c.t.Helper()
	body, _ := msg.MarshalJSON()
	return c.do(c.httpReq(http.MethodPost, body))
}

func (c *client) do(req *http.Request) *answer {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.httpClient().Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatalf("%s: %v", req.Method, err)
	}
	defer resp.Body.Close()
	a := &answer{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		a.sse = true
		s := &stream{t: c.t, resp: resp, r: sse.NewReader(resp.Body)}
		for {
			m, id, err := s.nextWithID()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				c.t.Fatalf("read SSE answer: %v", err)
			}
			a.msgs = append(a.msgs, m)
			a.ids = append(a.ids, id)
		}
		return a
	}
	a.body, _ = io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(a.body)) > 0 {
		if m, err := mcp.DecodeMessage(a.body); err == nil {
			a.msgs = append(a.msgs, m)
		}
	}
	return a
}

// result posts a request and decodes its final result, failing on an error.
func result[T any](c *client, method string, params any) T {
	c.t.Helper()
	a := c.post(method, params)
	m := a.last()
	if m.Error != nil || m.Result == nil {
		c.t.Fatalf("%s: status %d, error %v", method, a.status, m.Error)
	}
	return decode[T](c.t, m.Result)
}

// rpcError posts a request and returns its JSON-RPC error, failing if none.
func rpcError(c *client, method string, params any) *mcp.Error {
	c.t.Helper()
	a := c.post(method, params)
	m := a.last()
	if m.Error == nil {
		c.t.Fatalf("%s: want a JSON-RPC error, got status %d result %s", method, a.status, m.Result)
	}
	return m.Error
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, raw, err)
	}
	return v
}

// stream reads an SSE answer event by event.
type stream struct {
	t      testing.TB
	resp   *http.Response
	r      *sse.Reader
	lastID string
	cancel context.CancelFunc
}

// open sends a request and returns its answer as a stream; it must be SSE.
func (c *client) open(method string, params any) *stream {
	c.t.Helper()
	body, _ := c.request(method, params).MarshalJSON()
	return c.openReq(c.httpReq(http.MethodPost, body))
}

// listen opens the session's standalone GET stream.
func (c *client) listen() *stream {
	c.t.Helper()
	return c.openReq(c.httpReq(http.MethodGet, nil))
}

// resume sends GET with Last-Event-ID.
func (c *client) resume(lastID string) *stream {
	c.t.Helper()
	req := c.httpReq(http.MethodGet, nil)
	req.Header.Set("Last-Event-ID", lastID)
	return c.openReq(req)
}

func (c *client) openReq(req *http.Request) *stream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.httpClient().Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		c.t.Fatalf("%s: %v", req.Method, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("%s: want an SSE stream, got %d %s: %s", req.Method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &stream{t: c.t, resp: resp, r: sse.NewReader(resp.Body), cancel: cancel}
	c.t.Cleanup(s.cut)
	return s
}

// nextWithID returns the next JSON-RPC message and its event id, skipping
// priming events (empty data). io.EOF when the stream ends.
func (s *stream) nextWithID() (*mcp.Message, string, error) {
	for {
		ev, err := s.r.Next()
		if err != nil {
			return nil, "", err
		}
		if ev.HasID {
			s.lastID = ev.ID
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		m, err := mcp.DecodeMessage([]byte(ev.Data))
		if err != nil {
			return nil, "", err
		}
		return m, ev.ID, nil
	}
}

func (s *stream) next() *mcp.Message {
	s.t.Helper()
	m, _, err := s.nextWithID()
	if err != nil {
		s.t.Fatalf("read SSE: %v", err)
	}
	return m
}

// rest reads until the server ends the stream.
func (s *stream) rest() []*mcp.Message {
	s.t.Helper()
	var out []*mcp.Message
	for {
		m, _, err := s.nextWithID()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			s.t.Fatalf("read SSE: %v", err)
		}
		out = append(out, m)
	}
}

// cut drops the connection, as a network failure would.
func (s *stream) cut() {
	if s.cancel != nil {
		s.cancel()
	}
	s.resp.Body.Close()
}

// collector gathers the messages of a stream in the background.
type collector struct {
	mu   sync.Mutex
	msgs []*mcp.Message
	more chan struct{}
	done chan struct{}
}

func collect(s *stream) *collector {
	c := &collector{more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			m, _, err := s.nextWithID()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
			select {
			case c.more <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

// waitFor waits until pred holds for the messages gathered so far.
func (c *collector) waitFor(t testing.TB, what string, pred func([]*mcp.Message) bool) []*mcp.Message {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		got := append([]*mcp.Message(nil), c.msgs...)
		c.mu.Unlock()
		if pred(got) {
			return got
		}
		select {
		case <-c.more:
		case <-c.done:
			c.mu.Lock()
			got = append([]*mcp.Message(nil), c.msgs...)
			c.mu.Unlock()
			if pred(got) {
				return got
			}
			t.Fatalf("stream ended before %s; got %d messages", what, len(got))
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %d messages", what, len(got))
		}
	}
}

func (c *collector) snapshot() []*mcp.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.Message(nil), c.msgs...)
}

// ofMethod filters notifications by method.
func ofMethod(msgs []*mcp.Message, method string) []*mcp.Message {
	var out []*mcp.Message
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// terminalStatus reports whether a notifications/tasks/status with a
// terminal status for task id is among msgs.
func terminalStatus(t testing.TB, msgs []*mcp.Message, id string) bool {
	for _, m := range ofMethod(msgs, mcp.NotificationTaskStatus) {
		p := decode[mcp.TaskStatusParams](t, m.Params)
		if p.TaskID == id && p.Status.IsTerminal() {
			return true
		}
	}
	return false
}

func texts(blocks []mcp.ContentBlock) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.Text
	}
	return out
}

func chunkTexts(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = server.ChunkText(i+1, size)
	}
	return out
}

// callParams builds tools/call params.
func callParams(tool string, args map[string]any, task *mcp.TaskParams) map[string]any {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	if task != nil {
		p["task"] = task
	}
	return p
}

func modes(m ...mcp.ResponseMode) *mcp.TaskParams { return &mcp.TaskParams{ResponseModes: m} }

func ptr[T any](v T) *T { return &v }

func (c *client) httpClient() *http.Client {
	if c.hc != nil {
		return c.hc
	}
	return http.DefaultClient
}

// advance moves the simulated clock by d once the synctest bubble is idle,
// so that every goroutine about to wait on the clock (a tool between two
// chunks) waits on it before it moves.
func advance(c *clock.Sim, d time.Duration) {
	synctest.Wait()
	c.Advance(d)
}

// advanceWhenIdle moves the simulated clock by d once every goroutine of
// the bubble but the caller's waits. Call it just before a request that
// waits on the clock: a streaming call's first answer waits for the
// immediate window.
func advanceWhenIdle(c *clock.Sim, d time.Duration) {
	go func() {
		synctest.Wait()
		c.Advance(d)
	}()
}
