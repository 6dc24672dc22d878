package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/traces"
)

// recordedStream is what a SEP-1905 streaming call with SEP-2679 partials
// looks like from the client: segments on responses sharing the request's
// id, partial notifications, a status notification, the final response.
var recordedStream = []string{
	`{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t1","status":"working"},"partial-content":[{"seqNr":1,"content":[{"type":"text","text":"a"}]}],"isComplete":false}}`,
	`{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"t1","seq":0,"content":[{"type":"text","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"partial-content":[{"seqNr":2,"content":[{"type":"text","text":"b"}]}],"isComplete":false}}`,
	`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"partial-content":[{"seqNr":3,"content":[{"type":"text","text":"c"}]}],"isComplete":true}}`,
}

// scriptConn is an inner Conn that reads a recorded stream and keeps what
// is written.
type scriptConn struct {
	msgs    []*mcp.Message
	written []*mcp.Message
	closed  bool
}

func newScriptConn(t testing.TB) *scriptConn {
	c := &scriptConn{}
	for _, s := range recordedStream {
		m, err := mcp.DecodeMessage([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		c.msgs = append(c.msgs, m)
	}
	return c
}

func (c *scriptConn) Read(ctx context.Context) (*mcp.Message, error) {
	if c.closed {
		return nil, mcp.ErrClosed
	}
	if len(c.msgs) == 0 {
		return nil, errEnd
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}

func (c *scriptConn) Write(ctx context.Context, m *mcp.Message) error {
	if c.closed {
		return mcp.ErrClosed
	}
	c.written = append(c.written, m)
	return nil
}

func (c *scriptConn) Close() error { c.closed = true; return nil }

var errEnd = errors.New("end of the recorded stream")

// readAll reads until an error and returns the index in recordedStream of
// each message read (by its bytes) and the error.
func readAll(t *testing.T, conn mcp.Conn) ([]int, error) {
	t.Helper()
	var got []int
	for range 20 {
		// A stalled read ends with its context, a minute later in the
		// bubble's time.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := conn.Read(ctx)
		cancel()
		if err != nil {
			return got, err
		}
		raw, _ := m.MarshalJSON()
		got = append(got, indexOf(t, raw))
	}
	t.Fatal("read more messages than the stream has")
	return nil, nil
}

func indexOf(t *testing.T, raw []byte) int {
	for i, s := range recordedStream {
		m, _ := mcp.DecodeMessage([]byte(s))
		want, _ := m.MarshalJSON()
		if string(want) == string(raw) {
			return i
		}
	}
	t.Fatalf("read a message that is not in the stream, or changed: %s", raw)
	return -1
}

// TestConnContract runs every registered fault that acts on what a client
// reads against the recorded stream: each changes exactly what it says,
// every other message passes unchanged and in order.
func TestConnContract(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    []int
		wantErr error
	}{
		{"drop-sse-event:nth=2", []int{0, 2, 3, 4}, errEnd},
		{"drop-partial", []int{0, 2, 3, 4}, errEnd},
		{"drop-response:nth=3", []int{0, 1, 3, 4}, errEnd},
		{"duplicate-seqnr:seqnr=2", []int{0, 1, 2, 2, 3, 4}, errEnd},
		{"duplicate-seqnr:seq=0", []int{0, 1, 1, 2, 3, 4}, errEnd},
		{"reorder:nth=1", []int{1, 0, 2, 3, 4}, errEnd},
		{"reorder:nth=5", []int{0, 1, 2, 3, 4}, errEnd}, // held at the end, released when the stream ends
		{"disconnect:after=2", []int{0, 1}, ErrCut},
		{"disconnect:nth=3,at=before", []int{0, 1}, ErrCut},
		{"disconnect:nth=3,at=mid", []int{0, 1}, ErrCut},
		{"stall:nth=4", []int{0, 1, 2}, context.DeadlineExceeded},
		{"delay:d=1s,nth=2", []int{0, 1, 2, 3, 4}, errEnd},
		{"drop-sse-event:method=notifications/tasks/status", []int{0, 1, 2, 4}, errEnd},
		{"drop-sse-event:id=2,count=2", []int{1, 3, 4}, errEnd},
		{"drop-sse-event:seqnr=3", []int{0, 1, 2, 3}, errEnd},
		{"drop-sse-event:task=t1,nth=2", []int{0, 2, 3, 4}, errEnd},
		{"http-status", []int{0, 1, 2, 3, 4}, errEnd},    // never on a Conn
		{"server-restart", []int{0, 1, 2, 3, 4}, errEnd}, // acts on what the client writes
		{"ttl-expiry", []int{0, 1, 2, 3, 4}, errEnd},     // acts on requests
	} {
		// In a synctest bubble the wall clock is virtual: a delay or a stall
		// takes no real time.
		t.Run(tc.spec, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := Builtin().Parse(tc.spec)
				if err != nil {
					t.Fatal(err)
				}
				set := NewSet(1, b)
				conn := Conn(newScriptConn(t), set, nil)
				start := time.Now()
				got, err := readAll(t, conn)
				if tc.spec == "delay:d=1s,nth=2" && time.Since(start) != time.Second {
					t.Errorf("the delay took %v of bubble time, want 1s", time.Since(start))
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("read %v, want %v", got, tc.want)
				}
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("ended with %v, want %v", err, tc.wantErr)
				}
				fired := int64(0)
				for _, c := range set.Counts() {
					fired += c.Fired
				}
				if changed := !slices.Equal(tc.want, []int{0, 1, 2, 3, 4}) || tc.wantErr != errEnd; changed && fired == 0 {
					t.Errorf("the stream changed but no decision was recorded")
				}
			})
		})
	}
}

