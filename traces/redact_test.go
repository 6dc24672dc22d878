package traces

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustRedactor(t *testing.T, o RedactOptions) *Redactor {
	t.Helper()
	r, err := NewRedactor(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedactHeaders(t *testing.T) {
	red := mustRedactor(t, RedactOptions{Headers: []string{"x-api-key"}})
	req := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Method: "POST", URL: "/mcp", Header: []HeaderField{
		{"authorization", "Bearer one"}, {"X-Api-Key", "k-1"}, {"Accept", "text/event-stream"}, {"Cookie", "a=b"}}},
		Raw: []byte("POST /mcp HTTP/1.1\r\nauthorization: Bearer one\r\nX-Api-Key:k-1\r\nAccept: text/event-stream\r\nCookie: a=b\r\n\r\n")}
	red.Apply(&req)
	wantHeader := []HeaderField{{"authorization", "[redacted:1]"}, {"X-Api-Key", "[redacted:2]"},
		{"Accept", "text/event-stream"}, {"Cookie", "[redacted:3]"}}
	if diff := cmp.Diff(wantHeader, req.HTTP.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	wantRaw := "POST /mcp HTTP/1.1\r\nauthorization: [redacted:1]\r\nX-Api-Key:[redacted:2]\r\nAccept: text/event-stream\r\nCookie: [redacted:3]\r\n\r\n"
	if string(req.Raw) != wantRaw {
		t.Errorf("raw %q", req.Raw)
	}
	// The same secret, later: the same token. A new one: the next number.
	again := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Header: []HeaderField{{"Authorization", "Bearer one"}, {"Set-Cookie", "s=1"}}}}
	red.Apply(&again)
	if again.HTTP.Header[0].Value != "[redacted:1]" || again.HTTP.Header[1].Value != "[redacted:4]" {
		t.Errorf("second request: %+v", again.HTTP.Header)
	}
	// Applying again changes nothing.
	red.Apply(&again)
	if again.HTTP.Header[0].Value != "[redacted:1]" {
		t.Errorf("token redacted again: %+v", again.HTTP.Header)
	}
}

func TestRedactJSONPaths(t *testing.T) {
	cases := []struct {
		name, path, in, want string
	}{
		{"key", "params.arguments.apiKey", msgCall,
			strings.Replace(msgCall, `"sk-live-123"`, `"[redacted:1]"`, 1)},
		{"dollar prefix", "$.params.name", `{"params":{"name":"x","other":"x"}}`, `{"params":{"name":"[redacted:1]","other":"x"}}`},
		{"any depth", "$..password", `{"a":{"password":"p"},"b":[{"password":"p"},{"password":"q"}]}`,
			`{"a":{"password":"[redacted:1]"},"b":[{"password":"[redacted:1]"},{"password":"[redacted:2]"}]}`},
		{"wildcard index", "result.content[*].text", `{"result":{"content":[{"type":"text","text":"a"},{"text":"b"}]}}`,
			`{"result":{"content":[{"type":"text","text":"[redacted:1]"},{"text":"[redacted:2]"}]}}`},
		{"index", "result.content[1].text", `{"result":{"content":[{"text":"a"},{"text":"b"}]}}`,
			`{"result":{"content":[{"text":"a"},{"text":"[redacted:1]"}]}}`},
		{"quoted key", `params._meta["io.modelcontextprotocol/related-task"].taskId`,
			`{"params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}}`,
			`{"params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"[redacted:1]"}}}}`},
		{"non-string values", "params.*", `{"params":{"n":12,"o":{"k":[1,2]},"b":true}}`,
			`{"params":{"n":"[redacted:1]","o":"[redacted:2]","b":"[redacted:3]"}}`},
		{"layout kept", "a", "{ \"a\" : \"x\\\"y\" ,\n  \"b\": 1 }", "{ \"a\" : \"[redacted:1]\" ,\n  \"b\": 1 }"},
		{"no match", "params.nothing", msgCall, msgCall},
		{"not JSON", "a", `a=1`, `a=1`},
		{"json lines in a body", "a", "data: {\"a\":1}\r\n\r\n{\"a\":2}\nnot json\n", "data: {\"a\":\"[redacted:1]\"}\r\n\r\n{\"a\":\"[redacted:2]\"}\nnot json\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			red := mustRedactor(t, RedactOptions{JSONPaths: []string{tc.path}})
			rec := Record{Kind: KindBodyChunk, Raw: []byte(tc.in)}
			red.Apply(&rec)
			if string(rec.Raw) != tc.want {
				t.Errorf("got  %s\nwant %s", rec.Raw, tc.want)
			}
		})
	}
}

