package rev20260728_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The examples of the spec in testdata are copied verbatim from the texts;
// each file's first line names its source and section. Some are JSONC
// (comments, trailing commas); readExample strips those.

var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// readExample returns the JSON of a testdata file: its lines that are not
// // comments, without trailing commas.
func readExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("//")) {
			out = append(out, line...)
		}
	}
	return trailingComma.ReplaceAll(out, []byte("$1"))
}

// validator is what the typed values whose shape the spec constrains
// implement.
type validator interface{ Validate() error }

// typed decodes raw into a new T and returns it.
func typed[T any](raw json.RawMessage) (any, error) {
	v := new(T)
	err := json.Unmarshal(raw, v)
	return v, err
}

type decoder func(json.RawMessage) (any, error)

// example is one spec example: the typed value its params, result or error
// data decodes into, whether that value is valid (for the types with
// Validate) and, for a request, which _meta field DecodeRequestMeta finds
// missing ("" when none).
type example struct {
	file        string
	decode      decoder
	invalid     bool
	missingMeta string
}

var examples = []example{
	// Core: server/discover.
	{file: "core/discover-request.jsonc", decode: typed[rev.DiscoverParams]},
	{file: "core/discover-response.jsonc", decode: typed[rev.DiscoverResult]},
	{file: "core/schema-discover-result-response.jsonc", decode: typed[rev.DiscoverResult]},
	// Core: tools/call with the per-request _meta.
	{file: "core/schema-call-tool-request.jsonc", decode: typed[rev.CallToolParams]},
	// The _meta section's trace-context example is about traceparent
	// only: as a request it lacks the required fields.
	{file: "core/tools-call-traceparent-only.jsonc", decode: typed[rev.CallToolParams], missingMeta: rev.MetaProtocolVersion},
	// Core: multi round-trip requests.
	{file: "core/input-required-result.jsonc", decode: typed[rev.InputRequiredResult]},
	// Core: subscriptions/listen, both the page's and the schema's.
	{file: "core/listen-request.jsonc", decode: typed[rev.ListenParams]},
	{file: "core/listen-acknowledged.jsonc", decode: typed[rev.AcknowledgedParams]},
	{file: "core/listen-resource-updated.jsonc", decode: typed[rev.ResourceUpdatedParams]},
	{file: "core/listen-closed.jsonc", decode: typed[rev.ListenResult]},
	{file: "core/schema-listen-request.jsonc", decode: typed[rev.ListenParams]},
	{file: "core/schema-listen-acknowledged.jsonc", decode: typed[rev.AcknowledgedParams]},
	{file: "core/schema-listen-closed-response.jsonc", decode: typed[rev.ListenResult]},
	{file: "core/schema-tools-list-changed.jsonc", decode: typed[rev.ListChangedParams]},
	// Core: errors.
	{file: "core/header-mismatch-error.jsonc"},
	{file: "core/unsupported-version-error.jsonc", decode: typed[rev.UnsupportedVersionData]},
	{file: "core/schema-missing-elicitation-capability-error.jsonc", decode: typed[rev.MissingCapabilityData]},

	// Tasks extension. Its requests leave _meta out (the first) or carry
	// only the capabilities (the flow's tools/call): as requests of this
	// revision they lack required fields.
	{file: "tasks/capability-required-error.jsonc", decode: typed[rev.MissingCapabilityData]},
	{file: "tasks/create-request.jsonc", decode: typed[rev.CallToolParams], missingMeta: "_meta"},
	{file: "tasks/create-result.jsonc", decode: typed[tasks.CreateTaskResult]},
	{file: "tasks/listen-missing-capability-error.jsonc", decode: typed[rev.MissingCapabilityData]},
	{file: "tasks/status-notification.jsonc", decode: typed[tasks.StatusParams]},
	{file: "tasks/flow-02-call.jsonc", decode: typed[rev.CallToolParams], missingMeta: rev.MetaProtocolVersion},
	{file: "tasks/flow-02-create-result.jsonc", decode: typed[tasks.CreateTaskResult]},
	{file: "tasks/flow-03-get.jsonc", decode: typed[tasks.GetTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-03-working.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/flow-04-get.jsonc", decode: typed[tasks.GetTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-04-input-required.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/flow-05-get.jsonc", decode: typed[tasks.GetTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-05-input-required-again.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/flow-06-update.jsonc", decode: typed[tasks.UpdateTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-06-update-ack.jsonc", decode: typed[tasks.Ack]},
	{file: "tasks/flow-07-get.jsonc", decode: typed[tasks.GetTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-07-working.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/flow-08-get.jsonc", decode: typed[tasks.GetTaskParams], missingMeta: "_meta"},
	{file: "tasks/flow-08-completed.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/error-task-not-found.jsonc"},
	{file: "tasks/error-task-expired.jsonc"},
	{file: "tasks/failed-task.jsonc", decode: typed[tasks.GetTaskResult]},
	{file: "tasks/tool-error-completed.jsonc", decode: typed[tasks.GetTaskResult]},
}

// TestSpecExamplesRoundTrip decodes every example message into the
// envelope and its typed params, result or error data, encodes it back and
// compares the two as parsed JSON: a member the types drop, rename or add
// fails it.
func TestSpecExamplesRoundTrip(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			in := readExample(t, ex.file)
			msg, err := mcp.DecodeMessage(in)
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			out := roundTrip(t, ex, msg)
			if d := cmp.Diff(parse(t, in), parse(t, out)); d != "" {
				t.Errorf("re-encoded message differs (-spec +tasksim):\n%s", d)
			}
			if msg.Kind() == mcp.KindRequest {
				checkMissingMeta(t, msg.Params, ex.missingMeta)
			}
		})
	}
}

func roundTrip(t *testing.T, ex example, msg *mcp.Message) []byte {
	t.Helper()
	var raw json.RawMessage
	switch {
	case msg.Error != nil:
		raw = msg.Error.Data
	case msg.Kind() == mcp.KindResponse:
		raw = msg.Result
	default:
		raw = msg.Params
	}
	if ex.decode == nil {
		if len(raw) != 0 {
			t.Fatalf("the example has data but no type to decode it into")
		}
		return encode(t, msg)
	}
	v, err := ex.decode(raw)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if val, ok := v.(validator); ok {
		if err := val.Validate(); (err != nil) != ex.invalid {
			t.Errorf("Validate() = %v; want invalid=%v", err, ex.invalid)
		}
	}
	back, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	out := *msg
	switch {
	case msg.Error != nil:
		e := *msg.Error
		e.Data = back
		out.Error = &e
	case msg.Kind() == mcp.KindResponse:
		out.Result = back
	default:
		out.Params = back
	}
	return encode(t, &out)
}

func checkMissingMeta(t *testing.T, params json.RawMessage, want string) {
	t.Helper()
	_, err := rev.DecodeRequestMeta(params)
	var me *rev.MetaError
	switch {
	case want == "" && err != nil:
		t.Errorf("DecodeRequestMeta: %v; want none", err)
	case want != "" && (!errors.As(err, &me) || me.Key != want):
		t.Errorf("DecodeRequestMeta: %v; want %s missing", err, want)
	}
}

func encode(t *testing.T, m *mcp.Message) []byte {
	t.Helper()
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parse(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

// TestSpecObjectExamplesRoundTrip does the same for the examples that are
// bare objects rather than messages.
func TestSpecObjectExamplesRoundTrip(t *testing.T) {
	for _, ex := range []example{
		{file: "core/input-requests.jsonc", decode: typed[rev.InputRequests]},
		{file: "core/input-responses.jsonc", decode: typed[rev.InputResponses]},
		{file: "core/schema-input-required-state-only.jsonc", decode: typed[rev.InputRequiredResult]},
		{file: "core/schema-call-tool-params-progress-token.jsonc", decode: typed[rev.CallToolParams]},
	} {
		t.Run(ex.file, func(t *testing.T) {
			in := readExample(t, ex.file)
			v, err := ex.decode(in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if val, ok := v.(validator); ok {
				if err := val.Validate(); err != nil {
					t.Errorf("Validate() = %v", err)
				}
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(parse(t, in), parse(t, out)); d != "" {
				t.Errorf("re-encoded object differs (-spec +tasksim):\n%s", d)
			}
		})
	}
}
