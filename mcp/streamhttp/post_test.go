package streamhttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

func TestPOSTStatus(t *testing.T) {
	echo := rpcBody(1, "echo", `{"x":1}`)
	cases := []struct {
		name    string
		opts    *Options
		noSID   bool   // send no MCP-Session-Id
		sid     string // send this one instead of the session's
		body    string
		chunked bool // hide the length, so the limit is found while reading
		hdr     map[string]string
		status  int
		code    int // JSON-RPC error code of the body, 0 for none
		ct      string
	}{
		{name: "request answered as JSON", body: echo, status: 200, ct: "application/json"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202},
		{name: "response", body: `{"jsonrpc":"2.0","id":"s1","result":{}}`, status: 202},
		{name: "error response", body: `{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}`, status: 202},
		{name: "cancelled request", body: rpcBody(1, "cancel", ""), status: 202},

		{name: "Accept json only", body: echo, hdr: map[string]string{"Accept": "application/json"}, status: 406, code: codeTransport},
		{name: "Accept sse only", body: echo, hdr: map[string]string{"Accept": "text/event-stream"}, status: 406, code: codeTransport},
		{name: "Accept absent", body: echo, hdr: map[string]string{"Accept": ""}, status: 406, code: codeTransport},
		{name: "Accept q=0", body: echo, hdr: map[string]string{"Accept": "application/json, text/event-stream;q=0"}, status: 406, code: codeTransport},
		{name: "Accept */*", body: echo, hdr: map[string]string{"Accept": "*/*"}, status: 200, ct: "application/json"},
		{name: "Accept type wildcards", body: echo, hdr: map[string]string{"Accept": "application/*, text/*"}, status: 200, ct: "application/json"},

		{name: "Content-Type text/plain", body: echo, hdr: map[string]string{"Content-Type": "text/plain"}, status: 415, code: codeTransport},
		{name: "Content-Type absent", body: echo, hdr: map[string]string{"Content-Type": ""}, status: 415, code: codeTransport},
		{name: "Content-Type utf-8", body: echo, hdr: map[string]string{"Content-Type": "application/json; charset=UTF-8"}, status: 200, ct: "application/json"},
		{name: "Content-Type latin1", body: echo, hdr: map[string]string{"Content-Type": "application/json; charset=latin1"}, status: 415, code: codeTransport},

		{name: "body too large", opts: &Options{MaxBodyBytes: 64}, body: rpcBody(1, "echo", `{"pad":"`+strings.Repeat("x", 100)+`"}`), status: 413, code: codeTransport},
		{name: "body too large chunked", opts: &Options{MaxBodyBytes: 64}, chunked: true, body: rpcBody(1, "echo", `{"pad":"`+strings.Repeat("x", 100)+`"}`), status: 413, code: codeTransport},
		{name: "body at the limit", opts: &Options{MaxBodyBytes: int64(len(echo))}, chunked: true, body: echo, status: 200, ct: "application/json"},

		{name: "parse error", body: `{"jsonrpc":`, status: 400, code: mcp.CodeParseError},
		{name: "not JSON", body: `hello`, status: 400, code: mcp.CodeParseError},
		{name: "empty body", body: ``, status: 400, code: mcp.CodeParseError},
		{name: "invalid request", body: `{"id":1,"method":"echo"}`, status: 400, code: mcp.CodeInvalidRequest},
		{name: "batch", body: `[` + echo + `]`, status: 400, code: mcp.CodeInvalidRequest},

		{name: "no session id", noSID: true, body: echo, status: 400, code: codeTransport},
		{name: "notification without session id", noSID: true, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 400, code: codeTransport},
		{name: "unknown session", sid: "nosuchsession", body: echo, status: 404, code: codeTransport},

		{name: "unsupported protocol version", body: echo, hdr: map[string]string{"MCP-Protocol-Version": "1999-01-01"}, status: 400, code: codeTransport},
		{name: "absent protocol version", body: echo, hdr: map[string]string{"MCP-Protocol-Version": ""}, status: 200, ct: "application/json"},
		{name: "older protocol version", body: echo, hdr: map[string]string{"MCP-Protocol-Version": "2025-03-26"}, status: 200, ct: "application/json"},
		{name: "initialize ignores the version header", noSID: true, body: rpcBody(1, "initialize", "{}"), hdr: map[string]string{"MCP-Protocol-Version": "1999-01-01"}, status: 200, ct: "application/json"},

		{name: "foreign Origin", body: echo, hdr: map[string]string{"Origin": "http://evil.example.com"}, status: 403, code: codeTransport},
		{name: "null Origin", body: echo, hdr: map[string]string{"Origin": "null"}, status: 403, code: codeTransport},
		{name: "loopback Origin", body: echo, hdr: map[string]string{"Origin": "http://localhost:5173"}, status: 200, ct: "application/json"},
		{name: "allowed Origin", opts: &Options{AllowedOrigins: []string{"https://app.example.com"}}, body: echo, hdr: map[string]string{"Origin": "https://app.example.com"}, status: 200, ct: "application/json"},
		{name: "foreign Host on loopback", body: echo, hdr: map[string]string{"Host": "evil.example.com"}, status: 403, code: codeTransport},
		{name: "rebinding initialize", noSID: true, body: rpcBody(1, "initialize", "{}"), hdr: map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}, status: 403, code: codeTransport},
		{name: "allowed Host", opts: &Options{AllowedHosts: []string{"mcp.internal"}}, body: echo, hdr: map[string]string{"Host": "mcp.internal:8080"}, status: 200, ct: "application/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srvTest(t, func(t *testing.T) {
				f := newSrvFixture(t, tc.opts)
				sid, _ := f.initSession()
				switch {
				case tc.noSID:
					sid = ""
				case tc.sid != "":
					sid = tc.sid
				}
				req := f.newPOST(sid, tc.body, tc.hdr)
				if tc.chunked {
					req.Body = io.NopCloser(struct{ io.Reader }{strings.NewReader(tc.body)})
					req.ContentLength = -1
				}
				resp := f.do(req)
				body := bodyString(t, resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
				}
				if got := bodyErrorCode(t, body); got != tc.code {
					t.Errorf("JSON-RPC error code %d, want %d; body %s", got, tc.code, body)
				}
				if tc.ct != "" && resp.Header.Get("Content-Type") != tc.ct {
					t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), tc.ct)
				}
				if tc.status == 202 && body != "" {
					t.Errorf("202 with body %q", body)
				}
				if tc.code == mcp.CodeParseError && !strings.Contains(body, `"id":null`) {
					t.Errorf("parse error body without a null id: %s", body)
				}
			})
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodOptions, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			srvTest(t, func(t *testing.T) {
				f := newSrvFixture(t, nil)
				req, err := http.NewRequest(method, f.url, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp := f.do(req)
				bodyString(t, resp)
				if resp.StatusCode != http.StatusMethodNotAllowed {
					t.Errorf("status %d, want 405", resp.StatusCode)
				}
				if got := resp.Header.Get("Allow"); got != "GET, POST, DELETE" {
					t.Errorf("Allow %q", got)
				}
			})
		})
	}
}

