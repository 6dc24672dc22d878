package plant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// ClientBug is the reference client (mcp/client) with one SEP-1905
// streaming bug planted from outside: a decorator of its connection
// (mcp.Conn), of its HTTP round trips, or of what it prints. It runs one
// call, prints the result as tasksim call does (the text blocks,
// concatenated) and reports success or failure as its exit status would.
//
//	reference client ──Conn──▶ [conn decorator] ──▶ transport ──HTTP──▶ [round tripper] ──▶ server
//	      │
//	      └── result, segments in arrival order ──▶ [printer] ──▶ stdout
type ClientBug struct {
	// Name says what the client does wrong.
	Name string
	// Rule is the rule that must catch it, and no other.
	Rule string
	// HTTPOnly bugs need a stream that can be cut: over stdio there is
	// nothing for them to do.
	HTTPOnly bool

	// newRun makes the bug's state for one run.
	newRun func() *clientRun
}

// clientRun is one run of a planted client: its decorators and printer.
type clientRun struct {
	conn func(mcp.Conn) mcp.Conn
	rt   func(http.RoundTripper) http.RoundTripper
	// call runs the call on s and returns what the client prints and
	// the error that makes it exit non-zero.
	call func(ctx context.Context, s *client.Session, o client.CallOptions) (string, error)
}

// ClientBugs are the planted client bugs, each with the rule that names it.
func ClientBugs() []ClientBug {
	return []ClientBug{
		{Name: "ignores seqNr gaps: numbers segments by arrival, never asks for the missing one, exits 0", Rule: "CLIENT-COMPLETE", newRun: ignoresGaps},
		{Name: "resumes with lastSeqNr 0", Rule: "CLIENT-RESUME", newRun: resumesFromZero},
		{Name: "gives up after its stream is cut, deletes its session, exits 0", Rule: "CLIENT-RESUME", HTTPOnly: true, newRun: givesUpAfterCut},
		{Name: "prints segments in arrival order, not seqNr order", Rule: "CLIENT-COMPLETE", newRun: arrivalOrder},
		{Name: "drops the last part of the result", Rule: "CLIENT-COMPLETE", newRun: dropsLast},
	}
}

// Run runs the planted client's call o against the server at url over
// Streamable HTTP, or over tr when tr is not nil (stdio), and returns
// what it printed and the error its exit status would report.
func (b ClientBug) Run(ctx context.Context, url string, tr mcp.Transport, o client.CallOptions) (string, error) {
	run := b.newRun()
	if tr == nil {
		rt := http.DefaultTransport
		if run.rt != nil {
			rt = run.rt(rt)
		}
		tr = &streamhttp.ClientTransport{URL: url, HTTPClient: &http.Client{Transport: rt}}
	}
	if run.conn != nil {
		tr = mcp.DecorateTransport(tr, run.conn)
	}
	s, err := client.New(nil).Connect(ctx, tr)
	if err != nil {
		return "", err
	}
	defer s.Close() // over HTTP, DELETE
	call := run.call
	if call == nil {
		call = printResult
	}
	return call(ctx, s, o)
}

// printResult is the reference client's own behaviour: the result's text,
// success only with a complete result.
func printResult(ctx context.Context, s *client.Session, o client.CallOptions) (string, error) {
	res, err := s.CallTool(ctx, o)
	if res == nil {
		return "", err
	}
	if err == nil && !res.Complete {
		err = errors.New("incomplete result")
	}
	return text(res.Content), err
}

func text(blocks []mcp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Type == mcp.ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ignoresGaps numbers the segments it reads by arrival (1, 2, 3, ...)
// instead of reading their seqNr: a segment lost on the way leaves no gap
// it can see, so it never asks tasks/result for it and prints a result
// short of that segment as complete (SEP-1905, Client Implementation
// Guide › Error Handling: "If gaps in seqNr are detected, use tasks/result
// with lastSeqNr to request missing segments").
func ignoresGaps() *clientRun {
	var mu sync.Mutex
	labels := map[int64]int64{}
	return &clientRun{conn: func(c mcp.Conn) mcp.Conn {
		return mcp.Decorate(c, mcp.ConnFuncs{Read: func(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
			m, err := inner.Read(ctx)
			if err != nil || m.Kind() != mcp.KindResponse || m.Result == nil {
				return m, err
			}
			mu.Lock()
			defer mu.Unlock()
			m.Result = editSegments(m.Result, func(seq int64) int64 {
				if l, ok := labels[seq]; ok {
					return l
				}
				labels[seq] = int64(len(labels) + 1)
				return labels[seq]
			})
			return m, nil
		}})
	}}
}

// fieldPartialContent is SEP-1905's name for a result's segments.
const fieldPartialContent = "partial-content"

// editSegments rewrites the seqNr of each segment of a result's
// partial-content with f; a result without segments is returned as is.
func editSegments(result json.RawMessage, f func(int64) int64) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj[fieldPartialContent] == nil {
		return result
	}
	var segs []map[string]json.RawMessage
	if json.Unmarshal(obj[fieldPartialContent], &segs) != nil {
		return result
	}
	for _, s := range segs {
		var n int64
		if json.Unmarshal(s["seqNr"], &n) == nil {
			s["seqNr"], _ = json.Marshal(f(n))
		}
	}
	obj[fieldPartialContent], _ = json.Marshal(segs)
	out, err := json.Marshal(obj)
	if err != nil {
		return result
	}
	return out
}