func TestConnWriteFaults(t *testing.T) {
	call := func(id int64) *mcp.Message {
		m, _ := mcp.NewRequest(mcp.IntID(id), "tools/call", map[string]any{"name": "slow_text", "task": map[string]any{"ttl": 60000}})
		return m
	}
	for _, tc := range []struct {
		spec string
		want string
	}{
		{"drop-sse-event", "1 2 3"}, // acts on what the server sends
		{"reorder:nth=1", "2 1 3"},
		{"duplicate-seqnr", "1 2 3"},
		{"drop-response", "1 2 3"},
		{"disconnect:nth=2,at=before", "1 cut"},
		{"ttl-expiry:ttl=5ms,nth=2", "1 2(ttl=5) 3"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			b, err := Builtin().Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			inner := newScriptConn(t)
			conn := Conn(inner, NewSet(1, b), nil)
			got := ""
			for id := int64(1); id <= 3; id++ {
				if err := conn.Write(context.Background(), call(id)); err != nil {
					got += "cut"
					break
				}
			}
			var ws []string
			for _, m := range inner.written {
				s := m.ID.String()
				var p struct {
					Task struct{ TTL int64 } `json:"task"`
				}
				_ = mcp.DecodeParams(m.Params, &p)
				if p.Task.TTL != 60000 {
					s += fmt.Sprintf("(ttl=%d)", p.Task.TTL)
				}
				ws = append(ws, s)
			}
			out := fmt.Sprint(ws)
			out = out[1 : len(out)-1]
			if got != "" {
				out += " " + got
			}
			if out != tc.want {
				t.Fatalf("server got %q, want %q", out, tc.want)
			}
		})
	}
}

// TestSameSeedSameDecisions: a probabilistic fault takes the same
// decisions on the same traffic for the same seed, across 100 runs, and
// other decisions for another seed.
func TestSameSeedSameDecisions(t *testing.T) {
	run := func(seed uint64) string {
		b, err := Builtin().Parse("drop-sse-event:p=0.5")
		if err != nil {
			t.Fatal(err)
		}
		d, _ := Builtin().Parse("delay:d=10ms,jitter=90ms")
		set := NewSet(seed, b, d)
		for n := 1; n <= 64; n++ {
			set.Decide(NewMsg(PlaceHTTP, StreamPost, fmt.Sprintf("post:s/%d", n%4), n, 2, []byte(recordedStream[n%len(recordedStream)])))
		}
		return fmt.Sprint(set.Applied())
	}
	first := run(7)
	for range 100 {
		if got := run(7); got != first {
			t.Fatalf("seed 7 decided differently:\n%s\n%s", first, got)
		}
	}
	if run(8) == first {
		t.Fatal("seeds 7 and 8 took the same 64 decisions")
	}
}

