package recorder_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// fakeConn is an in-memory mcp.Conn: the test feeds what Read returns on
// in and takes what was written from out.
type fakeConn struct {
	in     chan *mcp.Message
	out    chan *mcp.Message
	closed chan struct{}
	once   sync.Once
}

func newFakeConn() *fakeConn {
	return &fakeConn{in: make(chan *mcp.Message, 16), out: make(chan *mcp.Message, 16), closed: make(chan struct{})}
}

func (f *fakeConn) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case m := <-f.in:
		return m, nil
	case <-f.closed:
		return nil, mcp.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeConn) Write(ctx context.Context, m *mcp.Message) error {
	select {
	case <-f.closed:
		return mcp.ErrClosed
	default:
	}
	select {
	case f.out <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeConn) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeConn) Stats() mcp.WireStats { return mcp.WireStats{MessagesSent: 42} }

func msg(t *testing.T, s string) *mcp.Message {
	t.Helper()
	m, err := mcp.DecodeMessage([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	jCall    = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_text","task":{"ttl":60000}}}`
	jCreated = `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":60000}}}`
	jPartial = `{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"t-1","seq":0,"content":[{"type":"text","text":"a"}]}}`
	jResult  = `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t-1","lastSeqNr":1}}`
	jSegment = `{"jsonrpc":"2.0","id":2,"result":{"partial-content":[{"seqNr":2,"type":"text","text":"b"}],"isComplete":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}}`
)

func TestConnRecordsMessagesInOrder(t *testing.T) {
	rg := newTraceRig(t)
	inner := newFakeConn()
	c := recorder.Conn(inner, rg.pipe, &recorder.ConnOptions{Note: "fake server"})
	ctx := context.Background()

	if s, ok := mcp.ConnAs[mcp.StatsReporter](c); !ok || s.Stats().MessagesSent != 42 {
		t.Fatalf("ConnAs did not find the inner conn's StatsReporter: %v", ok)
	}
	read := func(want string) {
		t.Helper()
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m != nil && want != "" && m.Method != want {
			t.Fatalf("read %q, want %q", m.Method, want)
		}
	}

	call := msg(t, jCall)
	if err := c.Write(ctx, call); err != nil {
		t.Fatal(err)
	}
	if got := <-inner.out; got != call {
		t.Fatal("the message written is not the one passed on")
	}
	rg.clk.Advance(time.Second)
	inner.in <- msg(t, jCreated)
	read("")
	rg.clk.Advance(time.Second)
	inner.in <- msg(t, jPartial)
	read("notifications/tasks/partial")
	if err := c.Write(ctx, msg(t, jResult)); err != nil {
		t.Fatal(err)
	}
	<-inner.out
	rg.clk.Advance(time.Second)
	inner.in <- msg(t, jSegment)
	read("")

	// A read the caller gave up on is not part of the history.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Read(cctx); err == nil {
		t.Fatal("read on a cancelled context succeeded")
	}
	rg.clk.Advance(time.Second)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for range 2 { // the first failure after Close is recorded, once
		if _, err := c.Read(ctx); err == nil {
			t.Fatal("read after Close succeeded")
		}
	}

	recs := rg.finish(t)
	var got []string
	for _, r := range recs {
		got = append(got, line(r))
	}
	want := []string{
		`0 +0s conn=1  - conn-open side=wire "fake server"`,
		`1 +0s conn=1 conn c>s message side=wire request tools/call id=1 task=`,
		`2 +1s conn=1 conn s>c message side=wire response  id=1 task=t-1 status=working`,
		`3 +2s conn=1 conn s>c message side=wire notification notifications/tasks/partial id= task=t-1 seq=0`,
		`4 +2s conn=1 conn c>s message side=wire request tasks/result id=2 task=t-1`,
		`5 +3s conn=1 conn s>c message side=wire response  id=2 task=t-1 seqNr=[2]`,
		`6 +4s conn=1  - conn-close side=wire`,
		`7 +4s conn=1 conn - conn-error side=wire "read: connection closed"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	// Raw is the message's JSON, and the record's wall time is the clock's.
	if m, err := mcp.DecodeMessage(recs[5].Raw); err != nil || m.ID.String() != "2" || !recs[5].Wall.Equal(epoch.Add(3*time.Second)) {
		t.Errorf("record 5: %s at %v (%v)", recs[5].Raw, recs[5].Wall, err)
	}
}

// dropper is a stand-in for the fault layer: it drops the nth message it
// reads and records the fault, naming the dropped message's record.
func dropper(inner mcp.Conn, p *recorder.Pipeline, nth int) mcp.Conn {
	n := 0
	return mcp.Decorate(inner, mcp.ConnFuncs{Read: func(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
		for {
			m, err := inner.Read(ctx)
			if err != nil {
				return nil, err
			}
			if n++; n != nth {
				return m, nil
			}
			idx, known := p.IndexOf(m)
			f := traces.Fault{Name: "drop-partial", Params: []traces.Param{{Key: "nth", Value: fmt.Sprint(nth)}},
				Target: traces.Target{Conn: 1, Stream: recorder.DefaultConnStream, Method: m.Method, Record: idx, HasRecord: known},
				Action: "dropped"}
			p.AddFault(f, "")
		}
	}})
}

// With a fault layer between two recording decorators, the trace holds
// both views in order: what the server sent (side server), what the
// client got (side client), and the fault between.
func TestConnOnBothSidesOfAFaultLayer(t *testing.T) {
	rg := newTraceRig(t)
	inner := newFakeConn()
	server := recorder.Conn(inner, rg.pipe, &recorder.ConnOptions{Side: traces.SideServer})
	c := recorder.Conn(dropper(server, rg.pipe, 2), rg.pipe, &recorder.ConnOptions{Side: traces.SideClient})
	ctx := context.Background()

	if err := c.Write(ctx, msg(t, jCall)); err != nil {
		t.Fatal(err)
	}
	inner.in <- msg(t, jCreated)
	inner.in <- msg(t, jPartial)
	inner.in <- msg(t, jSegment)
	for range 2 {
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	recs := rg.finish(t)
	var got []string
	for _, r := range recs {
		got = append(got, line(r))
	}
	want := []string{
		`0 +0s conn=1  - conn-open side=server`,
		`1 +0s conn=1  - conn-open side=client`,
		`2 +0s conn=1 conn c>s message side=client request tools/call id=1 task=`,
		`3 +0s conn=1 conn c>s message side=server request tools/call id=1 task=`,
		`4 +0s conn=1 conn s>c message side=server response  id=1 task=t-1 status=working`,
		`5 +0s conn=1 conn s>c message side=client response  id=1 task=t-1 status=working`,
		`6 +0s conn=1 conn s>c message side=server notification notifications/tasks/partial id= task=t-1 seq=0`,
		`7 +0s conn=1 conn - fault side=wire fault: drop-partial nth=2 on conn=1 stream=conn method=notifications/tasks/partial record=6: dropped`,
		`8 +0s conn=1 conn s>c message side=server response  id=2 task=t-1 seqNr=[2]`,
		`9 +0s conn=1 conn s>c message side=client response  id=2 task=t-1 seqNr=[2]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	view := func(end traces.Side) (idx []uint64) {
		for _, r := range recs {
			if r.Kind == traces.KindMessage && r.Side.InView(end) {
				idx = append(idx, r.Index)
			}
		}
		return idx
	}
	if c, s := view(traces.SideClient), view(traces.SideServer); !slices.Equal(c, []uint64{2, 5, 9}) || !slices.Equal(s, []uint64{3, 4, 6, 8}) {
		t.Errorf("client view %v, server view %v", c, s)
	}
}
