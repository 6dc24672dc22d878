package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/traces"
)

// ReplayOptions configure Replay. The zero value replays as fast as the
// answers allow, with the trace's own faults and seed, into a new trace
// in the temporary directory.
type ReplayOptions struct {
	// Speed paces the client's requests: 0 as fast as the answers allow,
	// 1 as recorded, k k times faster.
	Speed Speed
	// Faults are fault specs added to the trace's own (its header's
	// schedule), or the only ones with NoFaults.
	Faults []string
	// NoFaults leaves out the faults the trace was recorded with.
	NoFaults bool
	// Seed seeds the fault decisions; when HasSeed is false, the trace's
	// seed, so that its faults act again on the same messages.
	Seed    uint64
	HasSeed bool
	// Record is the path of the new trace; "" writes it to a new file in
	// the temporary directory (ReplayResult.Trace says where).
	Record string
	// Wait bounds the wait for one recorded answer; 0 means
	// DefaultReplayWait.
	Wait time.Duration
	// Stderr receives a stdio server's stderr; nil discards it.
	Stderr io.Writer
	// Command is the command line written into the new trace's header.
	Command []string
}

// DefaultReplayWait is how long a replay waits for a recorded answer
// before it reports the answer missing.
const DefaultReplayWait = 10 * time.Second

// ReplayResult is what a replay found.
type ReplayResult struct {
	// Target is the server replayed against.
	Target string `json:"target"`
	// Trace is the path of the new trace, the replay as recorded.
	Trace string `json:"trace"`
	// Divergence is the first difference from the recorded answers; nil
	// when every recorded answer came back the same.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Verdict judges the new trace by the server's and the transport's
	// rules.
	Verdict *check.Verdict `json:"verdict"`
	// Sent counts the requests (or lines) sent, Compared the recorded
	// answers compared with live ones.
	Sent     int `json:"sent"`
	Compared int `json:"compared"`
	// Faults are the fault specs of the replay, Seed their seed.
	Faults []string `json:"faults,omitempty"`
	Seed   uint64   `json:"seed"`
	Speed  string   `json:"speed"`
	// Cut says the replayed trace was cut short: it was replayed up to its
	// last whole record.
	Cut string `json:"cut,omitempty"`
}

// Failed reports a divergence or a rule the new trace breaks.
func (r *ReplayResult) Failed() bool {
	return r.Divergence != nil || r.Verdict != nil && r.Verdict.Failed()
}

// replayConn is the live side of a replay: it sends a step and hands out
// what came back on a channel.
type replayConn interface {
	send(ctx context.Context, st step) error
	// channel is where the live answer to the recorded step st comes:
	// nil when its request was never sent.
	channel(st step) *liveChan
}

// Replay sends the client half of the trace read by src to target (a
// Streamable HTTP URL, or a command running a stdio server), step by step
// in the recorded order: each recorded answer is awaited on its stream
// and compared with the live one, structurally, task ids, session ids,
// SSE event ids and timestamps mapped or ignored. A request waits for
// every answer recorded before it, so that the ids it uses are known. The
// first difference ends the replay (ReplayResult.Divergence). The replay
// is recorded as a new trace and judged.
//
// Errors: ErrNotReplayable (wrapped) for a trace with nothing to send,
// a fault spec's error, ErrUnreachable (wrapped) for a target that cannot
// be reached or started, a trace read or write error.
func Replay(ctx context.Context, src *traces.Reader, target Target, o *ReplayOptions) (*ReplayResult, error) {
	if o == nil {
		o = &ReplayOptions{}
	}
	s, err := loadScript(src)
	if err != nil {
		return nil, err
	}
	if s.http && !target.HTTP() {
		return nil, fmt.Errorf("%w: the trace is of Streamable HTTP traffic; replay it against --server URL", ErrNotReplayable)
	}
	if !s.http && target.HTTP() {
		return nil, fmt.Errorf("%w: the trace is of stdio traffic; replay it against --server-cmd", ErrNotReplayable)
	}
	res := &ReplayResult{Target: target.String(), Speed: o.Speed.String(), Cut: s.cut}
	set, err := replayFaults(s, o, res)
	if err != nil {
		return nil, err
	}
	if len(res.Faults) > 0 && !target.HTTP() {
		return nil, fmt.Errorf("%w: faults replay over Streamable HTTP only", ErrNotReplayable)
	}
	t, err := createReplayTrace(o.Record, replayHeader(s, o, res))
	if err != nil {
		return nil, err
	}
	res.Trace = t.path
	if err := t.finish(replayTarget(ctx, s, target, o, set, res, t.Writer)); err != nil {
		return nil, err
	}
	v, err := harness.JudgeTrace(t.path, check.Server, check.Transport)
	if err != nil {
		return nil, err
	}
	res.Verdict = v
	return res, nil
}

