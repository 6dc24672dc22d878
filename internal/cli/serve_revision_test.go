package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// TestServeRevision: --revision chooses the eras the endpoint serves; a
// request of the other era gets -32022 naming the versions served, and a
// bad value is a usage error.
func TestServeRevision(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	stateless := map[string]string{rev.HeaderProtocolVersion: rev.ProtocolVersion, rev.HeaderMethod: rev.MethodServerDiscover}
	cases := []struct {
		revision     string
		body         string
		hdr          map[string]string
		status, code int      // code 0: a result
		supported    []string // of a -32022
	}{
		{"both", initialize, nil, http.StatusOK, 0, nil},
		{"both", discover, stateless, http.StatusOK, 0, nil},
		{"2025-11-25", initialize, nil, http.StatusOK, 0, nil},
		{"2025-11-25", discover, stateless, http.StatusBadRequest, rev.CodeUnsupportedProtocolVersion, mcp.SupportedProtocolVersions()},
		{"2026-07-28", initialize, nil, http.StatusBadRequest, rev.CodeUnsupportedProtocolVersion, []string{rev.ProtocolVersion}},
		{"2026-07-28", discover, stateless, http.StatusOK, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.revision+" "+strings.SplitN(strings.SplitN(tc.body, `"method":"`, 2)[1], `"`, 2)[0], func(t *testing.T) {
			url, _, _ := serveReady(t, "--log-level", "error", "--revision", tc.revision)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			m, err := mcp.DecodeMessage(body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.code == 0 {
				if m.Error != nil {
					t.Fatalf("error %+v, want a result", m.Error)
				}
				return
			}
			if m.Error == nil || m.Error.Code != tc.code {
				t.Fatalf("answer %s, want error %d", body, tc.code)
			}
			var data rev.UnsupportedVersionData
			if err := json.Unmarshal(m.Error.Data, &data); err != nil {
				t.Fatal(err)
			}
			if strings.Join(data.Supported, ",") != strings.Join(tc.supported, ",") {
				t.Errorf("supported %q, want %q", data.Supported, tc.supported)
			}
		})
	}
	t.Run("bad value", func(t *testing.T) {
		code, _, stderr := run(t, "", "serve", "--revision", "2024-01-01")
		if code != ExitUsage || !strings.Contains(stderr, "--revision") {
			t.Errorf("exit %d, stderr %q: want %d naming --revision", code, stderr, ExitUsage)
		}
	})
}