func TestRedactPatterns(t *testing.T) {
	red := mustRedactor(t, RedactOptions{Patterns: []string{`sk-[a-z]+-[0-9]+`, `token=(\w+)`, `[0-9]{3}`}})
	rec := Record{Kind: KindStdioLine, Raw: []byte(`{"k":"sk-live-123","u":"/x?token=abc&token=abc","n":"999"}`),
		Note: "used sk-live-123 twice"}
	red.Apply(&rec)
	// [0-9]{3} does not match inside the tokens the first patterns left.
	if want := `{"k":"[redacted:1]","u":"/x?token=[redacted:2]&token=[redacted:2]","n":"[redacted:3]"}`; string(rec.Raw) != want {
		t.Errorf("raw %s\nwant %s", rec.Raw, want)
	}
	if rec.Note != "used [redacted:1] twice" {
		t.Errorf("note %q", rec.Note)
	}
}

// SSE data, the event's raw bytes and the RPC fields agree after
// redaction.
func TestRedactSSEConsistency(t *testing.T) {
	red := mustRedactor(t, RedactOptions{JSONPaths: []string{"$..taskId"}})
	rec := sseRecord(0)
	rec.RPC = DescribeMessage([]byte(rec.SSE.Data))
	red.Apply(&rec)
	wantData := strings.Replace(sseRecord(0).SSE.Data, `"786512e2-9e0d-44bd-8f29-789f320fe840"`, `"[redacted:1]"`, 1)
	if rec.SSE.Data != wantData {
		t.Errorf("data %s", rec.SSE.Data)
	}
	if string(rec.Raw) != string(sseRaw("0", wantData)) {
		t.Errorf("raw %q", rec.Raw)
	}
	if rec.RPC.TaskID != "[redacted:1]" || len(rec.RPC.SeqNrs) != 1 {
		t.Errorf("rpc %+v", rec.RPC)
	}
	// Data over several data: lines: the event is written again.
	multi := Record{Kind: KindSSEEvent, Raw: []byte("id: 1\ndata: {\"taskId\":\ndata: \"t\"}\n\n"),
		SSE: &SSEFields{ID: "1", HasID: true, Data: "{\"taskId\":\n\"t\"}", Retry: time.Second, HasRetry: true}}
	red.Apply(&multi)
	if want := "id: 1\nretry: 1000\ndata: {\"taskId\":\ndata: \"[redacted:2]\"}\n\n"; string(multi.Raw) != want || multi.SSE.Data != "{\"taskId\":\n\"[redacted:2]\"}" {
		t.Errorf("multi-line: raw %q data %q", multi.Raw, multi.SSE.Data)
	}
}

func TestRedactHeaderOfTrace(t *testing.T) {
	red := mustRedactor(t, RedactOptions{Patterns: []string{`sk-\w+`}})
	h := Header{Command: []string{"tasksim", "call", "--header", "Authorization: Bearer xyz", "--key=sk-abc"},
		Labels: []Label{{"note", "key sk-abc"}}}
	red.ApplyHeader(&h)
	want := []string{"tasksim", "call", "--header", "Authorization: [redacted:1]", "--key=[redacted:2]"}
	if diff := cmp.Diff(want, h.Command); diff != "" || h.Labels[0].Value != "key [redacted:2]" {
		t.Errorf("command (-want +got):\n%s\nlabels %+v", diff, h.Labels)
	}
}