// replayTarget runs the script of s against target, with the faults of
// set, recording into w.
func replayTarget(ctx context.Context, s *script, target Target, o *ReplayOptions, set *faults.Set, res *ReplayResult, w *traces.Writer) error {
	ids := newIDMap()
	r := &replayer{s: s, ids: ids, speed: o.Speed, wait: o.Wait, res: res}
	if r.wait <= 0 {
		r.wait = DefaultReplayWait
	}
	if target.HTTP() {
		c, err := startHTTP(target.URL, w, set, ids)
		if err != nil {
			return err
		}
		r.conn = c
		runErr := r.run(ctx)
		c.close()
		return runErr
	}
	p := recorder.NewPipeline(w, nil)
	c, err := startStdio(ctx, target.Command, o.Stderr, p, ids)
	if err != nil {
		p.Close()
		return err
	}
	r.conn = c
	runErr := r.run(ctx)
	c.close()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil && res.Divergence != nil && !c.answered.Load() {
		// Not one message from the server: it is not one, or it died at
		// once.
		runErr = fmt.Errorf("%w %s: the server wrote no message (%s)", ErrUnreachable, target, res.Divergence.Live)
	}
	return runErr
}

// replayFaults is the replay's fault set: the trace's own specs (unless
// NoFaults) and o.Faults, seeded by the trace's seed unless o gives one.
func replayFaults(s *script, o *ReplayOptions, res *ReplayResult) (*faults.Set, error) {
	var specs []string
	if !o.NoFaults && s.header.Faults != nil {
		specs = append(specs, s.header.Faults.Specs...)
	}
	specs = append(specs, o.Faults...)
	bound, err := faults.Builtin().ParseAll(specs)
	if err != nil {
		return nil, err
	}
	res.Seed = s.header.Seed
	if o.HasSeed {
		res.Seed = o.Seed
	}
	set := faults.NewSet(res.Seed, bound...)
	res.Faults = set.Specs()
	return set, nil
}

// replayHeader is the header of the replay's trace.
func replayHeader(s *script, o *ReplayOptions, res *ReplayResult) traces.Header {
	h := traces.Header{Command: o.Command, Protocol: s.header.Protocol, Seed: res.Seed,
		Labels: []traces.Label{{Key: "recorder", Value: "http"}, {Key: "replay-of", Value: strings.Join(s.header.Command, " ")}, {Key: "target", Value: res.Target}}}
	if !s.http {
		h.Labels = h.Labels[1:]
	}
	if len(res.Faults) > 0 {
		h.Faults = &traces.Schedule{Specs: res.Faults, Note: "decisions are the fault records, drawn from the seed and each message's identity"}
	}
	return h
}

// replayer walks a script against a live connection.
type replayer struct {
	s     *script
	conn  replayConn
	ids   *idMap
	speed Speed
	wait  time.Duration
	res   *ReplayResult
	// methods names each request id's method, for reports.
	methods map[string]string
	// ledgers hold each recorded task's streamed segments, both sides
	// (stream.go).
	ledgers map[string]*ledger
}

