package streamhttp_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// BenchmarkStatelessToolsCall measures one 2026-07-28 tools/call POST
// (echo, answered as JSON) through the Handler and the reference server,
// without the network: what the transport and the server spend reading,
// checking and answering a stateless request.
//
//	go test -run '^$' -bench StatelessToolsCall -count 6 ./mcp/streamhttp
func BenchmarkStatelessToolsCall(b *testing.B) {
	srv := server.New(nil)
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
	header := http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"echo"},
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, streamhttp.DefaultPath, strings.NewReader(body))
		req.Header = header.Clone()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "hello") {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
