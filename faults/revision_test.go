package faults

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// watchFault sees every message it is addressed and acts on none.
type watchFault func(*Msg)

func (f watchFault) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	f(m)
	return Action{}, false
}

// seenMsg is what a test looks at of a message the watch fault saw.
type seenMsg struct {
	Stream, Method, Dir string
	Rev                 mcp.Revision
}

// watcher is a set whose one fault sees every message, and what it saw.
type watcher struct {
	set  *Set
	mu   sync.Mutex
	seen []seenMsg
}

func newWatcher(t *testing.T) *watcher {
	t.Helper()
	w := &watcher{}
	k := Kind{Name: "watch", Places: []string{PlaceHTTP, PlaceStdio, PlaceConn}, New: func(*Params) (Fault, error) {
		return watchFault(func(m *Msg) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.seen = append(w.seen, seenMsg{m.Stream, m.Method(), m.Dir.String(), m.Revision})
		}), nil
	}}
	b, err := NewRegistry(k).Parse("watch")
	if err != nil {
		t.Fatal(err)
	}
	w.set = NewSet(1, b)
	return w
}

// take returns what was seen since the last take.
func (w *watcher) take() []seenMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.seen
	w.seen = nil
	return s
}

// dualEra serves the dual-era reference server over HTTP on 127.0.0.1
// behind set's faults and returns its endpoint's URL.
func dualEra(t *testing.T, set *Set) string {
	t.Helper()
	return refserver.StartHTTP(t, &refserver.Options{Handler: func(h http.Handler) http.Handler { return Handler(h, set, nil) }}).URL
}

// discover asks the server at u for server/discover in the 2026-07-28
// era, without re-issuing a lost request.
func discover(ctx context.Context, u string) error {
	s, err := client.New(&client.Options{MaxReissues: -1}).ConnectStateless(ctx, &streamhttp.ClientTransport{URL: u, Revision: mcp.Revision20260728})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Discover(ctx)
	return err
}

// openSession opens a 2025-11-25 session with the server at u, lists its
// tools and closes it.
func openSession(ctx context.Context, u string) error {
	s, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: u, MaxReconnects: -1})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.ListTools(ctx)
	return err
}