// With Split, messages are numbered within their logical stream, so a
// spec's nth names the same message whatever came between; after Stop
// every message passes.
func TestConnSplitAndStop(t *testing.T) {
	b, err := Builtin().Parse("drop-response:id=2,nth=2")
	if err != nil {
		t.Fatal(err)
	}
	raws := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"n":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"n":2}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"n":3}}`,
	}
	byID := func(_ traces.Direction, rpc *traces.RPCFields) string { return "id:" + rpc.ID }
	read := func(set *Set, stopAfter int) []string {
		inner := &scriptConn{}
		for _, r := range raws {
			m, err := mcp.DecodeMessage([]byte(r))
			if err != nil {
				t.Fatal(err)
			}
			inner.msgs = append(inner.msgs, m)
		}
		c := Conn(inner, set, &ConnOptions{Split: byID})
		var got []string
		for {
			m, err := c.Read(context.Background())
			if err != nil {
				return got
			}
			got = append(got, string(m.Result))
			if len(got) == stopAfter {
				set.Stop()
			}
		}
	}
	set := NewSet(1, b)
	if got := strings.Join(read(set, 0), " "); got != `{} {"n":1} {} {"n":3}` {
		t.Errorf("with Split: %s; want the second message of id 2 (the 4th read) dropped", got)
	}
	if a := set.Applied(); len(a) != 1 || a[0].Target.Stream != "stdout:id:2" || a[0].Target.N != 2 {
		t.Errorf("decisions %+v: want one, on stdout:id:2 #2", a)
	}
	if got := strings.Join(read(NewSet(1, b), 2), " "); got != `{} {"n":1} {} {"n":2} {"n":3}` {
		t.Errorf("stopped after two messages: %s; want every message", got)
	}
}

// lockedConn is a scriptConn that may be closed while it is read.
type lockedConn struct {
	mu sync.Mutex
	sc *scriptConn
}

func (c *lockedConn) Read(ctx context.Context) (*mcp.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sc.Read(ctx)
}

func (c *lockedConn) Write(ctx context.Context, m *mcp.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sc.Write(ctx, m)
}

func (c *lockedConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sc.Close()
}

// TestConnCloseEndsDelay: Close ends a read or a write held by a delay at
// once, with mcp.ErrClosed, as it ends a stall; the delay's hour never
// passes.
func TestConnCloseEndsDelay(t *testing.T) {
	for _, dir := range []string{"read", "write"} {
		t.Run(dir, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := Builtin().Parse("delay:d=1h")
				if err != nil {
					t.Fatal(err)
				}
				conn := Conn(&lockedConn{sc: newScriptConn(t)}, NewSet(1, b), nil)
				start := time.Now()
				done := make(chan error, 1)
				go func() {
					if dir == "read" {
						_, err := conn.Read(context.Background())
						done <- err
						return
					}
					m, _ := mcp.NewRequest(mcp.IntID(1), "tools/list", nil)
					done <- conn.Write(context.Background(), m)
				}()
				synctest.Wait() // held by the delay
				conn.Close()
				synctest.Wait()
				select {
				case err := <-done:
					if !errors.Is(err, mcp.ErrClosed) {
						t.Errorf("%s ended with %v, want mcp.ErrClosed", dir, err)
					}
					if d := time.Since(start); d != 0 {
						t.Errorf("%s ended after %v, want at once", dir, d)
					}
				default:
					t.Fatalf("%s still held by the delay after Close", dir)
				}
			})
		})
	}
}
