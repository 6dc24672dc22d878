package plant

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// ClientFlaws plants known bugs in the reference client, each from
// outside it, for the simulator's and the check suite's tests: they break
// the client one bug at a time and expect exactly the rule that names it
// to fail. The zero value plants none.
//
//	CallTool ──▶ [result printer: NoDedup] ──▶ reference client ──▶ [Conn: NoResume] ──▶ transport
//	                                             └── Options.PollPolicy: IgnorePollInterval
type ClientFlaws struct {
	// NoDedup prints segments received twice twice: the result of a
	// complete stream holds every copy, in seqNr order (CLIENT-DEDUP).
	NoDedup bool
	// NoResume gives a lost stream up instead of resuming it with
	// tasks/result and lastSeqNr: the call ends incomplete (CLIENT-RESUME).
	// Give the transport no resumption either: its MaxReconnects set to
	// MaxReconnects().
	NoResume bool
	// IgnorePollInterval polls tasks/get every 10ms whatever the task's
	// pollInterval (CLIENT-TASKS-GET-INTERVAL).
	IgnorePollInterval bool
}

// fastPoll is the interval of a client that ignores pollInterval.
const fastPoll = 10 * time.Millisecond

// PollPolicy is the client's Options.PollPolicy: nil, or with
// IgnorePollInterval one that waits 10ms whatever it is asked.
func (f ClientFlaws) PollPolicy() func(time.Duration) time.Duration {
	if !f.IgnorePollInterval {
		return nil
	}
	return func(time.Duration) time.Duration { return fastPoll }
}

// MaxReconnects is the Streamable HTTP transport's MaxReconnects for the
// client: 0 (the default), or with NoResume -1, so that a broken stream
// is given up at once instead of resumed with Last-Event-ID.
func (f ClientFlaws) MaxReconnects() int {
	if f.NoResume {
		return -1
	}
	return 0
}

// Transport decorates the client's transport: with NoResume, the loss of
// the stream answering a tools/call reaches the client as an error answer
// to that call, which the client takes as the call's end. Nothing of it
// goes on the wire.
func (f ClientFlaws) Transport(t mcp.Transport) mcp.Transport {
	if !f.NoResume {
		return t
	}
	return mcp.DecorateTransport(t, func(c mcp.Conn) mcp.Conn {
		return mcp.Decorate(c, mcp.ConnFuncs{Read: func(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
			m, err := inner.Read(ctx)
			var se *mcp.StreamError
			if err != nil && errors.As(err, &se) && se.Method == mcp.MethodToolsCall {
				return mcp.NewError(se.ID, mcp.Errorf(mcp.CodeInternalError, "gave up: %v", se)), nil
			}
			return m, err
		}})
	})
}

// CallTool runs s.CallTool(ctx, o); with NoDedup, the result of a call
// whose content was merged from its segments holds each segment as many
// times as it was received.
func (f ClientFlaws) CallTool(ctx context.Context, s *client.Session, o client.CallOptions) (*client.CallResult, error) {
	if !f.NoDedup {
		return s.CallTool(ctx, o)
	}
	var mu sync.Mutex
	segs := map[int64]mcp.ContentBlock{}
	dups := map[int64]int{}
	onSegment, onEvent := o.OnSegment, o.OnEvent
	o.OnSegment = func(sg mcp.Segment) {
		mu.Lock()
		segs[sg.SeqNr] = sg.ContentBlock
		mu.Unlock()
		if onSegment != nil {
			onSegment(sg)
		}
	}
	o.OnEvent = func(e client.Event) {
		if e.Kind == client.EventDuplicate && e.SeqNr > 0 {
			mu.Lock()
			dups[e.SeqNr]++
			mu.Unlock()
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	res, err := s.CallTool(ctx, o)
	if res != nil {
		mu.Lock()
		res.Content = withDuplicates(res, segs, dups)
		mu.Unlock()
	}
	return res, err
}

// withDuplicates returns res's content with every duplicate segment in
// it, when that content starts with res's segments merged (the result
// came from them), else as it is.
func withDuplicates(res *client.CallResult, segs map[int64]mcp.ContentBlock, dups map[int64]int) []mcp.ContentBlock {
	seqs := make([]int64, 0, len(segs))
	for n := range segs {
		seqs = append(seqs, n)
	}
	slices.SortFunc(seqs, cmp.Compare)
	if len(seqs) == 0 || len(dups) == 0 || len(res.Content) < len(seqs) {
		return res.Content
	}
	for i, n := range seqs {
		if b := res.Content[i]; b.Type != segs[n].Type || b.Text != segs[n].Text {
			return res.Content
		}
	}
	var out []mcp.ContentBlock
	for _, n := range seqs {
		for range 1 + dups[n] {
			out = append(out, segs[n])
		}
	}
	return append(out, res.Content[len(seqs):]...)
}
