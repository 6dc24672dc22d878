package replay

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// SEP-1905 streaming answers ("Case 3") are compared by what the server
// is obliged to produce, not by how timing split it: a task's segments
// may come in the initial response, in later SSE events of the same
// answer, or in tasks/result responses (SEP-1905, "Case 3": "The server
// MAY use multiple mechanisms simultaneously"; "Client Handling of
// Multiple Mechanisms": merge in seqNr order). So the replay keeps, per
// recorded task, the segments each side delivered, merged by seqNr and
// compared by position; each streaming message is compared without its
// partial-content; and one side may need fewer or more messages than the
// other to deliver the same segments.

// streamPart is a JSON-RPC response that carries SEP-1905 partial-content.
type streamPart struct {
	msg      map[string]any // the message, partial-content removed
	key      string         // the ledger: the task, or the answer
	segs     []any
	complete bool
}

// parseStreamPart reads data as a streaming response; ok is false for any
// other message.
func parseStreamPart(data []byte, ch uint64) (*streamPart, bool) {
	v, err := decodeAny(data)
	if err != nil {
		return nil, false
	}
	msg, _ := v.(map[string]any)
	res, _ := msg["result"].(map[string]any)
	segs, ok := res["partial-content"].([]any)
	if !ok {
		return nil, false
	}
	stripped := make(map[string]any, len(res))
	for k, v := range res {
		if k != "partial-content" {
			stripped[k] = v
		}
	}
	out := map[string]any{}
	for k, v := range msg {
		out[k] = v
	}
	out["result"] = stripped
	p := &streamPart{msg: out, segs: segs}
	p.complete, _ = res["isComplete"].(bool)
	p.key = fmt.Sprintf("answer %d %v", ch, msg["id"])
	if task, ok := res["task"].(map[string]any); ok {
		if id, ok := task["taskId"].(string); ok {
			p.key = "task " + id
		}
	}
	if meta, ok := res["_meta"].(map[string]any); ok {
		if rt, ok := meta["io.modelcontextprotocol/related-task"].(map[string]any); ok {
			if id, ok := rt["taskId"].(string); ok {
				p.key = "task " + id
			}
		}
	}
	return p, true
}

// segment is one delivered segment and the message that carried it.
type segment struct {
	nr   int64 // its seqNr; segments without one sort by arrival
	v    any
	st   step   // recorded side: the record that carried it
	live string // live side: the message that carried it
}

// ledger is one task's segments, both sides, each merged by seqNr with
// duplicates (a seqNr delivered twice, by two mechanisms) dropped.
type ledger struct {
	rec, live []segment
	// liveDone: the live side sent the part that completes the task.
	liveDone bool
	// lastEvent is the id of the last live SSE event that carried
	// segments: a recorded event the live side needed no event for maps
	// to it, so that a resumption after it asks for what follows.
	lastEvent string
}

func segNr(v any) int64 {
	if m, ok := v.(map[string]any); ok {
		if n, ok := m["seqNr"]; ok {
			if i, err := strconv.ParseInt(fmt.Sprint(n), 10, 64); err == nil {
				return i
			}
		}
	}
	return 1 << 62
}

