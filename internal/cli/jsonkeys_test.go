package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// snakeKey is a snake_case key; every JSON tasksim writes uses camelCase,
// like the protocol (HAR's own "_exchange"-style custom fields aside).
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)+$`)

// snakeKeys returns the snake_case keys anywhere in a JSON document.
func snakeKeys(v any, path string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if snakeKey.MatchString(k) {
				*out = append(*out, path+"."+k)
			}
			snakeKeys(c, path+"."+k, out)
		}
	case []any:
		for _, c := range x {
			snakeKeys(c, path+"[]", out)
		}
	}
}

// TestJSONKeysCamelCase: the JSON of call --json, load --json, trace
// stats, verify, show and export (JSONL, line by line) has one key style,
// camelCase. trace stats and verify wrote duration_ns, raw_bytes,
// in_header; JSONL exports wrote offset_ns, task_id.
func TestJSONKeysCamelCase(t *testing.T) {
	url := referenceServer(t)
	const trace = "../../traces/testdata/v1.trace"
	for _, tc := range []struct {
		name  string
		args  []string
		lines bool
	}{
		{"call", []string{"call", "--server", url, "--tool", "slow_text", "--args", `{"chunks":2,"intervalMs":5}`, "--mode", "partial", "--json"}, false},
		{"load", []string{"load", "--in-process", "--mode", "sse,poll:20ms", "--rate", "40", "--tasks", "2", "--max-lag", "1h", "--task-duration", "10ms", "--json", "-"}, false},
		{"trace stats", []string{"trace", "stats", "--json", trace}, false},
		{"trace verify", []string{"trace", "verify", "--json", trace}, false},
		{"trace show", []string{"trace", "show", "--json", trace}, false},
		{"trace export", []string{"trace", "export", "--format", "jsonl", trace}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			docs := []string{stdout}
			if tc.lines {
				docs = strings.Split(strings.TrimSpace(stdout), "\n")
			}
			var bad []string
			for i, d := range docs {
				var v any
				if err := json.Unmarshal([]byte(d), &v); err != nil {
					t.Fatalf("not JSON: %v\n%.300s", err, d)
				}
				snakeKeys(v, "$", &bad)
				// Each output says which versioned layout it is.
				if m, ok := v.(map[string]any); ok && i == 0 {
					_, schema := m["schema"]
					_, header := m["header"]
					if !schema && !header {
						t.Errorf("no schema (nor a trace header with formatVersion) in %.100s", d)
					}
				}
			}
			if len(bad) > 0 {
				t.Errorf("snake_case keys: %v", bad)
			}
		})
	}
}