// Observe keeps the numbers of earlier tokens from being reused.
func TestRedactObserve(t *testing.T) {
	red := mustRedactor(t, RedactOptions{})
	old := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Header: []HeaderField{{"Authorization", "[redacted:7]"}}}}
	red.Observe(&old)
	rec := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Header: []HeaderField{{"Cookie", "c"}}}}
	red.Apply(&rec)
	if rec.HTTP.Header[0].Value != "[redacted:8]" {
		t.Errorf("got %q", rec.HTTP.Header[0].Value)
	}
}

func TestRedactorOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		o    RedactOptions
		want string
	}{
		{"bad pattern", RedactOptions{Patterns: []string{"("}}, "pattern"},
		{"empty match", RedactOptions{Patterns: []string{"a*"}}, "empty string"},
		{"bad header", RedactOptions{Headers: []string{"X: y"}}, "not valid"},
		{"empty path", RedactOptions{JSONPaths: []string{"$"}}, "empty path"},
		{"unclosed bracket", RedactOptions{JSONPaths: []string{"a[1"}}, "unclosed"},
		{"bad index", RedactOptions{JSONPaths: []string{"a[x]"}}, "want [N]"},
		{"empty name", RedactOptions{JSONPaths: []string{"a..b."}}, "empty name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRedactor(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// Redacted JSON stays valid JSON.
func TestRedactKeepsJSONValid(t *testing.T) {
	red := mustRedactor(t, RedactOptions{JSONPaths: []string{"$..*"}})
	for _, in := range []string{msgCall, msgSeg1, msgPartial, `[1,[2,{"a":"\u00e9\\"}]]`, `{"a":{}}`} {
		rec := Record{Kind: KindMessage, Raw: []byte(in)}
		red.Apply(&rec)
		if !json.Valid(rec.Raw) {
			t.Errorf("%s -> invalid %s", in, rec.Raw)
		}
	}
}

// TestRedactQuery: the values of secret query parameters in a request's
// URL become tokens, the default names and the configured ones alike; the
// same value gets the same token, other parameters stay.
func TestRedactQuery(t *testing.T) {
	red := mustRedactor(t, RedactOptions{Query: []string{"tenant"}})
	rec := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Method: "POST", URL: "/mcp?a=1&Access_Token=tok%20x&tenant=acme&flag&sig="}}
	red.Apply(&rec)
	if want := "/mcp?a=1&Access_Token=[redacted:1]&tenant=[redacted:2]&flag&sig="; rec.HTTP.URL != want {
		t.Errorf("URL %q, want %q", rec.HTTP.URL, want)
	}
	again := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Method: "GET", URL: "/mcp?token=tok%20x"}}
	red.Apply(&again)
	red.Apply(&again) // a token is not redacted again
	if want := "/mcp?token=[redacted:1]"; again.HTTP.URL != want {
		t.Errorf("URL %q, want %q", again.HTTP.URL, want)
	}
	if _, err := NewRedactor(RedactOptions{Query: []string{"a=b"}}); err == nil {
		t.Error("query name a=b accepted")
	}
}

// The always-redacted names are returned as copies: a caller that changes
// one cannot turn redaction off for every Redactor of the process.
func TestAlwaysRedactedAreCopies(t *testing.T) {
	h, q := AlwaysRedactedHeaders(), AlwaysRedactedQuery()
	for i := range h {
		h[i] = "X-Nothing"
	}
	for i := range q {
		q[i] = "nothing"
	}
	red := mustRedactor(t, RedactOptions{})
	rec := Record{Kind: KindRequestHead, HTTP: &HTTPHead{Method: "GET", URL: "/mcp?access_token=s3",
		Header: []HeaderField{{"Authorization", "Bearer one"}}}}
	red.Apply(&rec)
	if got := rec.HTTP.Header[0].Value; got != "[redacted:1]" {
		t.Errorf("Authorization = %q", got)
	}
	if strings.Contains(rec.HTTP.URL, "s3") {
		t.Errorf("URL = %q", rec.HTTP.URL)
	}
	if AlwaysRedactedHeaders()[0] != "Authorization" || AlwaysRedactedQuery()[0] != "token" {
		t.Error("a change to a returned slice showed in the next one")
	}
}