func TestInitialize(t *testing.T) {
	t.Run("session ids", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			seen := map[string]bool{}
			for range 20 {
				sid, _ := f.initSession()
				if len(sid) < 22 { // 128 bits in base64 or more
					t.Fatalf("session id %q is short", sid)
				}
				for i := 0; i < len(sid); i++ {
					if sid[i] < 0x21 || sid[i] > 0x7e {
						t.Fatalf("session id %q has a byte outside visible ASCII", sid)
					}
				}
				if seen[sid] {
					t.Fatalf("session id %q given twice", sid)
				}
				seen[sid] = true
			}
		})
	})
	t.Run("failed initialize discards the session", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			resp := f.post("", rpcBody(1, "initialize", `{"fail":true}`))
			body := bodyString(t, resp)
			if resp.StatusCode != 200 || bodyErrorCode(t, body) != mcp.CodeInvalidParams {
				t.Fatalf("%s %s", resp.Status, body)
			}
			if sid := resp.Header.Get("MCP-Session-Id"); sid != "" {
				t.Errorf("failed initialize gave session id %q", sid)
			}
			s := f.nextSession()
			await(t, s.closed, "the close of the session of a failed initialize")
		})
	})
	t.Run("failed initialize over SSE discards the session", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			resp := f.post("", rpcBody(1, "initialize", `{"fail":true,"stream":true}`))
			sid := resp.Header.Get("MCP-Session-Id")
			c := srvOpenSSE(t, resp)
			c.next() // priming
			if _, m := c.message(); m.Method != mcp.NotificationMessage {
				t.Fatalf("first message %+v", m)
			}
			if _, m := c.message(); m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
				t.Fatalf("final message %+v", m)
			}
			c.end()
			await(t, f.nextSession().closed, "the close of the session of a failed initialize")
			resp = f.post(sid, rpcBody(2, "echo", ""))
			if bodyString(t, resp); resp.StatusCode != http.StatusNotFound {
				t.Errorf("request in the failed session: %s, want 404", resp.Status)
			}
		})
	})
	t.Run("initialize in an existing session", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, _ := f.initSession()
			resp := f.post(sid, rpcBody(1, "initialize", "{}"))
			body := bodyString(t, resp)
			if resp.StatusCode != 200 || resp.Header.Get("MCP-Session-Id") != sid {
				t.Fatalf("%s session %q: %s", resp.Status, resp.Header.Get("MCP-Session-Id"), body)
			}
			select {
			case s := <-f.ep.sessions:
				t.Fatalf("a second initialize made a new session %p", s)
			default:
			}
		})
	})
}

