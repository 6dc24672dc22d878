package replay

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// sharedExchangeTrace writes a trace whose two exchanges carry one
// exchange id (a hand-edited or imported trace): a GET that opens an SSE
// stream, then a POST answered 200, then the records of extra.
func sharedExchangeTrace(t *testing.T, extra ...traces.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shared.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"tasksim", "record"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append([]traces.Record{
		{Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindRequestHead,
			HTTP: &traces.HTTPHead{Method: http.MethodGet, URL: "/mcp", Header: []traces.HeaderField{{Name: "Accept", Value: "text/event-stream"}}}},
		{Exchange: 1, Stream: "get:1", Dir: traces.DirServerToClient, Kind: traces.KindResponseHead,
			HTTP: &traces.HTTPHead{Status: 200, Header: []traces.HeaderField{{Name: "Content-Type", Value: "text/event-stream"}}}},
		{Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindRequestHead,
			HTTP: &traces.HTTPHead{Method: http.MethodPost, URL: "/mcp", Header: []traces.HeaderField{{Name: "Content-Type", Value: "application/json"}}}},
		{Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindMessage, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindResponseHead,
			HTTP: &traces.HTTPHead{Status: 200, Header: []traces.HeaderField{{Name: "Content-Type", Value: "application/json"}}}},
	}, extra...) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayDivergenceEndsSharedExchange: when two exchanges of a trace
// share an exchange id, the first one's live stream (a GET stream the
// server keeps open) is cut too when the replay ends at a divergence,
// rather than held until the replay's bound. The bound here is an hour:
// the test ends only if the divergence ends the replay.
func TestReplayDivergenceEndsSharedExchange(t *testing.T) {
	path := sharedExchangeTrace(t)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			<-r.Context().Done() // open until the client goes
			return
		}
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer s.Close()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	res, err := Replay(ctx, r, Target{URL: s.URL + "/mcp"}, &ReplayOptions{Record: filepath.Join(t.TempDir(), "replay.trace")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence == nil || res.Divergence.Record != 4 {
		t.Fatalf("divergence %v, want the POST's status at record 4", res.Divergence)
	}
	if ctx.Err() != nil {
		t.Fatalf("the replay ran to its bound: %v", ctx.Err())
	}
}

// TestReplayInterruptedKeepsRecording: a replay interrupted while it
// waits keeps what it recorded at Record, in place of the file that was
// there, and leaves no partial file beside it.
func TestReplayInterruptedKeepsRecording(t *testing.T) {
	path := sharedExchangeTrace(t, traces.Record{Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindMessage,
		Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	got := make(chan struct{}, 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case got <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer s.Close()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	rec := filepath.Join(dir, "replay.trace")
	if err := os.WriteFile(rec, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-got:
			cancel()
		case <-ctx.Done():
		}
	}()
	// The POST's answer never comes (its stream stays open with nothing
	// on it): only the interrupt ends the wait.
	_, err = Replay(ctx, r, Target{URL: s.URL + "/mcp"}, &ReplayOptions{Record: rec, Wait: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	kept, err := traces.Open(rec)
	if err != nil {
		t.Fatalf("%s does not hold the replay's trace: %v", rec, err)
	}
	defer kept.Close()
	n := 0
	for _, err := range kept.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Error("the kept trace has no record")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in %s, want the trace alone", len(ents), dir)
	}
}
