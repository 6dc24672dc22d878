package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/traces"
)

// servedExchange is one recorded HTTP exchange, as a client replay serves
// it: the request it answers and the server's side of it.
type servedExchange struct {
	req   step
	head  *traces.Record
	items []traces.Record
	// end is how the recorded answer ended: stepEnd (the server ended
	// it; abort set when it cut it), stepCut (the client cut it: the
	// answer stays open until the live client goes), or 0 (the trace
	// ends first: the same as a cut).
	end   stepKind
	abort bool
}

// requestKey is what a live request is matched by: its HTTP method and
// the JSON-RPC method of its body ("POST tools/call", "GET", "POST
// response" for a client's answer to a server's request).
func requestKey(method string, body []byte) string {
	if method != http.MethodPost {
		return method
	}
	msgs := splitBatch(body)
	if len(msgs) == 0 {
		return method
	}
	rpc := traces.DescribeMessage(msgs[0])
	switch {
	case rpc == nil:
		return method + " ?"
	case rpc.Type == "response":
		return method + " response"
	}
	return method + " " + rpc.Method
}

// clientServer serves a trace's server half: each live request gets the
// answer recorded for the request of the same key in the same order.
type clientServer struct {
	speed Speed
	ids   *idMap
	mu    sync.Mutex
	queue map[string][]*servedExchange
	order []*servedExchange // every exchange, in recorded order
	used  map[*servedExchange]bool
	first *Divergence
	sent  int
	cmpd  int
}

func newClientServer(s *script, speed Speed) *clientServer {
	cs := &clientServer{speed: speed, ids: newIDMap(), queue: map[string][]*servedExchange{}, used: map[*servedExchange]bool{}}
	cs.ids.echoed = true
	byEx := map[uint64]*servedExchange{}
	for _, st := range s.steps {
		if st.kind == stepRequest {
			ex := &servedExchange{req: st}
			byEx[st.ch] = ex
			key := requestKey(st.rec.HTTP.Method, st.body)
			cs.queue[key] = append(cs.queue[key], ex)
			cs.order = append(cs.order, ex)
			continue
		}
		ex := byEx[st.ch]
		if ex == nil || ex.end != 0 {
			continue
		}
		switch st.kind {
		case stepHead:
			rec := st.rec
			ex.head = &rec
		case stepItem:
			ex.items = append(ex.items, st.rec)
		case stepEnd:
			ex.end, ex.abort = stepEnd, st.rec.Kind == traces.KindConnError
		case stepCut:
			ex.end = stepCut
		}
	}
	return cs
}

func (cs *clientServer) diverge(d *Divergence) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.first == nil {
		cs.first = d
	}
}

