package streamhttp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tasksim/tasksim/mcp"
)

// srvSyncEndpoint answers every request before Handle returns, so that a
// handler driven through httptest.NewRecorder never waits: "stream" sends
// two notifications and a response, "cancel" a nil final reply,
// "closeconn" closes the connection and answers, anything else echoes.
type srvSyncEndpoint struct{}

func (srvSyncEndpoint) NewSession(mcp.Outbox) mcp.Session { return srvSyncSession{} }

type srvSyncSession struct{}

func (srvSyncSession) Close() {}

func (srvSyncSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r == nil {
		return
	}
	switch msg.Method {
	case "stream":
		for range 2 {
			_ = r.Reply(ctx, &mcp.Message{Method: mcp.NotificationProgress, Params: msg.Params}, false)
		}
	case "cancel":
		_ = r.Reply(ctx, nil, true)
		return
	case "closeconn":
		r.(mcp.ConnectionCloser).CloseConnection()
	}
	_ = r.Reply(ctx, &mcp.Message{ID: msg.ID, Result: msg.Params}, true)
}

// FuzzPOST sends arbitrary bodies and headers to the POST handler. It must
// not panic and must answer with one of the statuses the transport uses.
func FuzzPOST(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`), "application/json, text/event-stream", "application/json", "2025-11-25", "", true, "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"a":[1,2]}}`), "*/*", "application/json; charset=utf-8", "", "http://localhost:3000", true, "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"initialize"}`), "application/json, text/event-stream", "application/json", "", "", false, "")
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`), "application/json, text/event-stream", "application/json", "", "", true, "")

	h := NewHandler(srvSyncEndpoint{}, &Options{MaxBodyBytes: 1 << 10, Logger: slog.New(slog.DiscardHandler)})
	defer h.Close()
	init := httptest.NewRecorder()
	initReq := httptest.NewRequest(http.MethodPost, DefaultPath, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`)))
	initReq.Header.Set("Accept", "application/json, text/event-stream")
	initReq.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(init, initReq)
	sid := init.Header().Get(headerSession)
	if init.Code != http.StatusOK || sid == "" {
		f.Fatalf("initialize: %d %q", init.Code, sid)
	}
	allowed := map[int]bool{200: true, 202: true, 400: true, 403: true, 404: true, 406: true, 413: true, 415: true}

	f.Fuzz(func(t *testing.T, body []byte, accept, contentType, version, origin string, withSession bool, otherSID string) {
		req := httptest.NewRequest(http.MethodPost, DefaultPath, bytes.NewReader(body))
		req.Header = http.Header{}
		for k, v := range map[string]string{"Accept": accept, "Content-Type": contentType, headerProtocol: version, "Origin": origin} {
			if v != "" {
				req.Header[k] = []string{v}
			}
		}
		if withSession {
			req.Header[headerSession] = []string{sid}
		} else if otherSID != "" {
			req.Header[headerSession] = []string{otherSID}
		}
		rec := httptest.NewRecorder()
		// A handler that hangs is caught by the test's -timeout, which
		// prints every goroutine's stack; no wall-clock bound here.
		h.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("status %d; body %q", rec.Code, rec.Body.String())
		}
		ct := rec.Header().Get("Content-Type")
		switch {
		case rec.Code == 202 && rec.Body.Len() != 0:
			t.Fatalf("202 with a body %q", rec.Body.String())
		case rec.Code != 202 && ct != "application/json" && ct != "text/event-stream":
			t.Fatalf("status %d with Content-Type %q", rec.Code, ct)
		case rec.Code >= 400 && srvErrorCodeOf(rec.Body.Bytes()) == 0:
			t.Fatalf("status %d without a JSON-RPC error: %q", rec.Code, rec.Body.String())
		}
		// Sessions the input made would pile up over the run.
		if made := rec.Header().Get(headerSession); made != "" && made != sid {
			del := httptest.NewRequest(http.MethodDelete, DefaultPath, nil)
			del.Header[headerSession] = []string{made}
			h.ServeHTTP(httptest.NewRecorder(), del)
		}
	})
}

// srvErrorCodeOf returns the error code of a JSON-RPC error body, 0 if none.
func srvErrorCodeOf(body []byte) int {
	m, err := mcp.DecodeMessage(body)
	if err != nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}
