package rev20260728_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

func TestDecodeRequestMeta(t *testing.T) {
	const (
		pv   = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	)
	for _, tc := range []struct {
		name, params string
		key          string // the key the error names; "" for none
	}{
		{"complete", `{"_meta":{` + pv + `,` + caps + `}}`, ""},
		{"with client info and log level", `{"_meta":{` + pv + `,` + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info"}}`, ""},
		{"no params", ``, "_meta"},
		{"params not an object", `[1]`, "_meta"},
		{"no _meta", `{"name":"greet"}`, "_meta"},
		{"_meta null", `{"_meta":null}`, "_meta"},
		{"_meta not an object", `{"_meta":"x"}`, "_meta"},
		{"empty _meta", `{"_meta":{}}`, rev.MetaProtocolVersion},
		{"no protocol version", `{"_meta":{` + caps + `}}`, rev.MetaProtocolVersion},
		{"protocol version null", `{"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + caps + `}}`, rev.MetaProtocolVersion},
		{"protocol version a number", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + caps + `}}`, rev.MetaProtocolVersion},
		{"protocol version empty", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"",` + caps + `}}`, rev.MetaProtocolVersion},
		{"no capabilities", `{"_meta":{` + pv + `}}`, rev.MetaClientCapabilities},
		{"capabilities null", `{"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":null}}`, rev.MetaClientCapabilities},
		{"capabilities an array", `{"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":[]}}`, rev.MetaClientCapabilities},
		{"capabilities with a bad member", `{"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":{"extensions":[]}}}`, rev.MetaClientCapabilities},
		{"client info without version", `{"_meta":{` + pv + `,` + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"c"}}}`, rev.MetaClientInfo},
		{"client info a string", `{"_meta":{` + pv + `,` + caps + `,"io.modelcontextprotocol/clientInfo":"c"}}`, rev.MetaClientInfo},
		{"log level a number", `{"_meta":{` + pv + `,` + caps + `,"io.modelcontextprotocol/logLevel":3}}`, rev.MetaLogLevel},
		// 2025-11-25's params carry none of this.
		{"legacy request", `{"name":"greet","arguments":{},"task":{"ttl":1000}}`, "_meta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := rev.DecodeRequestMeta(json.RawMessage(tc.params))
			if tc.key == "" {
				if err != nil {
					t.Fatalf("DecodeRequestMeta: %v", err)
				}
				if m.ProtocolVersion != rev.ProtocolVersion || m.ClientCapabilities == nil {
					t.Fatalf("decoded %+v", m)
				}
				if err := m.Validate(); err != nil {
					t.Fatalf("Validate of a decoded _meta: %v", err)
				}
				return
			}
			var me *rev.MetaError
			if !errors.As(err, &me) || me.Key != tc.key {
				t.Fatalf("DecodeRequestMeta = %v; want a MetaError for %s", err, tc.key)
			}
			if !errors.Is(err, rev.ErrInvalidMeta) {
				t.Errorf("%v does not match ErrInvalidMeta", err)
			}
			if e := me.RPCError(); e.Code != mcp.CodeInvalidParams {
				t.Errorf("RPCError code %d; want -32602", e.Code)
			}
		})
	}
}

func TestRequestMetaValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    rev.RequestMeta
		key  string
	}{
		{"complete", rev.RequestMeta{ProtocolVersion: rev.ProtocolVersion, ClientCapabilities: &rev.ClientCapabilities{}}, ""},
		{"nothing", rev.RequestMeta{}, rev.MetaProtocolVersion},
		{"no capabilities", rev.RequestMeta{ProtocolVersion: rev.ProtocolVersion}, rev.MetaClientCapabilities},
		{"no version", rev.RequestMeta{ClientCapabilities: &rev.ClientCapabilities{}}, rev.MetaProtocolVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate()
			var me *rev.MetaError
			switch {
			case tc.key == "" && err != nil:
				t.Fatalf("Validate = %v", err)
			case tc.key != "" && (!errors.As(err, &me) || me.Key != tc.key):
				t.Fatalf("Validate = %v; want %s", err, tc.key)
			}
		})
	}
}

// TestMetaKeepsOtherKeys checks that keys the types do not name (trace
// context, an extension's) survive a decode and an encode, in every _meta
// type.
func TestMetaKeepsOtherKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		in   string
	}{
		{"request", new(rev.RequestMeta), `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01","progressToken":7}`},
		{"notification", new(rev.NotificationMeta), `{"io.modelcontextprotocol/subscriptionId":1,"com.example/x":[1,2]}`},
		{"result", new(rev.ResultMeta), `{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"com.example/y":{"z":true}}`},
		{"filter", new(rev.SubscriptionFilter), `{"toolsListChanged":true,"taskIds":["a"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(tc.in), tc.v); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(parse(t, []byte(tc.in)), parse(t, out)); d != "" {
				t.Errorf("(-in +out):\n%s", d)
			}
		})
	}
}

// metaSeeds are _meta objects that DecodeRequestMeta accepts, some with
// null members, extra keys and keys that differ from the reserved ones in
// case only.
var metaSeeds = []string{
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"traceparent":"00-ab"}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":null,"io.modelcontextprotocol/logLevel":null}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"ProgressToken":"x","progressToken":"y"}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"y","PROGRESSTOKEN":"x"}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":{"a":[1,2]},"x":2}`,
}

// FuzzDecodeRequestMetaAsStruct holds DecodeRequestMeta, which builds the
// RequestMeta from the fields its checks decoded, to what decoding the
// _meta into the struct gives, whenever it accepts the _meta.
func FuzzDecodeRequestMetaAsStruct(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, meta string) {
		got, err := rev.DecodeRequestMeta(json.RawMessage(`{"_meta":` + meta + `}`))
		if err != nil {
			return
		}
		var want rev.RequestMeta
		if err := json.Unmarshal([]byte(meta), &want); err != nil {
			t.Fatalf("DecodeRequestMeta accepted %s, which does not decode: %v", meta, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nDecodeRequestMeta %#v\nas the struct      %#v", meta, got, want)
		}
	})
}