func TestAnswerShape(t *testing.T) {
	t.Run("final first is JSON", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, _ := f.initSession()
			resp := f.post(sid, rpcBody(7, "echo", `{"a":"b"}`))
			body := bodyString(t, resp)
			if resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("MCP-Session-Id") != sid {
				t.Fatalf("headers %v", resp.Header)
			}
			m := decodeMsg(t, body)
			if id, _ := m.ID.Int(); id != 7 || string(m.Result) != `{"a":"b"}` {
				t.Errorf("answer %s", body)
			}
		})
	})
	t.Run("non-final first is SSE", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			s.release(3)
			resp := f.post(sid, rpcBody(7, "stream", `{"n":2}`))
			if resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("MCP-Session-Id") != sid {
				t.Fatalf("headers %v", resp.Header)
			}
			c := srvOpenSSE(t, resp)
			it := c.item()
			if it.err != nil || it.ev.ID != "1_0" || !it.ev.HasID || it.ev.Data != "" || it.ev.Retry != DefaultRetry {
				t.Fatalf("priming event %+v (err %v), want id 1_0, empty data, retry 1s", it.ev, it.err)
			}
			for i := range 2 {
				id, m := c.message()
				if want := "1_" + string(rune('1'+i)); id != want || srvProgressIndex(m) != i {
					t.Fatalf("event %d: id %s message %+v, want id %s", i, id, m, want)
				}
			}
			id, m := c.message()
			if got, _ := m.ID.Int(); id != "1_3" || got != 7 || string(m.Result) != `{"n":2}` {
				t.Fatalf("final: id %s message %+v", id, m)
			}
			c.end()
		})
	})
	t.Run("cancelled after messages ends the stream", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			s.release(2)
			c := srvOpenSSE(t, f.post(sid, rpcBody(7, "stream", `{"n":1,"cancel":true}`)))
			c.next()
			if _, m := c.message(); srvProgressIndex(m) != 0 {
				t.Fatalf("message %+v", m)
			}
			c.end()
		})
	})
	t.Run("no priming retry when Retry is negative", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, &Options{Retry: -1})
			sid, s := f.initSession()
			s.release(2)
			c := srvOpenSSE(t, f.post(sid, rpcBody(7, "stream", `{"n":1}`)))
			if ev := c.next(); ev.ID != "1_0" || ev.HasRetry {
				t.Fatalf("priming event %+v", ev)
			}
		})
	})
}

