package mcp_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

// The seed corpora are in testdata/fuzz/FuzzDecodeMessage and
// testdata/fuzz/FuzzContentBlock.

func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := mcp.DecodeMessage(data)
		// DecodeMessageOwned decodes the same, and DecodeMessage keeps no
		// part of data: changing it afterwards changes nothing.
		owned := bytes.Clone(data)
		mo, erro := mcp.DecodeMessageOwned(owned)
		if (err == nil) != (erro == nil) || (err == nil && !reflect.DeepEqual(m, mo)) {
			t.Fatalf("DecodeMessageOwned(%q) = %+v, %v; DecodeMessage: %+v, %v", data, mo, erro, m, err)
		}
		if err == nil {
			scratch := bytes.Clone(data)
			ms, _ := mcp.DecodeMessage(scratch)
			before, _ := ms.MarshalJSON()
			for i := range scratch {
				scratch[i] = 'x'
			}
			if after, _ := ms.MarshalJSON(); !bytes.Equal(before, after) {
				t.Fatalf("DecodeMessage's message changed with its input: %q, then %q", before, after)
			}
		}
		if err != nil {
			if code := errorCode(err); code != mcp.CodeParseError && code != mcp.CodeInvalidRequest {
				t.Fatalf("DecodeMessage error %v has code %d, want %d or %d", err, code, mcp.CodeParseError, mcp.CodeInvalidRequest)
			}
			if m != nil && !m.ID.IsZero() && !json.Valid([]byte(m.ID.String())) {
				t.Fatalf("id returned with the error is not JSON: %s", m.ID)
			}
			return
		}
		if m.Kind() == mcp.KindInvalid {
			t.Fatalf("DecodeMessage accepted a message of no kind: %+v", m)
		}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		if !json.Valid(b) {
			t.Fatalf("MarshalJSON wrote invalid JSON: %q", b)
		}
		m2, err := mcp.DecodeMessage(b)
		if err != nil {
			t.Fatalf("DecodeMessage(MarshalJSON(m)) = %v\ninput: %q\nencoded: %q", err, data, b)
		}
		if m.Kind() != m2.Kind() || m.ID != m2.ID || m.Method != m2.Method {
			t.Fatalf("round trip changed the envelope: %s %s %q -> %s %s %q",
				m.Kind(), m.ID, m.Method, m2.Kind(), m2.ID, m2.Method)
		}
		if diff := cmp.Diff(semantic(t, m.Params), semantic(t, m2.Params)); diff != "" {
			t.Fatalf("round trip changed params (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(semantic(t, m.Result), semantic(t, m2.Result)); diff != "" {
			t.Fatalf("round trip changed result (-before +after):\n%s", diff)
		}
		if (m.Error == nil) != (m2.Error == nil) {
			t.Fatalf("round trip changed error presence: %v -> %v", m.Error, m2.Error)
		}
		if m.Error != nil {
			if m.Error.Code != m2.Error.Code || m.Error.Message != m2.Error.Message {
				t.Fatalf("round trip changed the error: %+v -> %+v", m.Error, m2.Error)
			}
			if diff := cmp.Diff(semantic(t, m.Error.Data), semantic(t, m2.Error.Data)); diff != "" {
				t.Fatalf("round trip changed error data (-before +after):\n%s", diff)
			}
		}
	})
}

func FuzzContentBlock(f *testing.F) {
	f.Add([]byte(`{"type":"text","text":"hi"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c1 mcp.ContentBlock
		if err := json.Unmarshal(data, &c1); err == nil {
			e1 := marshalBlock(t, c1)
			c2 := unmarshalBlock(t, e1)
			e2 := marshalBlock(t, c2)
			c3 := unmarshalBlock(t, e2)
			e3 := marshalBlock(t, c3)
			if !bytes.Equal(e2, e3) {
				t.Fatalf("encoding not stable:\n2nd: %q\n3rd: %q", e2, e3)
			}
			if !bytes.Equal(e1, e2) {
				t.Fatalf("re-encoding a decoded encoding changed it:\n1st: %q\n2nd: %q", e1, e2)
			}
		}

		// The same bytes as a partial-content segment.
		var s1 mcp.Segment
		if err := json.Unmarshal(data, &s1); err != nil {
			return
		}
		e1, err := json.Marshal(s1)
		if err != nil {
			t.Fatalf("Marshal(segment): %v", err)
		}
		var s2 mcp.Segment
		if err := json.Unmarshal(e1, &s2); err != nil {
			t.Fatalf("Unmarshal(Marshal(segment)) = %v\nencoded: %q", err, e1)
		}
		e2, err := json.Marshal(s2)
		if err != nil {
			t.Fatalf("Marshal(segment): %v", err)
		}
		if s1.SeqNr != s2.SeqNr || !bytes.Equal(e1, e2) {
			t.Fatalf("segment round trip not stable:\n1st: %q\n2nd: %q", e1, e2)
		}
	})
}

func marshalBlock(t *testing.T, c mcp.ContentBlock) []byte {
	t.Helper()
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	if !json.Valid(b) {
		t.Fatalf("MarshalJSON wrote invalid JSON: %q", b)
	}
	return b
}

func unmarshalBlock(t *testing.T, b []byte) mcp.ContentBlock {
	t.Helper()
	var c mcp.ContentBlock
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("Unmarshal(%q): %v", b, err)
	}
	return c
}
