package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/traces"
)

// recordMultiRound records a 2026-07-28 multi round-trip request of the
// reference server's two-round fixture: tools/call (id 1) answered with
// an InputRequiredResult asking step1 under a sealed requestState, the
// retry (id 2) with step1's answer and that state, answered with step2
// under a new state, the retry (id 3) with step2's answer, answered with
// the result. It returns the trace's path and the two recorded states.
func recordMultiRound(t *testing.T) (string, []string) {
	t.Helper()
	rc := startRecording2026(t, "")
	call := `"name":"` + server.ToolInputMultiRound + `","arguments":{}`
	var states []string
	retry := ""
	for i, answer := range []string{"", `"step1":{"action":"accept","content":{"name":"Ada"}}`, `"step2":{"action":"accept","content":{"color":"blue"}}`} {
		fields := call
		if answer != "" {
			fields += `,"inputResponses":{` + answer + `},"requestState":` + retry
		}
		raw := rc.send(strconv.Itoa(i+1), mcp.MethodToolsCall, fields)
		if i == 2 {
			if !strings.Contains(string(raw), "favorite color: blue") {
				t.Fatalf("last round: %s, want the result", raw)
			}
			break
		}
		var ir rev.InputRequiredResult
		if err := json.Unmarshal(raw, &ir); err != nil || ir.Validate() != nil || ir.RequestState == "" {
			t.Fatalf("round %d: %s, want an InputRequiredResult with a requestState", i+1, raw)
		}
		states = append(states, ir.RequestState)
		q, _ := json.Marshal(ir.RequestState)
		retry = string(q)
	}
	return rc.finish(), states
}

// TestReplay2026MapsRequestState: a recorded multi round-trip request,
// replayed against a fresh reference server, does not diverge. The fresh
// server seals its requestState under a key of its own, so each live
// InputRequiredResult carries another state than the recorded one: the
// replay binds the recorded state to the live one and sends the live one
// in the retry that echoes it, which the server verifies (-32602
// otherwise: the second round would be an error, not step2).
func TestReplay2026MapsRequestState(t *testing.T) {
	path, recorded := recordMultiRound(t)
	s := refserver.StartHTTP(t, &refserver.Options{})
	o := &ReplayOptions{Record: filepath.Join(t.TempDir(), "replay.trace")}
	res := replayFile(t, path, Target{URL: s.URL}, o)
	if res.Divergence != nil {
		t.Fatalf("divergence against the reference:\n%s", res.Divergence)
	}
	if res.Sent != 3 || res.Compared < 3 {
		t.Fatalf("sent %d, compared %d; want 3 requests and their answers", res.Sent, res.Compared)
	}
	// The retries carried the live states, never the recorded ones.
	sent := requestStatesSent(t, o.Record)
	if len(sent) != 2 {
		t.Fatalf("retries sent states %q, want 2", sent)
	}
	for i, st := range sent {
		if st == recorded[i] || st == "" {
			t.Errorf("retry %d sent requestState %q, recorded %q: want the live one", i+1, st, recorded[i])
		}
	}
}

// requestStatesSent returns the requestState of each request of the
// trace at path that carries one, in order.
func requestStatesSent(t *testing.T, path string) []string {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != traces.KindMessage || rec.Dir != traces.DirClientToServer {
			continue
		}
		var m struct {
			Params rev.CallToolParams `json:"params"`
		}
		if json.Unmarshal(rec.Raw, &m) == nil && m.Params.RequestState != "" {
			out = append(out, m.Params.RequestState)
		}
	}
	return out
}

// TestReplay2026RequestStateRefused: when the live server refuses the
// retry (here a proxy changes the state the live server minted, so the
// retry carries a state that fails verification), the divergence is the
// retry's answer, an error where the recording has step2, not the
// InputRequiredResult whose state differs by design.
func TestReplay2026RequestStateRefused(t *testing.T) {
	path, _ := recordMultiRound(t)
	s := refserver.StartHTTP(t, &refserver.Options{})
	u, _ := url.Parse(s.URL)
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	p.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(`"requestState":"`), []byte(`"requestState":"x`))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	front := httptest.NewServer(p)
	defer front.Close()
	res := replayFile(t, path, Target{URL: front.URL + u.Path}, nil)
	d := res.Divergence
	if d == nil {
		t.Fatal("no divergence; want the refused retry")
	}
	if !strings.Contains(d.Message, "answer to tools/call id 2") || d.Path != "$.error" {
		t.Fatalf("divergence at %s %s, want the answer to tools/call id 2 at $.error:\n%s", d.Message, d.Path, d)
	}
	if !strings.Contains(d.Live, "requestState") {
		t.Errorf("live %s, want the server's refusal of the requestState", d.Live)
	}
}