func (cs *clientServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	key := requestKey(r.Method, body)
	cs.mu.Lock()
	var ex *servedExchange
	if q := cs.queue[key]; len(q) > 0 {
		ex, cs.queue[key] = q[0], q[1:]
		cs.used[ex] = true
	}
	cs.mu.Unlock()
	if ex == nil {
		cs.diverge(&Divergence{Stream: "client", Message: key, Reason: "the client sent a request the recording has no more of",
			Recorded: "no further " + key + " request", Live: string(body)})
		http.Error(w, "tasksim replay: the recording has no further "+key+" request", http.StatusInternalServerError)
		return
	}
	cs.compareRequest(ex, body)
	if ex.head == nil {
		http.Error(w, "tasksim replay: the recording has no answer to this request", http.StatusBadGateway)
		return
	}
	for _, f := range ex.head.HTTP.Header {
		switch strings.ToLower(f.Name) {
		case "content-length", "transfer-encoding", "date", "connection":
			continue
		}
		w.Header().Add(f.Name, f.Value)
	}
	start := time.Now()
	if ct, _ := ex.head.HTTP.Get("Content-Type"); mediaKind(ct) != "sse" {
		// A JSON answer (or none) goes out whole, with its length.
		var body []byte
		for _, it := range ex.items {
			body = append(body, cs.itemBytes(it)...)
		}
		if len(ex.items) > 0 && !cs.pace(r.Context(), start, ex.items[len(ex.items)-1].Offset, ex.req.rec.Offset) {
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(ex.head.HTTP.Status)
		w.Write(body)
		return
	}
	w.WriteHeader(ex.head.HTTP.Status)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for _, it := range ex.items {
		if !cs.pace(r.Context(), start, it.Offset, ex.req.rec.Offset) {
			return
		}
		if _, err := w.Write(cs.itemBytes(it)); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	switch {
	case ex.end == stepEnd && ex.abort:
		panic(http.ErrAbortHandler) // the recorded server cut it
	case ex.end == stepEnd:
	default:
		// The recorded client cut this answer: keep it open until the
		// live client does (or the replay ends).
		<-r.Context().Done()
	}
}

// pace waits until a message recorded at offset is due, counted from
// start, when its request (recorded at from) came; false if ctx ended.
func (cs *clientServer) pace(ctx context.Context, start time.Time, offset, from time.Duration) bool {
	d := cs.speed.due(offset, from) - time.Since(start)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// itemBytes is a recorded message as the live client gets it: a response
// carries the id of the live request it answers.
func (cs *clientServer) itemBytes(rec traces.Record) []byte {
	data := messageBytes(rec)
	changed := false
	if rpc := traces.DescribeMessage(data); rpc != nil && rpc.Type == "response" {
		if live, ok := cs.ids.lookup(cs.ids.request, rpc.ID); ok && live != rpc.ID {
			data, changed = withID(data, live), true
		}
	}
	if rec.Kind != traces.KindSSEEvent || rec.SSE == nil {
		return data
	}
	if !changed && len(rec.Raw) > 0 {
		return rec.Raw // the event's bytes as they were sent
	}
	f := rec.SSE
	var b bytes.Buffer
	if f.HasID {
		b.WriteString("id: " + f.ID + "\n")
	}
	if f.Event != "" {
		b.WriteString("event: " + f.Event + "\n")
	}
	if f.HasRetry {
		fmt.Fprintf(&b, "retry: %d\n", f.Retry.Milliseconds())
	}
	if len(data) > 0 || !f.HasID && !f.HasRetry {
		for _, line := range strings.Split(string(data), "\n") {
			b.WriteString("data: " + line + "\n")
		}
	} else if !f.NoData {
		b.WriteString("data:\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}

// withID returns the message with its id member replaced by id (JSON
// text as on the wire).
func withID(data []byte, id string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	m["id"] = json.RawMessage(id)
	b, err := json.Marshal(m)
	if err != nil {
		return data
	}
	return b
}

// compareRequest compares a live request's body with the recorded one,
// the request id mapped (the live client picks its own), and remembers
// the mapping for the answers.
func (cs *clientServer) compareRequest(ex *servedExchange, body []byte) {
	rec := ex.req.body
	recMsgs, liveMsgs := splitBatch(rec), splitBatch(body)
	cs.mu.Lock()
	cs.cmpd++
	cs.mu.Unlock()
	describe := requestKey(ex.req.rec.HTTP.Method, rec)
	if len(bytes.TrimSpace(rec)) == 0 && len(bytes.TrimSpace(body)) == 0 {
		return
	}
	if len(recMsgs) != len(liveMsgs) {
		cs.diverge(&Divergence{Record: ex.req.rec.Index, Stream: ex.req.rec.Stream, Message: describe,
			Reason: fmt.Sprintf("recorded %d messages in the body, live %d", len(recMsgs), len(liveMsgs)), Recorded: string(rec), Live: string(body)})
		return
	}
	for i := range recMsgs {
		rr, lr := traces.DescribeMessage(recMsgs[i]), traces.DescribeMessage(liveMsgs[i])
		live := liveMsgs[i]
		if rr != nil && lr != nil && rr.ID != "" && lr.ID != "" && rr.Type == "request" {
			cs.ids.bind(cs.ids.request, rr.ID, lr.ID)
			live = withID(live, rr.ID)
			describe = rr.Method + " id " + rr.ID
		}
		if d := cs.ids.compareJSON(recMsgs[i], live); d != nil {
			cs.diverge(&Divergence{Record: ex.req.rec.Index, Stream: ex.req.rec.Stream, Message: describe, Path: d.path, Reason: d.reason,
				Recorded: string(recMsgs[i]), Live: string(liveMsgs[i])})
			return
		}
	}
}

// ReplayClient serves the server half of the trace read by src to a
// client: command runs with the URL of a replaying server appended as its
// last argument and in TASKSIM_SERVER_URL (as tasksim check --client-cmd
// runs a client). Each live request gets the answer recorded for the
// request of the same method in the same order, its id mapped; the
// trace's faults act again (unless NoFaults), with o.Faults added. The
// first request that differs from the recorded one, has no recorded
// counterpart, or was recorded and never sent is the divergence. The
// replay is recorded and judged by the client rules.
func ReplayClient(ctx context.Context, src *traces.Reader, command []string, o *ReplayOptions) (*ReplayResult, error) {
	if o == nil {
		o = &ReplayOptions{}
	}
	if len(command) == 0 {
		return nil, fmt.Errorf("%w: no client command", ErrUnreachable)
	}
	s, err := loadView(src, traces.SideServer)
	if err != nil {
		return nil, err
	}
	if !s.http {
		return nil, fmt.Errorf("%w: a client replay serves Streamable HTTP traces only", ErrNotReplayable)
	}
	res := &ReplayResult{Target: strings.Join(command, " "), Speed: o.Speed.String(), Cut: s.cut}
	set, err := replayFaults(s, o, res)
	if err != nil {
		return nil, err
	}
	t, err := createReplayTrace(o.Record, replayHeader(s, o, res))
	if err != nil {
		return nil, err
	}
	res.Trace = t.path
	if err := t.finish(serveClient(ctx, s, command, o, set, res, t.Writer)); err != nil {
		return nil, err
	}
	v, err := harness.JudgeTrace(t.path, check.Client)
	if err != nil {
		return nil, err
	}
	res.Verdict = v
	return res, nil
}

// serveClient serves the server half of s to the client command, with
// the faults of set, recording into w.
func serveClient(ctx context.Context, s *script, command []string, o *ReplayOptions, set *faults.Set, res *ReplayResult, w *traces.Writer) error {
	cs := newClientServer(s, o.Speed)
	upstream, stopUp, err := harness.ServeLoopback(faults.Handler(cs, set, nil), nil)
	if err != nil {
		return err
	}
	u, _ := url.Parse(upstream + clientPath(s))
	g := harness.NewRecordGate()
	proxy, err := recorder.NewProxy(u, w, &recorder.ProxyOptions{Transport: g.Transport(recorder.NewTransport())})
	if err != nil {
		stopUp()
		return err
	}
	set.Observe(func(a faults.Applied) {
		proxy.Pipeline().AddFault(a.TraceFault(), a.Spec+" "+a.Target.String()+": "+a.Action.String())
	})
	front, stopFront, err := harness.ServeLoopback(g.Handler(proxy), proxy.ConnState)
	if err != nil {
		stopUp()
		proxy.Close()
		return err
	}
	_, runErr := harness.RunClient(ctx, harness.ClientTarget{Command: command, Stderr: o.Stderr}, front+clientPath(s), "replay")
	g.Settle()
	stopFront()
	stopUp()
	set.Observe(nil)
	proxy.Close()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	res.Divergence, res.Compared = cs.first, cs.cmpd
	for _, ex := range cs.order {
		if cs.used[ex] {
			res.Sent++
		} else if res.Divergence == nil {
			res.Divergence = &Divergence{Record: ex.req.rec.Index, Stream: ex.req.rec.Stream,
				Message: requestKey(ex.req.rec.HTTP.Method, ex.req.body), Reason: "the client did not send this recorded request",
				Recorded: string(ex.req.body), Live: "nothing"}
			if runErr != nil {
				res.Divergence.Live = "nothing (the client: " + runErr.Error() + ")"
			}
		}
	}
	if res.Sent == 0 && runErr != nil {
		return fmt.Errorf("%w: the client %s never connected: %v", ErrUnreachable, res.Target, runErr)
	}
	return nil
}

// clientPath is the endpoint path of the recorded requests (/mcp).
func clientPath(s *script) string {
	for _, st := range s.steps {
		if st.kind == stepRequest {
			if u, err := url.Parse(st.rec.HTTP.URL); err == nil && u.Path != "" {
				return u.Path
			}
		}
	}
	return "/mcp"
}
