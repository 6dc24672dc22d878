package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// truth is the scripted server's own record of the results it meant to
// deliver: an mcp.Endpoint decorator that reads every answer to tools/call
// and tasks/result as the server hands it to the transport, before any
// misbehaviour on the wire drops, repeats or cuts it. A client under test
// is judged against it (CLIENT-COMPLETE), not against the wire, which
// lacks what the scripted server lost on purpose.
//
//	transport ──Handle──▶ truth ──Handle──▶ server session
//	transport ◀──Reply── truth (records) ◀──Reply── server session
type truth struct {
	inner mcp.Endpoint
	// hold learns from it what the client asks of a task and when the
	// server first answered the call that made it (nil: no hold).
	hold *holder

	mu     sync.Mutex
	calls  []*truthCall
	byTask map[string]*truthCall
}

// truthCall is what the server sent of one tools/call's result: segments
// by seqNr, the final response's content, or the whole result at once.
type truthCall struct {
	segs     map[int64][]mcp.ContentBlock
	tail     []mcp.ContentBlock
	complete bool // isComplete: true was sent
	whole    []mcp.ContentBlock
	hasWhole bool // a result in one piece: a plain, immediate or canonical answer
}

func newTruth(inner mcp.Endpoint, hold *holder) *truth {
	return &truth{inner: inner, hold: hold, byTask: map[string]*truthCall{}}
}

// NewSession implements mcp.Endpoint.
func (t *truth) NewSession(out mcp.Outbox) mcp.Session {
	ts := &truthSession{t: t}
	ts.inner = t.inner.NewSession(out)
	return ts
}

type truthSession struct {
	t     *truth
	inner mcp.Session
}

func (s *truthSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil && msg.Kind() == mcp.KindRequest {
		switch msg.Method {
		case mcp.MethodToolsCall:
			s.t.mu.Lock()
			c := &truthCall{segs: map[int64][]mcp.ContentBlock{}}
			s.t.calls = append(s.t.calls, c)
			s.t.mu.Unlock()
			r = &truthReplier{t: s.t, inner: r, call: c}
		case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel:
			var p struct {
				TaskID string `json:"taskId"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			s.t.hold.request(msg.Method, p.TaskID)
			if msg.Method == mcp.MethodTasksResult {
				r = &truthReplier{t: s.t, inner: r, taskID: p.TaskID}
			}
		}
	}
	s.inner.Handle(ctx, msg, r)
}

func (s *truthSession) Close() { s.inner.Close() }

// truthReplier records the results of one answer, then passes it on.
type truthReplier struct {
	t      *truth
	inner  mcp.Replier
	call   *truthCall // tools/call; nil for tasks/result, found by task
	taskID string
}

func (r *truthReplier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	if msg != nil && msg.Kind() == mcp.KindResponse && msg.Error == nil {
		if id := r.t.record(r, msg); r.call != nil && id != "" {
			r.t.hold.answered(id)
		}
	}
	return r.inner.Reply(ctx, msg, final)
}

// record records the results msg carries and returns the id of the task
// it answers for, if any.
func (t *truth) record(r *truthReplier, msg *mcp.Message) string {
	var res mcp.ToolCallResponse
	if json.Unmarshal(msg.Result, &res) != nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := r.call
	id := r.taskID
	if id == "" && res.Task != nil {
		id = res.Task.TaskID
	}
	if id == "" {
		id, _ = res.Meta.RelatedTaskID()
	}
	if c != nil && id != "" {
		t.byTask[id] = c
	}
	if c == nil {
		if c = t.byTask[id]; c == nil {
			return id
		}
	}
	for _, s := range res.PartialContent {
		if _, ok := c.segs[s.SeqNr]; !ok {
			c.segs[s.SeqNr] = []mcp.ContentBlock{s.ContentBlock}
		}
	}
	switch {
	case res.IsComplete != nil:
		if *res.IsComplete {
			c.complete, c.tail = true, res.Content
		}
	case res.Task == nil && res.Content != nil:
		c.whole, c.hasWhole = res.Content, true
	}
	return id
}

// result returns the text pieces of the first tool call's result, in
// order (a segment or a content block each), and whether the server had
// sent all of it; no pieces and false when no tool was called.
func (t *truth) result() (pieces []string, complete, called bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) == 0 {
		return nil, false, false
	}
	c := t.calls[0]
	if c.hasWhole {
		// The result in one piece is the merged result (SEP-1905,
		// Relationship to Existing Tasks Specification).
		return blockTexts(c.whole), true, true
	}
	keys := make([]int64, 0, len(c.segs))
	for k := range c.segs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	complete = c.complete
	for i, k := range keys {
		if k != int64(i+1) {
			complete = false // a seqNr the server never sent
		}
		pieces = append(pieces, blockTexts(c.segs[k])...)
	}
	return append(pieces, blockTexts(c.tail)...), complete, true
}

// blockTexts returns the text of each text block, one piece each.
func blockTexts(blocks []mcp.ContentBlock) []string {
	var out []string
	for _, b := range blocks {
		if b.Type == mcp.ContentText && b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return out
}

// delivery is what a client's output shows of a result: the pieces it
// printed (indexes into the result's pieces) in the order printed, and
// where text that is no piece begins (-1: nowhere).
type delivery struct {
	order []int
	stray int
}

// readOutput splits got into the result's pieces, left to right: at each
// point the longest piece that begins there; of equal ones the first not
// yet printed.
func readOutput(got string, pieces []string) delivery {
	d := delivery{stray: -1}
	printed := make([]bool, len(pieces))
	for p := 0; p < len(got); {
		best := -1
		for i, pc := range pieces {
			if !strings.HasPrefix(got[p:], pc) {
				continue
			}
			if best < 0 || len(pc) > len(pieces[best]) || len(pc) == len(pieces[best]) && printed[best] && !printed[i] {
				best = i
			}
		}
		if best < 0 {
			d.stray = p
			return d
		}
		d.order = append(d.order, best)
		printed[best] = true
		p += len(pieces[best])
	}
	return d
}

// repeated lists the pieces printed more than once (CLIENT-DEDUP), from 1.
func (d delivery) repeated() []int {
	seen := map[int]int{}
	var out []int
	for _, i := range d.order {
		if seen[i]++; seen[i] == 2 {
			out = append(out, i+1)
		}
	}
	return out
}

// incomplete says how the output falls short of the whole result, each
// piece once and in order, counting a repeated piece once (repeats are
// CLIENT-DEDUP's): "" when it does not.
func (d delivery) incomplete(pieces []string, got string) string {
	var first []int
	seen := map[int]bool{}
	for _, i := range d.order {
		if !seen[i] {
			seen[i] = true
			first = append(first, i)
		}
	}
	var missing []string
	for i := range pieces {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d (%q)", i+1, abbrev(pieces[i])))
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Sprintf("the client printed %d of the %d parts of the result; missing part %s", len(pieces)-len(missing), len(pieces), strings.Join(missing, ", "))
	case d.stray >= 0:
		return fmt.Sprintf("the client printed text that is no part of the result at byte %d: %q", d.stray, abbrev(got[d.stray:]))
	}
	for k, i := range first {
		if i != k {
			return fmt.Sprintf("the client printed part %d of the result before part %d", i+1, k+1)
		}
	}
	return ""
}