// merge adds segs to list in seqNr order; a seqNr already there is not
// added again.
func merge(list []segment, segs []any, mk func(v any) segment) []segment {
	for _, v := range segs {
		s := mk(v)
		s.nr = segNr(v)
		i, found := slices.BinarySearchFunc(list, s.nr, func(e segment, nr int64) int { return cmpInt(e.nr, nr) })
		if found && s.nr != 1<<62 {
			continue
		}
		if found {
			i = len(list)
		}
		list = slices.Insert(list, i, s)
	}
	return list
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (r *replayer) ledger(key string) *ledger {
	if r.ledgers == nil {
		r.ledgers = map[string]*ledger{}
	}
	l := r.ledgers[key]
	if l == nil {
		l = &ledger{}
		r.ledgers[key] = l
	}
	return l
}

// streamItem matches a recorded streaming part with the live answer:
// live parts are read until they deliver as many segments as recorded
// (up to the completing part when the recorded one completes), and the
// merged segments must agree; a recorded part whose segments the live
// side already delivered needs no live message.
func (r *replayer) streamItem(ctx context.Context, st step, lc *liveChan, p *streamPart, recText string) *Divergence {
	led := r.ledger(p.key)
	led.rec = merge(led.rec, p.segs, func(v any) segment { return segment{v: v, st: st} })
	r.res.Compared++
	if !p.complete && len(p.segs) > 0 && (led.liveDone || len(led.live) >= len(led.rec)) {
		return r.streamDelivered(st, led)
	}
	for {
		it, d := r.nextLive(ctx, st, lc, recText)
		if d != nil {
			return d
		}
		lp, isPart := parseStreamPart(it.data, st.ch)
		if !isPart {
			if d := r.ids.compareJSON(messageBytes(st.rec), it.data); d != nil {
				return r.diverge(st, d.path, d.reason, recText, string(it.data))
			}
			return r.diverge(st, "$.result", "recorded streaming segments, live none", recText, string(it.data))
		}
		led.takeLive(it, lp)
		switch {
		case p.complete && !lp.complete:
			// The live side split the rest over more messages.
			continue
		case !p.complete && lp.complete:
			// The live side completed sooner: its completing part
			// answers the recorded one.
			lc.unread()
			return r.compareSegments(st, led, false)
		}
		return r.matchPart(st, led, p, lp, it, recText)
	}
}

// streamDelivered answers a recorded part whose segments the live side
// already delivered: its event id maps to the last live event that
// carried segments, and the merged segments must agree so far.
func (r *replayer) streamDelivered(st step, led *ledger) *Divergence {
	if rs := st.rec.SSE; rs != nil && rs.HasID && led.lastEvent != "" {
		r.ids.bind(r.ids.event, rs.ID, led.lastEvent)
	}
	return r.compareSegments(st, led, false)
}

// takeLive adds a live part's segments to the ledger.
func (l *ledger) takeLive(it liveItem, lp *streamPart) {
	l.live = merge(l.live, lp.segs, func(v any) segment { return segment{v: v, live: string(it.data)} })
	if it.hasID && len(lp.segs) > 0 {
		l.lastEvent = it.id
	}
	if lp.complete {
		l.liveDone = true
	}
}

// matchPart compares live part lp with recorded part p, which it
// answers: the event ids, the messages without their segments, a
// tasks/result answer's own segments, then the merged segments.
func (r *replayer) matchPart(st step, led *ledger, p, lp *streamPart, it liveItem, recText string) *Divergence {
	if rs := st.rec.SSE; rs != nil && rs.HasID && it.hasID {
		if d := r.matchEventID(st, it, recText); d != nil {
			return d
		}
	}
	if d := r.ids.compareValue("$", "", p.msg, lp.msg); d != nil {
		return r.diverge(st, d.path, d.reason, recText, string(it.data))
	}
	if r.methods[fmt.Sprint(p.msg["id"])] == "tasks/result" {
		// A tasks/result answer starts where its request says
		// (lastSeqNr + 1, or 1): how far it goes is timing.
		for i := range min(len(p.segs), len(lp.segs)) {
			if d := r.ids.compareValue(fmt.Sprintf("$.result.partial-content[%d]", i), "", p.segs[i], lp.segs[i]); d != nil {
				return r.diverge(st, d.path, d.reason, recText, string(it.data))
			}
		}
	}
	return r.compareSegments(st, led, p.complete)
}

// compareSegments compares the merged segments position by position, as
// far as both sides go; whole, when the recorded task is complete.
func (r *replayer) compareSegments(st step, led *ledger, whole bool) *Divergence {
	for i := range min(len(led.rec), len(led.live)) {
		rs, ls := led.rec[i], led.live[i]
		path := fmt.Sprintf("$.result.partial-content (merged by seqNr)[%d]", i)
		if d := r.ids.compareValue(path, "", rs.v, ls.v); d != nil {
			return r.diverge(rs.st, d.path, d.reason+" (segment "+strconv.Itoa(i+1)+" of the task)", string(messageBytes(rs.st.rec)), ls.live)
		}
	}
	if !whole || len(led.rec) == len(led.live) {
		return nil
	}
	if len(led.rec) > len(led.live) {
		miss := led.rec[len(led.live)]
		return r.diverge(miss.st, "$.result.partial-content", fmt.Sprintf("the task delivered %d segments live, %d recorded", len(led.live), len(led.rec)), string(messageBytes(miss.st.rec)), "no such segment by the completing answer")
	}
	extra := led.live[len(led.rec)]
	return r.diverge(st, "$.result.partial-content", fmt.Sprintf("the task delivered %d segments live, %d recorded", len(led.live), len(led.rec)), string(messageBytes(st.rec)), extra.live)
}
