package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/sim/check"
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
