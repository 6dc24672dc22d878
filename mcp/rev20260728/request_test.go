package rev20260728_test

import (
	"encoding/json"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// FuzzReadRequest holds ReadRequest, which reads a request's params once,
// to the functions that each read them: HasMeta to HasRequestMeta, which
// chooses the era, and Meta, MetaErr to DecodeRequestMeta.
func FuzzReadRequest(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add(`{"name":"echo","_meta":` + s + `}`)
	}
	for _, s := range []string{``, `null`, `[]`, `"x"`, `{}`, `{"_meta":null}`, `{"_meta":[]}`, `{"_meta":{}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`, `{"_META":{"io.modelcontextprotocol/protocolVersion":1}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":1},"_Meta":{}}`, `{"_meta":{"IO.modelcontextprotocol/protocolVersion":"2026-07-28"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		if params != "" && !json.Valid([]byte(params)) {
			return
		}
		q := rev.ReadRequest(&mcp.Message{ID: mcp.IntID(1), Method: mcp.MethodToolsCall, Params: json.RawMessage(params)})
		if got, want := q.HasMeta(), rev.HasRequestMeta(json.RawMessage(params)); got != want {
			t.Errorf("%s: HasMeta %v, HasRequestMeta %v", params, got, want)
		}
		meta, err := rev.DecodeRequestMeta(json.RawMessage(params))
		if (err == nil) != (q.MetaErr == nil) || err != nil && err.Error() != q.MetaErr.Error() {
			t.Errorf("%s: MetaErr %v, DecodeRequestMeta %v", params, q.MetaErr, err)
		}
		if err == nil && !jsonEqual(t, q.Meta, meta) {
			t.Errorf("%s: Meta %+v, DecodeRequestMeta %+v", params, q.Meta, meta)
		}
	})
}

func jsonEqual(t *testing.T, a, b rev.RequestMeta) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