// resumesFromZero sends every tasks/result that resumes (with lastSeqNr)
// with lastSeqNr 0, as if it had received nothing: an invalid lastSeqNr
// (SEP-1905, Case 3 › Resuming Streaming: "seqNr values start from 1,
// lastSeqNr of 0 or less is invalid").
func resumesFromZero() *clientRun {
	return &clientRun{conn: func(c mcp.Conn) mcp.Conn {
		return mcp.Decorate(c, mcp.ConnFuncs{Write: func(ctx context.Context, inner mcp.Conn, m *mcp.Message) error {
			if m.Method == mcp.MethodTasksResult {
				var p map[string]json.RawMessage
				if json.Unmarshal(m.Params, &p) == nil && p["lastSeqNr"] != nil {
					p["lastSeqNr"] = json.RawMessage("0")
					if raw, err := json.Marshal(p); err == nil {
						c := *m
						c.Params = raw
						m = &c
					}
				}
			}
			return inner.Write(ctx, m)
		}})
	}}
}

// givesUpAfterCut notices that the SSE stream answering its call ended
// before the final response (isComplete: true), and gives up: it resumes
// neither with Last-Event-ID nor with tasks/result, prints what it had,
// deletes its session and exits 0.
func givesUpAfterCut() *clientRun {
	cut := make(chan struct{})
	var once sync.Once
	giveUp := func() { once.Do(func() { close(cut) }) }
	run := &clientRun{}
	run.rt = func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
				giveUp()
				return nil, errors.New("gave up: this client does not resume")
			}
			resp, err := next.RoundTrip(req)
			if err != nil || req.Method != http.MethodPost || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				return resp, err
			}
			resp.Body = &finalWatch{ReadCloser: resp.Body, cut: giveUp}
			return resp, nil
		})
	}
	run.call = func(ctx context.Context, s *client.Session, o client.CallOptions) (string, error) {
		arrived := inArrivalOrder(&o)
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, err := printResult(callCtx, s, o)
			done <- result{out, err}
		}()
		select {
		case r := <-done:
			return r.out, r.err
		case <-cut:
			cancel()
			<-done
			return arrived(), nil
		}
	}
	return run
}

// finalWatch reads an SSE answer and calls cut if it ends before an
// event with isComplete: true.
type finalWatch struct {
	io.ReadCloser
	cut   func()
	line  []byte
	final bool
}

func (w *finalWatch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			w.line = append(w.line, b)
			continue
		}
		if bytes.HasPrefix(w.line, []byte("data:")) && bytes.Contains(w.line, []byte(`"isComplete":true`)) {
			w.final = true
		}
		w.line = w.line[:0]
	}
	if err != nil && !w.final {
		w.cut()
	}
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// arrivalOrder prints the segments in the order they arrived, not in
// seqNr order: a segment fetched later to fill a gap lands at the end
// (SEP-1905, Client Implementation Guide › Handling Streaming Results,
// Segment Merging: "Sort segments by seqNr in ascending order").
func arrivalOrder() *clientRun {
	return &clientRun{call: func(ctx context.Context, s *client.Session, o client.CallOptions) (string, error) {
		arrived := inArrivalOrder(&o)
		out, err := printResult(ctx, s, o)
		if got := arrived(); got != "" {
			return got, err
		}
		return out, err // no segments: the result came whole
	}}
}

// inArrivalOrder makes o collect the text of its segments as they
// arrive (OnSegment may be called from two goroutines, one at a time);
// the function returned gives it.
func inArrivalOrder(o *client.CallOptions) func() string {
	var mu sync.Mutex
	var b strings.Builder
	o.OnSegment = func(sg mcp.Segment) {
		mu.Lock()
		defer mu.Unlock()
		b.WriteString(text([]mcp.ContentBlock{sg.ContentBlock}))
	}
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// dropsLast prints the result without its last content block.
func dropsLast() *clientRun {
	return &clientRun{call: func(ctx context.Context, s *client.Session, o client.CallOptions) (string, error) {
		res, err := s.CallTool(ctx, o)
		if res == nil {
			return "", err
		}
		if err == nil && !res.Complete {
			err = errors.New("incomplete result")
		}
		blocks := res.Content
		if len(blocks) > 0 {
			blocks = blocks[:len(blocks)-1]
		}
		return text(blocks), err
	}}
}
