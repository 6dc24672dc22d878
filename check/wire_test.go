package check

import "testing"

func TestDecodeWire(t *testing.T) {
	tests := []struct {
		name, raw               string
		nil                     bool
		id, method, params, res string
		errCode                 int
	}{
		{name: "request", raw: `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"a"}}`, id: `7`, method: "tasks/get", params: `{"taskId":"a"}`},
		{name: "white space", raw: " { \"id\" : \"x\" , \"result\" : { } } ", id: `"x"`, res: `{ }`},
		{name: "escaped method", raw: `{"method":"tasks\/get"}`, method: "tasks/get"},
		{name: "error", raw: `{"id":1,"error":{"code":-32602,"message":"m"}}`, id: `1`, errCode: -32602},
		{name: "last member wins", raw: `{"id":1,"id":2}`, id: `2`},
		{name: "method not a string", raw: `{"id":1,"method":5}`, nil: true},
		{name: "error not an object", raw: `{"id":1,"error":"x"}`, nil: true},
		{name: "not an object", raw: `[1]`, nil: true},
		{name: "invalid", raw: `{"id":1`, nil: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := decodeWire([]byte(tt.raw))
			if tt.nil {
				if w != nil {
					t.Fatalf("decodeWire(%s) = %+v, want nil", tt.raw, w)
				}
				return
			}
			if w == nil {
				t.Fatalf("decodeWire(%s) = nil", tt.raw)
			}
			if string(w.ID) != tt.id || w.Method != tt.method || string(w.Params) != tt.params || string(w.Result) != tt.res {
				t.Errorf("decodeWire(%s) = id %s method %q params %s result %s", tt.raw, w.ID, w.Method, w.Params, w.Result)
			}
			if code := 0; w.Error != nil {
				if code = w.Error.Code; code != tt.errCode {
					t.Errorf("error code %d, want %d", code, tt.errCode)
				}
			} else if tt.errCode != 0 {
				t.Errorf("no error, want code %d", tt.errCode)
			}
		})
	}
}

func TestDecodeResult(t *testing.T) {
	r := decodeResult([]byte(`{"task":{"taskId":"t","status":"working","ttl":null,"pollInterval":250},` +
		`"partial-content":[{"seqNr":2,"type":"text","text":"b"},{"type":"text"}],"isComplete":false,"isError":"no",` +
		`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"},"io.modelcontextprotocol/fallback-mode":"task"},` +
		`"taskId":"u","status":5}`))
	if r == nil || r.Task == nil {
		t.Fatal("no result or no task")
	}
	if r.Task.id() != "t" || r.Task.status() != "working" || r.Task.TTL == nil || string(*r.Task.TTL) != "null" || *r.Task.PollInterval != 250 {
		t.Errorf("task %+v: want t, working, ttl null (present), pollInterval 250", r.Task)
	}
	if !r.HasPartial || len(r.PartialContent) != 2 || string(r.PartialContent[0].SeqNr) != "2" || r.PartialContent[1].SeqNr != nil {
		t.Errorf("partial-content %+v: want seqNr 2, then a segment without seqNr", r.PartialContent)
	}
	if got := segmentBlock(r.PartialContent[0].Raw); got != `{"text":"b","type":"text"}` {
		t.Errorf("segmentBlock = %s", got)
	}
	if r.IsComplete == nil || *r.IsComplete || r.IsError != nil {
		t.Errorf("isComplete %v isError %v: want false and absent (not a boolean)", r.IsComplete, r.IsError)
	}
	if r.relatedTask() != "t" || !r.hasFallbackWarning() {
		t.Errorf("related %q fallback %v", r.relatedTask(), r.hasFallbackWarning())
	}
	if r.id() != "u" || r.Status != nil {
		t.Errorf("result as a Task: id %q status %v, want u and absent", r.id(), r.Status)
	}
	if decodeResult([]byte(`[]`)) != nil || decodeResult(nil) != nil {
		t.Error("a result that is not an object decodes")
	}
}