func (r *replayer) run(ctx context.Context) error {
	r.methods = map[string]string{}
	start := time.Now()
	first := time.Duration(-1)
	for _, st := range r.s.steps {
		if st.kind == stepRequest || st.kind == stepSend {
			first = st.rec.Offset
			break
		}
	}
	for _, st := range r.s.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch st.kind {
		case stepRequest, stepSend, stepCut:
			if d := r.speed.due(st.rec.Offset, first) - time.Since(start); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				}
			}
		}
		var d *Divergence
		switch st.kind {
		case stepRequest, stepSend:
			r.noteMethods(st.body)
			if err := r.conn.send(ctx, st); err != nil {
				return err
			}
			r.res.Sent++
		case stepCut:
			if lc := r.conn.channel(st); lc != nil {
				lc.cancel()
			}
		case stepHead:
			d = r.head(ctx, st)
		case stepItem:
			d = r.item(ctx, st)
		case stepEnd:
			d = r.end(ctx, st)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d != nil {
			r.res.Divergence = d
			return nil
		}
	}
	return nil
}

func (r *replayer) noteMethods(body []byte) {
	for _, m := range splitBatch(body) {
		if rpc := traces.DescribeMessage(m); rpc != nil && rpc.Type == "request" {
			r.methods[rpc.ID] = rpc.Method
		}
	}
}

func (r *replayer) diverge(st step, path, reason, recorded, live string) *Divergence {
	return &Divergence{
		Record: st.rec.Index, Stream: st.rec.Stream,
		Message: describeRecord(st.rec, func(id string) string { return r.methods[id] }),
		Path:    path, Reason: reason, Recorded: recorded, Live: live,
	}
}

func (r *replayer) channel(st step) *liveChan {
	if lc := r.conn.channel(st); lc != nil {
		return lc
	}
	// An answer without its request in the client's view (a trace
	// recorded from the middle of a conversation): nothing to compare.
	return nil
}

func (r *replayer) head(ctx context.Context, st step) *Divergence {
	lc := r.channel(st)
	if lc == nil {
		return nil
	}
	lc.await(ctx, r.wait, func() bool { return lc.status != 0 || lc.ended })
	lc.mu.Lock()
	status, header, endErr := lc.status, lc.header, lc.endErr
	lc.mu.Unlock()
	want := st.rec.HTTP.Status
	r.res.Compared++
	if status != want {
		live := statusText(status)
		if status == 0 && endErr != nil {
			live += ": " + endErr.Error()
		} else if status == 0 {
			live += " within " + r.wait.String()
		}
		return r.diverge(st, "", "the HTTP status differs", statusText(want), live)
	}
	recCT, _ := st.rec.HTTP.Get("Content-Type")
	// A POST answer may be one JSON body or an event stream, the
	// server's choice (a task that ended before its answer is sent
	// whole): the messages inside are compared.
	if a, b := mediaKind(recCT), mediaKind(header.Get("Content-Type")); a != b && (a == "other" || b == "other") {
		return r.diverge(st, "", "the answer's content type differs", statusText(want)+" "+recCT, statusText(status)+" "+header.Get("Content-Type"))
	}
	if sid, ok := st.rec.HTTP.Get("Mcp-Session-Id"); ok {
		if live := header.Get("Mcp-Session-Id"); live != "" {
			r.ids.bind(r.ids.session, sid, live)
		} else {
			return r.diverge(st, "", "the live answer gives no Mcp-Session-Id", "Mcp-Session-Id: "+sid, "none")
		}
	}
	return nil
}

func (r *replayer) item(ctx context.Context, st step) *Divergence {
	lc := r.channel(st)
	if lc == nil {
		return nil
	}
	recData := messageBytes(st.rec)
	recText := string(recData)
	if st.rec.Kind == traces.KindSSEEvent && len(recData) == 0 {
		if lc.json() {
			// An event without data (a priming event) has no place in a
			// JSON body.
			return nil
		}
		recText = "SSE event without data" + sseIDText(st.rec.SSE)
	}
	if p, ok := parseStreamPart(recData, st.ch); ok {
		return r.streamItem(ctx, st, lc, p, recText)
	}
	r.res.Compared++
	it, d := r.nextLive(ctx, st, lc, recText)
	if d != nil {
		return d
	}
	if st.rec.Kind == traces.KindSSEEvent && st.rec.SSE != nil {
		if d, done := r.compareEvent(st, it, recData, recText); done {
			return d
		}
	}
	if d := r.ids.compareJSON(recData, it.data); d != nil {
		return r.diverge(st, d.path, d.reason, recText, string(it.data))
	}
	return nil
}

