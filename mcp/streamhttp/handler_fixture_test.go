package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// The server tests run inside testing/synctest bubbles (srvTest): the
// handler is reached through the in-memory transport and times its
// connections on a clock.Sim that only the test moves. Whatever the server
// will do without more input is done once every goroutine of the bubble
// waits (synctest.Wait), so a test asks for what must have happened and
// never waits for it to happen in time.

// srvTest runs f in a bubble.
func srvTest(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// srvEpoch is where a fixture's clock starts.
var srvEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// srvLoopback is the local address of the fixture's requests: the server
// sees them arrive on a loopback listener, as from httptest.NewServer, so
// the Host check of the DNS-rebinding defence applies.
var srvLoopback net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}

// srvFixture is a Handler over a stubEndpoint, reached in memory. Make it
// inside a bubble.
type srvFixture struct {
	t      *testing.T
	h      *Handler
	ep     *stubEndpoint
	clock  *clock.Sim
	url    string
	client *http.Client
}

func newSrvFixture(t *testing.T, opts *Options) *srvFixture {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sim := clock.NewSim(srvEpoch)
	if o.Clock == nil {
		o.Clock = sim
	}
	ep := newStubEndpoint()
	h := NewHandler(ep, &o)
	t.Cleanup(h.Close) // ends the SSE responses and the expiry goroutine
	onLoopback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, srvLoopback)))
	})
	return &srvFixture{
		t: t, h: h, ep: ep, clock: sim,
		url:    "http://127.0.0.1" + DefaultPath,
		client: &http.Client{Transport: NewMemoryTransport(onLoopback)},
	}
}

// await returns the next value of ch. If none is there, it lets every
// other goroutine of the bubble run until it waits, and looks again.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	default:
	}
	synctest.Wait()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatalf("%s: nothing came, and every goroutine waits", what)
		var zero T
		return zero
	}
}

// advance moves the fixture's clock by d, one timer at a time, letting the
// bubble settle after each: a goroutine woken by a timer re-arms the next
// one before time moves on, as it would on the wall clock.
func (f *srvFixture) advance(d time.Duration) {
	end := f.clock.Now().Add(d)
	for {
		synctest.Wait()
		next, ok := f.clock.Next()
		if !ok || next.After(end) {
			break
		}
		f.clock.AdvanceTo(next)
	}
	f.clock.AdvanceTo(end)
	synctest.Wait()
}

// rpc returns the JSON of a request.
func rpcBody(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// newPOST builds a POST of body with the headers a good client sends;
// hdr overrides them ("" deletes one; "Host" sets the request's Host).
func (f *srvFixture) newPOST(sid, body string, hdr map[string]string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", mcp.LatestProtocolVersion)
	if sid != "" {
		req.Header.Set("MCP-Session-Id", sid)
	}
	applyHeaders(req, hdr)
	return req
}

func applyHeaders(req *http.Request, hdr map[string]string) {
	for k, v := range hdr {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
}

func (f *srvFixture) do(req *http.Request) *http.Response {
	f.t.Helper()
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatalf("%s: %v", req.Method, err)
	}
	return resp
}

func (f *srvFixture) post(sid, body string) *http.Response {
	f.t.Helper()
	return f.do(f.newPOST(sid, body, nil))
}

// get opens a GET; lastID "" opens the standalone stream.
func (f *srvFixture) get(sid, lastID string, hdr map[string]string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.LatestProtocolVersion)
	if sid != "" {
		req.Header.Set("MCP-Session-Id", sid)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	applyHeaders(req, hdr)
	return f.do(req)
}

func (f *srvFixture) delete(sid string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodDelete, f.url, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if sid != "" {
		req.Header.Set("MCP-Session-Id", sid)
	}
	resp := f.do(req)
	resp.Body.Close()
	return resp
}

// initSession initializes a session and returns its id and stub.
func (f *srvFixture) initSession() (string, *stubSession) {
	f.t.Helper()
	resp := f.post("", rpcBody(0, "initialize", ""))
	body := bodyString(f.t, resp)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("initialize: %s: %s", resp.Status, body)
	}
	sid := resp.Header.Get("MCP-Session-Id")
	if sid == "" {
		f.t.Fatal("initialize: no MCP-Session-Id")
	}
	return sid, f.nextSession()
}