func TestClientLeavesBeforeFirstReply(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		f := newSrvFixture(t, nil)
		sid, s := f.initSession()
		req := f.newPOST(sid, rpcBody(1, "stream", `{"n":1}`), nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			resp, err := f.client.Do(req.WithContext(ctx))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		for m := range s.handled { // the server got the request
			if m == "stream" {
				break
			}
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled POST succeeded")
		}
		s.release(2)
		srvWaitReply(t, s) // the notification: Reply must not fail
		srvWaitReply(t, s) // the final one
		resp := f.post(sid, rpcBody(2, "echo", ""))
		if bodyString(t, resp); resp.StatusCode != 200 {
			t.Fatalf("session after a client left: %s", resp.Status)
		}
	})
}

func TestDelete(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		f := newSrvFixture(t, nil)
		sid, s := f.initSession()
		g := srvOpenSSE(t, f.get(sid, "", nil))
		g.next() // priming
		if resp := f.delete(""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("DELETE without session: %s", resp.Status)
		}
		if resp := f.delete(sid); resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE: %s", resp.Status)
		}
		await(t, s.closed, "Session.Close")
		g.end()
		if resp := f.post(sid, rpcBody(1, "echo", "")); bodyString(t, resp) == "" || resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST after DELETE: %s", resp.Status)
		}
		if resp := f.get(sid, "", nil); bodyString(t, resp) == "" || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET after DELETE: %s", resp.Status)
		}
		if resp := f.delete(sid); resp.StatusCode != http.StatusNotFound {
			t.Errorf("second DELETE: %s", resp.Status)
		}
		if err := s.out.Send(t.Context(), &mcp.Message{Method: "x"}); err != ErrSessionClosed {
			t.Errorf("Send after DELETE: %v, want ErrSessionClosed", err)
		}
	})
}

func TestHandlerClose(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		f := newSrvFixture(t, nil)
		sid, s := f.initSession()
		g := srvOpenSSE(t, f.get(sid, "", nil))
		g.next()
		f.h.Close()
		g.end()
		await(t, s.closed, "Session.Close")
		if resp := f.post(sid, rpcBody(1, "echo", "")); bodyString(t, resp) == "" || resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST after Close: %s", resp.Status)
		}
		if resp := f.post("", rpcBody(1, "initialize", "{}")); bodyString(t, resp) == "" || resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("initialize after Close: %s", resp.Status)
		}
	})
}

// Sessions served at once keep apart: each sees its own answers and its
// own Outbox messages.
func TestConcurrentSessions(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		f := newSrvFixture(t, nil)
		var wg sync.WaitGroup
		for n := range 8 {
			wg.Go(func() {
				if err := concurrentSession(f, n); err != nil {
					t.Errorf("session %d: %v", n, err)
				}
			})
		}
		wg.Wait()
	})
}

// concurrentSession runs one session of TestConcurrentSessions. It runs on
// a goroutine of its own, so it reports failures as errors.
func concurrentSession(f *srvFixture, n int) error {
	do := func(sid, body string) (*http.Response, string, error) {
		resp, err := f.client.Do(f.newPOST(sid, body, nil))
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	resp, _, err := do("", rpcBody(0, "initialize", "{}"))
	if err != nil {
		return err
	}
	sid := resp.Header.Get("MCP-Session-Id")
	tag := fmt.Sprintf(`{"tag":"%s"}`, sid)
	for i := range 20 {
		_, body, err := do(sid, rpcBody(i, "echo", tag))
		if err != nil {
			return err
		}
		if m, err := mcp.DecodeMessage([]byte(body)); err != nil || string(m.Result) != tag {
			return fmt.Errorf("echo in session %s got %s (%v)", sid, body, err)
		}
	}
	// Outbox messages reach their own session's stream only.
	req, _ := http.NewRequest(http.MethodGet, f.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Session-Id", sid)
	g, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer g.Body.Close()
	rd := sse.NewReader(g.Body)
	if _, err := rd.Next(); err != nil { // priming: the stream is attached
		return err
	}
	if _, body, err := do(sid, rpcBody(100, "send", `{"n":3,"tag":"`+sid+`"}`)); err != nil || !strings.Contains(body, `"result"`) {
		return fmt.Errorf("send: %s (%v)", body, err)
	}
	for range 3 {
		ev, err := rd.Next()
		if err != nil {
			return err
		}
		if !strings.Contains(ev.Data, sid) {
			return fmt.Errorf("session %s got outbox message %s (session %d)", sid, ev.Data, n)
		}
	}
	return nil
}