// nextLive waits for the live message that answers recorded step st: the
// channel's next item, passing over events without data unless st is an
// SSE event (nor has a live event without data a place in a recorded
// JSON body). The channel's end, or nothing in time, is a divergence.
func (r *replayer) nextLive(ctx context.Context, st step, lc *liveChan, recText string) (liveItem, *Divergence) {
	for {
		it, ok, ended, endErr := lc.nextItem(ctx, r.wait)
		if !ok {
			live := "nothing within " + r.wait.String()
			if ended {
				live = "the stream ended"
				if endErr != nil {
					live += ": " + endErr.Error()
				}
			}
			return liveItem{}, r.diverge(st, "", "the recorded message did not come", recText, live)
		}
		if len(it.data) > 0 || st.rec.Kind == traces.KindSSEEvent {
			return it, nil
		}
	}
}

// compareEvent compares what a recorded SSE event carries besides its
// message with the live event: its id, and whether it carries data at
// all. done is set when nothing is left to compare.
func (r *replayer) compareEvent(st step, it liveItem, recData []byte, recText string) (d *Divergence, done bool) {
	rs := st.rec.SSE
	switch {
	case rs.HasID && !it.hasID:
		return r.diverge(st, "", "the live event has no id", recText, string(it.data)), true
	case rs.HasID:
		if d := r.matchEventID(st, it, recText); d != nil {
			return d, true
		}
	}
	if len(recData) == 0 || len(it.data) == 0 {
		if len(recData) != len(it.data) {
			return r.diverge(st, "", "one event carries data, the other none", recText, string(it.data)), true
		}
		return nil, true
	}
	return nil, false
}

// matchEventID binds the recorded event's id to the live event's: a
// recorded id met again must come back as the live id it was first
// replayed as.
func (r *replayer) matchEventID(st step, it liveItem, recText string) *Divergence {
	rs := st.rec.SSE
	if prev, ok := r.ids.lookup(r.ids.event, rs.ID); ok && prev != it.id {
		return r.diverge(st, "", fmt.Sprintf("recorded event id %q again, first replayed as %q, now live %q", rs.ID, prev, it.id), recText, string(it.data))
	}
	r.ids.bind(r.ids.event, rs.ID, it.id)
	return nil
}

// mediaKind tells an event stream from a JSON body from anything else.
func mediaKind(ct string) string {
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		return "sse"
	case strings.HasPrefix(ct, "application/json"):
		return "json"
	}
	return "other"
}

func sseIDText(f *traces.SSEFields) string {
	if f != nil && f.HasID {
		return " (id " + f.ID + ")"
	}
	return ""
}

func (r *replayer) end(ctx context.Context, st step) *Divergence {
	lc := r.channel(st)
	if lc == nil {
		return nil
	}
	lc.await(ctx, r.wait, func() bool { return lc.ended || lc.next < len(lc.items) })
	lc.mu.Lock()
	defer lc.mu.Unlock()
	r.res.Compared++
	if lc.next < len(lc.items) {
		extra := lc.items[lc.next]
		text := string(extra.data)
		if text == "" {
			text = "SSE event without data"
		}
		return r.diverge(st, "", "the live stream sent one more message", "end of stream", text)
	}
	if !lc.ended {
		return r.diverge(st, "", "the live stream did not end", "end of stream", "still open after "+r.wait.String())
	}
	return nil
}

// splitBatch returns the messages of a body: the elements of a batch, or
// the body itself.
func splitBatch(body []byte) [][]byte {
	v, err := decodeAny(body)
	arr, ok := v.([]any)
	if err != nil || !ok {
		return [][]byte{body}
	}
	out := make([][]byte, 0, len(arr))
	for _, e := range arr {
		b, err := json.Marshal(e)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// IsReplayInputError reports whether err is about the replay's input (the
// trace, a fault spec) rather than the target.
func IsReplayInputError(err error) bool {
	var c *traces.CorruptError
	var v *traces.VersionError
	return errors.Is(err, ErrNotReplayable) || errors.As(err, &c) || errors.As(err, &v) || errors.Is(err, traces.ErrNotTrace)
}