func (f *srvFixture) nextSession() *stubSession {
	f.t.Helper()
	return await(f.t, f.ep.sessions, "a new session")
}

func bodyString(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

// decode parses one JSON-RPC message.
func decodeMsg(t *testing.T, data string) *mcp.Message {
	t.Helper()
	m, err := mcp.DecodeMessage([]byte(data))
	if err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return m
}

// errorCode returns the JSON-RPC error code of a body, 0 if none.
func bodyErrorCode(t *testing.T, body string) int {
	t.Helper()
	var v struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Error == nil {
		return 0
	}
	return v.Error.Code
}

// srvWaitReply waits for the next Reply of a gated request and checks that
// it succeeded.
func srvWaitReply(t *testing.T, s *stubSession) stubReply {
	t.Helper()
	r := await(t, s.replied, "a reply of the endpoint")
	if r.err != nil {
		t.Fatalf("Reply %d failed: %v", r.i, r.err)
	}
	return r
}

// srvSSE reads an SSE response on its own goroutine.
type srvSSE struct {
	t     *testing.T
	resp  *http.Response
	items chan srvSSEItem
}

type srvSSEItem struct {
	ev       sse.Event
	err      error // io.EOF at the end
	retry    time.Duration
	hasRetry bool
}

func srvOpenSSE(t *testing.T, resp *http.Response) *srvSSE {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE: %s: %s", resp.Status, bodyString(t, resp))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("SSE: Content-Type %q", ct)
	}
	c := &srvSSE{t: t, resp: resp, items: make(chan srvSSEItem, 1024)}
	go func() {
		rd := sse.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			retry, has := rd.Retry()
			c.items <- srvSSEItem{ev: ev, err: err, retry: retry, hasRetry: has}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return c
}

func (c *srvSSE) item() srvSSEItem {
	c.t.Helper()
	return await(c.t, c.items, "SSE event")
}

// none checks that nothing more came on the stream, once everything waits.
func (c *srvSSE) none() {
	c.t.Helper()
	synctest.Wait()
	select {
	case it := <-c.items:
		c.t.Fatalf("SSE: want nothing yet, got event %+v err %v", it.ev, it.err)
	default:
	}
}

// next returns the next event; the stream must not end.
func (c *srvSSE) next() sse.Event {
	c.t.Helper()
	it := c.item()
	if it.err != nil {
		c.t.Fatalf("SSE: want an event, got %v", it.err)
	}
	return it.ev
}

// message returns the next event, which must be a message.
func (c *srvSSE) message() (string, *mcp.Message) {
	c.t.Helper()
	ev := c.next()
	if ev.Name != "message" || !ev.HasID || ev.ID == "" {
		c.t.Fatalf("SSE: want a message event with an id, got %+v", ev)
	}
	return ev.ID, decodeMsg(c.t, ev.Data)
}

// end expects the stream to end cleanly and returns the last item.
func (c *srvSSE) end() srvSSEItem {
	c.t.Helper()
	it := c.item()
	if it.err != io.EOF {
		c.t.Fatalf("SSE: want the end, got event %+v err %v", it.ev, it.err)
	}
	return it
}

// cut closes the connection from the client side.
func (c *srvSSE) cut() { c.resp.Body.Close() }

// srvProgressIndex returns the "i" of a progress notification, -1 otherwise.
func srvProgressIndex(m *mcp.Message) int {
	if m.Method != mcp.NotificationProgress {
		return -1
	}
	var p struct{ I int }
	if json.Unmarshal(m.Params, &p) != nil {
		return -1
	}
	return p.I
}
