package suite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestHTTPResumeBase: http-resume runs on a server without SEP-1905 that
// answers calls as event streams with ids (resumption is base Streamable
// HTTP). The reference server passes it, both rules judged; with events
// of other streams in its replays (plant.ReplayOtherStreams, as
// modelcontextprotocol/servers#4087) it fails HTTP-RESUME-SAME-STREAM
// and no other rule.
func TestHTTPResumeBase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wrap    func(http.Handler) http.Handler
		status  check.Status
		failing []string
	}{
		{"reference", func(h http.Handler) http.Handler { return h }, check.Pass, nil},
		{"replays other streams", plant.ReplayOtherStreams, check.Fail, []string{"HTTP-RESUME-SAME-STREAM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := streamhttp.NewHandler(server.New(&server.Options{NoModes: true}), nil)
			defer h.Close()
			hs := httptest.NewServer(tc.wrap(h))
			defer hs.Close()
			res, err := RunSuite(context.Background(), Target{URL: hs.URL + streamhttp.DefaultPath}, &SuiteOptions{Scenarios: []string{"http-resume"}, TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Scenarios[0]
			if r.Status != tc.status || !slices.Equal(r.Failed(), tc.failing) {
				t.Fatalf("%s, failed %v; want %s, failed %v\n%s", r.Status, r.Failed(), tc.status, tc.failing, describe(res))
			}
			for _, id := range []string{"HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE"} {
				if o, _ := r.Rule(id); o.Status == check.Skip || o.Checked == 0 {
					t.Errorf("%s not judged: %s %q\n%s", id, o.Status, o.Why, describe(res))
				}
			}
		})
	}
}

// TestHTTPResumeGETStream: against a server that answers every POST as
// JSON (as mcp-go does for tools/call), the one stream to resume is the
// standalone GET stream, where the task status notifications go: the
// base spec's resumption "applies regardless of how the original stream
// was initiated (via POST or GET)". http-resume cuts and resumes it and
// judges both resume rules; a server whose GET replay carries other
// streams' events fails HTTP-RESUME-SAME-STREAM or HTTP-RESUME-COMPLETE,
// and no other rule.
func TestHTTPResumeGETStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wrap   func(http.Handler) http.Handler
		status check.Status
		judged []string // rules judged with the scenario's status
	}{
		{"reference", func(h http.Handler) http.Handler { return h }, check.Pass, []string{"HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE", "HTTP-EVENT-ID-UNIQUE"}},
		{"replays nothing", replaysNothing, check.Warn, []string{"HTTP-RESUME-COMPLETE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := streamhttp.NewHandler(server.New(&server.Options{NoModes: true}), nil)
			defer h.Close()
			hs := httptest.NewServer(tc.wrap(jsonAnswers(h)))
			defer hs.Close()
			res, err := RunSuite(context.Background(), Target{URL: hs.URL + streamhttp.DefaultPath}, &SuiteOptions{Scenarios: []string{"http-resume"}, TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Scenarios[0]
			if r.Status != tc.status || len(r.Failed()) > 0 {
				t.Fatalf("%s (%s), failed %v; want %s\n%s", r.Status, r.Why, r.Failed(), tc.status, describe(res))
			}
			for _, id := range tc.judged {
				if o, _ := r.Rule(id); o.Status != tc.status || o.Checked == 0 {
					t.Errorf("%s %s %q, want %s\n%s", id, o.Status, o.Why, tc.status, describe(res))
				}
			}
		})
	}
}

// jsonAnswers makes h answer every POST with its one JSON-RPC response
// as application/json (what h would send as an event stream: the last
// response on it), as a server without POST streams does; other
// messages h sent on that stream are dropped, and GET passes untouched.
func jsonAnswers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		resp := rec.Result()
		for k, v := range resp.Header {
			if k != "Content-Type" && k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		if !isEventStream(resp) {
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.WriteHeader(resp.StatusCode)
			w.Write(rec.Body.Bytes())
			return
		}
		m, err := readAnswer(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b, _ := json.Marshal(m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
	})
}

// replaysNothing answers every resumption (GET with Last-Event-ID) with
// an event stream that ends at once, empty: the events after that id are
// lost.
func replaysNothing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			return
		}
		h.ServeHTTP(w, r)
	})
}