// mintingServer is a 2026-07-28 server of one tool, not tasksim's: it
// asks one confirmation in a multi round-trip request under a key and a
// requestState it names after run, and answers the retry that echoes the
// state and answers the key with "confirmed", any other with -32602.
func mintingServer(t *testing.T, run string) *httptest.Server {
	key, state := "confirm-"+run, "state-"+run
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage    `json:"id"`
			Params rev.CallToolParams `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p := m.Params
		var out any
		switch {
		case p.RequestState == "":
			out = map[string]any{"result": rev.InputRequiredResult{ResultType: rev.ResultInputRequired, RequestState: state,
				InputRequests: rev.InputRequests{key: {Method: rev.MethodElicitationCreate, Params: json.RawMessage(`{"message":"Sure?"}`)}}}}
		case p.RequestState == state && p.InputResponses[key] != nil:
			out = map[string]any{"result": map[string]any{"resultType": "complete", "content": []any{map[string]string{"type": "text", "text": "confirmed"}}}}
		default:
			out = map[string]any{"error": map[string]any{"code": -32602, "message": "invalid params: unknown requestState or inputResponses key"}}
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + string(b[1:])))
	}))
	t.Cleanup(s.Close)
	return s
}

// TestReplay2026MapsInputKeys: a server other than tasksim may mint its
// inputRequests keys per run, as its requestState. A multi round-trip
// request recorded against one run of it replays against another without
// a divergence: the recorded key pairs with the live one (same request),
// and the retry answers the live key under the live state.
func TestReplay2026MapsInputKeys(t *testing.T) {
	rc := startRecording2026(t, mintingServer(t, "rec").URL+"/mcp")
	call := `"name":"confirm","arguments":{}`
	rc.send("1", mcp.MethodToolsCall, call)
	if got := rc.send("2", mcp.MethodToolsCall, call+`,"inputResponses":{"confirm-rec":{"action":"accept"}},"requestState":"state-rec"`); !strings.Contains(string(got), "confirmed") {
		t.Fatalf("recorded retry: %s", got)
	}
	path := rc.finish()
	res := replayFile(t, path, Target{URL: mintingServer(t, "live").URL + "/mcp"}, nil)
	if res.Divergence != nil {
		t.Fatalf("divergence:\n%s", res.Divergence)
	}
	if res.Sent != 2 || res.Compared < 2 {
		t.Fatalf("sent %d, compared %d", res.Sent, res.Compared)
	}
}

// TestClientReplayRequestStateExact: a client replay serves the recorded
// requestState, so the live client's retry must echo it unchanged: a
// client that changes it is the divergence (a server replay, where the
// live server mints its own, takes any string).
func TestClientReplayRequestStateExact(t *testing.T) {
	const retry = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","inputResponses":{"k":{}},"requestState":"%s"}}`
	st := step{kind: stepRequest, ch: 1, body: fmt.Appendf(nil, retry, "s1"),
		rec: traces.Record{Index: 7, Stream: "req:1", HTTP: &traces.HTTPHead{Method: http.MethodPost, URL: "/mcp"}}}
	for _, tc := range []struct{ live, path string }{{"s1", ""}, {"s1-changed", "$.params.requestState"}} {
		cs := newClientServer(&script{http: true, steps: []step{st}}, 0)
		cs.compareRequest(cs.order[0], fmt.Appendf(nil, retry, tc.live))
		switch d := cs.first; {
		case tc.path == "" && d != nil:
			t.Errorf("echoed %q: divergence %s", tc.live, d)
		case tc.path != "" && (d == nil || d.Path != tc.path):
			t.Errorf("echoed %q: divergence %v, want one at %s", tc.live, d, tc.path)
		}
	}
}

func TestRewriteRequest(t *testing.T) {
	m := newIDMap()
	m.bind(m.task, "t1", "live-1")
	m.bind(m.task, "t10", "live-10")
	m.rebind(m.state, "s&1", "old")
	m.rebind(m.state, "s&1", "L<&>") // the state seen last counts
	m.rebind(m.input, "k1", "L1")
	for _, tc := range []struct{ name, in, want string }{
		{"task ids", `{"params":{"taskId":"t10","other":"t1","keep":"t100"}}`,
			`{"params":{"taskId":"live-10","other":"live-1","keep":"t100"}}`},
		{"escaped as the client chose", `{"taskId": "t\u0031", "a":["t10"]}`, `{"taskId": "live-1", "a":["live-10"]}`},
		{"requestState", `{"params":{"requestState":"s\u00261","inputResponses":{"k":{"v":1}}}}`,
			`{"params":{"requestState":"L<&>","inputResponses":{"k":{"v":1}}}}`},
		{"nothing to map", `{ "a" : "b" }`, `{ "a" : "b" }`},
		{"not JSON: as bytes", `{"taskId":"t1",`, `{"taskId":"live-1",`},
		{"inputResponses keys, nothing else", `{"params":{"inputResponses":{"k1":{"content":{"k1":"k1"}},"k2":["k1"]},"k1":"k1"}}`,
			`{"params":{"inputResponses":{"L1":{"content":{"k1":"k1"}},"k2":["k1"]},"k1":"k1"}}`},
	} {
		if got := string(m.rewriteRequest([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