// noMeta is a request without the per-request _meta: it claims no
// revision of its own.
const noMeta = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// TestHTTPMsgRevision: at the HTTP place every message of a dual-era
// endpoint's traffic, requests and answers, has its revision: 2026-07-28
// for stateless requests (by their _meta, or by MCP-Protocol-Version when
// they have none), 2025-11-25 for a session (its initialize by itself,
// the rest by the session's id and header).
func TestHTTPMsgRevision(t *testing.T) {
	w := newWatcher(t)
	u := dualEra(t, w.set)
	ctx := context.Background()

	if err := discover(ctx, u); err != nil {
		t.Fatal(err)
	}
	c, err := (&streamhttp.ClientTransport{URL: u, Revision: mcp.Revision20260728}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeRead(t, c, noMeta)
	c.Close()
	stateless := w.take()
	if err := openSession(ctx, u); err != nil {
		t.Fatal(err)
	}
	sess := w.take()

	check := func(era string, seen []seenMsg, want mcp.Revision, methods ...string) {
		t.Helper()
		got := map[string]bool{}
		for _, m := range seen {
			got[m.Method+" "+m.Dir] = true
			if m.Rev != want {
				t.Errorf("%s: %+v has revision %q, want %s", era, m, m.Rev, want)
			}
		}
		for _, m := range methods {
			if !got[m] {
				t.Errorf("%s: no %s among %+v", era, m, seen)
			}
		}
	}
	check("stateless", stateless, mcp.Revision20260728,
		rev.MethodServerDiscover+" c>s", rev.MethodServerDiscover+" s>c", "tools/list c>s", "tools/list s>c")
	check("session", sess, mcp.Revision20251125,
		"initialize c>s", "initialize s>c", "notifications/initialized c>s", "tools/list c>s", "tools/list s>c")
}

// writeRead writes the message text through c and reads one answer.
func writeRead(t *testing.T, c mcp.Conn, text string) *mcp.Message {
	t.Helper()
	m, err := mcp.DecodeMessage([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestHTTPRevisionSelector confines a fault to one era of a dual-era
// endpoint: http-status with revision=2026-07-28 refuses the stateless
// requests and lets a session through, and revision=2025-11-25 the
// other way round.
func TestHTTPRevisionSelector(t *testing.T) {
	ctx := context.Background()
	for _, r := range []mcp.Revision{mcp.Revision20260728, mcp.Revision20251125} {
		u := dualEra(t, setOf(t, "http-status:code=503,revision="+string(r)))
		derr, serr := discover(ctx, u), openSession(ctx, u)
		if (derr != nil) != (r == mcp.Revision20260728) {
			t.Errorf("revision=%s: server/discover: %v", r, derr)
		}
		if (serr != nil) != (r == mcp.Revision20251125) {
			t.Errorf("revision=%s: session: %v", r, serr)
		}
	}
}

// TestConnMsgRevision: through a Conn, a message has its own claim, else
// its request's, else the connection's: a 2026-07-28 Streamable HTTP
// Conn says its revision, so a request without _meta (refused by the
// server) and its answer have it; over a stdio pipe, which says none,
// each message says its own.
func TestConnMsgRevision(t *testing.T) {
	ctx := context.Background()
	w := newWatcher(t)
	inner, err := (&streamhttp.ClientTransport{URL: dualEra(t, nil), Revision: mcp.Revision20260728}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := Conn(inner, w.set, nil)
	if a := writeRead(t, c, noMeta); a.Error == nil || a.Error.Code != mcp.CodeInvalidParams {
		t.Fatalf("answer %+v, want -32602", a)
	}
	c.Close()
	want := []seenMsg{
		{StreamStdin, "tools/list", "c>s", mcp.Revision20260728},
		{StreamStdout, "", "s>c", mcp.Revision20260728},
	}
	if got := w.take(); !slices.Equal(got, want) {
		t.Errorf("over HTTP: saw %+v, want %+v", got, want)
	}

	srv := server.New(nil)
	defer srv.Close()
	inner, err = stdio.Pipe(srv, nil).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c = Conn(inner, w.set, nil)
	defer c.Close()
	writeRead(t, c, discoverLine)
	writeRead(t, c, initializeLine)
	writeRead(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	m26, m25 := mcp.Revision20260728, mcp.Revision20251125
	want = []seenMsg{
		{StreamStdin, rev.MethodServerDiscover, "c>s", m26}, {StreamStdout, "", "s>c", m26},
		{StreamStdin, mcp.MethodInitialize, "c>s", m25}, {StreamStdout, "", "s>c", m25},
		{StreamStdin, "tools/list", "c>s", m25}, {StreamStdout, "", "s>c", m25},
	}
	if got := w.take(); !slices.Equal(got, want) {
		t.Errorf("over stdio: saw %+v, want %+v", got, want)
	}
}

const (
	discoverLine = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	initializeLine = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
)

// TestLinesMsgRevision: at the stdio place a client's line has the
// revision its _meta (or initialize) claims, and a server's line its
// request's when the two directions share an Eras; with none shared, the
// server's lines have none. revision= then confines a fault to one era.
func TestLinesMsgRevision(t *testing.T) {
	ctx := context.Background()
	in := discoverLine + "\n" + initializeLine + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n"
	out := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}` + "\n"
	m26, m25 := mcp.Revision20260728, mcp.Revision20251125
	for _, shared := range []bool{true, false} {
		w := newWatcher(t)
		var opts *PlaceOptions
		if shared {
			opts = &PlaceOptions{Eras: new(rev.Eras)}
		}
		var sink bytes.Buffer
		if err := Lines(ctx, &sink, strings.NewReader(in), w.set, StreamStdin, opts); err != nil {
			t.Fatal(err)
		}
		if err := Lines(ctx, &sink, strings.NewReader(out), w.set, StreamStdout, opts); err != nil {
			t.Fatal(err)
		}
		answers := []mcp.Revision{m26, m25, m25}
		if !shared {
			answers = []mcp.Revision{"", "", ""}
		}
		want := []seenMsg{
			{StreamStdin, rev.MethodServerDiscover, "c>s", m26},
			{StreamStdin, mcp.MethodInitialize, "c>s", m25},
			{StreamStdin, "tools/list", "c>s", m25},
			{StreamStdout, "", "s>c", answers[0]},
			{StreamStdout, "", "s>c", answers[1]},
			{StreamStdout, "", "s>c", answers[2]},
		}
		if got := w.take(); !slices.Equal(got, want) {
			t.Errorf("shared %v: saw %+v, want %+v", shared, got, want)
		}
	}

	set := setOf(t, "drop-response:revision=2026-07-28")
	opts := &PlaceOptions{Eras: new(rev.Eras)}
	var sink, got bytes.Buffer
	if err := Lines(ctx, &sink, strings.NewReader(in), set, StreamStdin, opts); err != nil {
		t.Fatal(err)
	}
	if err := Lines(ctx, &got, strings.NewReader(out), set, StreamStdout, opts); err != nil {
		t.Fatal(err)
	}
	if want := out[strings.Index(out, "\n")+1:]; got.String() != want {
		t.Errorf("drop-response:revision=2026-07-28 passed %q, want %q", got.String(), want)
	}
}

// TestRevisionSelectorParse: revision= takes the revisions tasksim knows;
// any other is an error naming the parameter and the known ones.
func TestRevisionSelectorParse(t *testing.T) {
	b, err := Builtin().Parse("drop-response:revision=2025-11-25")
	if err != nil || b.Selector.Revision != mcp.Revision20251125 {
		t.Fatalf("revision=2025-11-25: %+v %v", b, err)
	}
	_, err = Builtin().Parse("drop-response:revision=2024-11-05")
	var se *SpecError
	if !errors.As(err, &se) || se.Part != "revision=2024-11-05" || !strings.Contains(err.Error(), "2026-07-28 or 2025-11-25") {
		t.Errorf("revision=2024-11-05: %v, want a SpecError naming it and the known revisions", err)
	}
}
