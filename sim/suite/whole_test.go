package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// answerShortCallsWhole stands in front of h as a server whose first
// response comes after a short call's work, as a loaded machine makes
// the reference server do: a tools/call of slow_text with chunks less
// than 100 ms apart is answered as one JSON response, the call's final
// message, once its work has ended (SEP-1905, test scenario 3: a call
// whose work ended is answered whole).
func answerShortCallsWhole(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					IntervalMs *int `json:"intervalMs"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Method != "tools/call" || req.Params.Arguments.IntervalMs == nil || *req.Params.Arguments.IntervalMs >= 100 {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r) // returns once the stream has ended
		last := ""
		for line := range strings.Lines(rec.Body.String()) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				last = strings.TrimSpace(data)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, last)
	})
}

// TestStreamsOfShortCallsAnsweredWhole: a server that answers a short
// streaming call whole (its work ended before its first response) is not
// a server without event streams: http-resume and task-survives-stream
// make their calls again, longer, and judge their rules. Before, both
// were SKIP on such a server, and on a loaded machine on the reference
// server itself.
func TestStreamsOfShortCallsAnsweredWhole(t *testing.T) {
	h := streamhttp.NewHandler(server.New(nil), nil)
	defer h.Close()
	hs := httptest.NewServer(answerShortCallsWhole(h))
	defer hs.Close()
	res, err := RunSuite(context.Background(), Target{URL: hs.URL + streamhttp.DefaultPath}, &SuiteOptions{Scenarios: []string{"http-resume", "task-survives-stream"}, TraceDir: traceDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Scenarios {
		if r.Status != check.Pass {
			t.Errorf("%s: %s, want PASS\n%s", r.Name, r.Status, describe(res))
		}
	}
}
