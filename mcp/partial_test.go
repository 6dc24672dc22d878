package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TaskPartialParams' one-pass decoding must agree with encoding/json on
// every input: the same params, or an error where it fails. Its encoding
// must be encoding/json's, byte for byte, and NewPartialNotification's too.
func FuzzTaskPartialParams(f *testing.F) {
	for _, s := range []string{
		`{"taskId":"t1","content":[{"type":"text","text":"hello"}],"seq":0}`,
		`{"taskId":"t1","content":[{"type":"text","text":"a"},{"type":"text","text":"b <&> \u00e9"}],"seq":41}`,
		` { "seq" : 7 , "content" : [ ] , "taskId" : "x\"y" } `,
		`{"taskId":"t","content":[],"seq":1,"_meta":{"k":[1,2]}}`,
		`{"taskId":"t","content":null,"seq":1}`,
		`{"taskId":null,"content":[],"seq":1}`,
		`{"taskid":"t","content":[],"seq":1}`,
		`{"taskId":"t","taskId":"u","content":[],"seq":1}`,
		`{"taskId":"t","content":[],"seq":1.0}`,
		`{"taskId":"t","content":[],"seq":1e2}`,
		`{"taskId":"t","content":[],"seq":99999999999999999999}`,
		`{"taskId":"t","content":[null],"seq":1}`,
		`{"taskId":"t","content":["x"],"seq":1}`,
		`{"taskId":"t","content":[{"text":"no type"}],"seq":1}`,
		`{"taskId":"t","content":[{"type":"text","text":"x","annotations":{ "a" : 1 }}],"seq":1}`,
		`{"taskId":"t","content":{},"seq":1}`,
		`{"taskId":7,"content":[],"seq":1}`,
		`{"taskId":"t","content":[],"seq":"1","other":true}`,
		`{}`,
		`[]`,
		`null`,
		`{"taskId":"\ud800","content":[],"seq":-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want taskPartialParams
		wantErr := json.Unmarshal(data, &want)
		var got TaskPartialParams
		gotErr := json.Unmarshal(data, &got)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: encoding/json error %v, TaskPartialParams error %v", data, wantErr, gotErr)
		}
		if wantErr != nil {
			if wantErr.Error() != gotErr.Error() {
				t.Fatalf("%q: errors differ:\nencoding/json: %v\none pass:      %v", data, wantErr, gotErr)
			}
			return
		}
		if diff := cmp.Diff(TaskPartialParams(want), got); diff != "" {
			t.Fatalf("%q (-encoding/json +one pass):\n%s", data, diff)
		}
		wantEnc, wantEncErr := json.Marshal(want)
		gotEnc, gotEncErr := json.Marshal(got)
		if (wantEncErr == nil) != (gotEncErr == nil) || !bytes.Equal(wantEnc, gotEnc) {
			t.Fatalf("encodings of %q differ:\nencoding/json: %q %v\nMarshalJSON:   %q %v", data, wantEnc, wantEncErr, gotEnc, gotEncErr)
		}
		if wantEncErr != nil {
			return
		}
		m, err := NewPartialNotification(got)
		if err != nil || !bytes.Equal(m.Params, wantEnc) || m.Method != NotificationTaskPartial {
			t.Fatalf("NewPartialNotification(%q) = %q, %v; want params %q", data, m.Params, err, wantEnc)
		}
	})
}

// A text block read by decodeText must be what the general decoding
// (decodeMembers) makes of the same bytes.
func FuzzContentBlockText(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"hello"}`,
		`{ "text" : "a\"b\u00e9" , "type" : "text" }`,
		`{"type":"text","text":"x","text":"y"}`,
		`{"type":"te\u0078t","text":"x"}`,
		`{"type":"text","text":5}`,
		`{"type":"text"}`,
		`{"type":"image","data":"AA==","mimeType":"image/png"}`,
		`{"type":"text","text":"x","annotations":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 || data[0] != '{' || !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		var fast ContentBlock
		if !fast.decodeText(data, nil) {
			return
		}
		var general ContentBlock
		if err := general.decodeMembers(objectMembersShared(data)); err != nil {
			t.Fatalf("%q: decodeText took it, decodeMembers failed: %v", data, err)
		}
		if diff := cmp.Diff(general, fast); diff != "" {
			t.Fatalf("%q (-decodeMembers +decodeText):\n%s", data, diff)
		}
	})
}

var partialWire = []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"0a1b2c3d-4e5f-6789-abcd-ef0123456789","content":[{"type":"text","text":"1764085000123456789"}],"seq":41}}`)

// BenchmarkPartial is a partial notification's JSON work on each side:
// the server's encoding (params and message) and the client's decoding
// (message, then params).
//
//	go test -run '^$' -bench Partial -benchmem ./mcp
func BenchmarkPartial(b *testing.B) {
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		p := TaskPartialParams{TaskID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789", Content: []ContentBlock{TextBlock("1764085000123456789")}, Seq: 41}
		for b.Loop() {
			m, err := NewPartialNotification(p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := DecodeMessage(partialWire)
			if err != nil {
				b.Fatal(err)
			}
			var p TaskPartialParams
			if err := p.UnmarshalJSON(m.Params); err != nil || p.Seq != 41 {
				b.Fatal(err)
			}
		}
	})
}
