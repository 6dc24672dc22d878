package faults

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"time"
)

var ttlExpiryKind = Kind{
	Name:    "ttl-expiry",
	Summary: "a task expires mid-stream: the task-augmented request's ttl is rewritten small, or (simulations) the clock jumps",
	Params: []ParamDoc{
		{Key: "ttl", Default: "1s", Doc: "the ttl written into params.task.ttl of a task-augmented request",
			Revisions: rev20251125, NotOn: "ttl= rewrites params.task.ttl, which 2026-07-28 requests do not carry (the server sets ttlMs); advance= jumps the clock"},
		{Key: "advance", Default: "", Doc: "instead of rewriting, advance the simulated clock by this much before the message", Excludes: []string{"ttl"}},
	},
	Places: []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw: func(r *rand.Rand, _ []string) Drawn {
		// It addresses few messages: task requests (or count= limits it).
		if r.IntN(2) == 0 {
			// One jump, before a message of the client: the time of a
			// request is the simulation's, where two server messages
			// may pass at one instant.
			return Drawn{Params: []string{"advance=" + ms(1000*(1+r.Int64N(10))), "stream=stdin", "count=" + strconv.Itoa(1+r.IntN(3))}, Weight: 4}
		}
		return Drawn{Params: []string{"ttl=" + ms(50+r.Int64N(500))}, Weight: 4}
	},
	New: func(p *Params) (Fault, error) {
		return ttlExpiry{ttl: p.Duration("ttl", time.Second, maxDelay), advance: p.Duration("advance", 0, maxDelay)}, nil
	},
}

type ttlExpiry struct{ ttl, advance time.Duration }

func (f ttlExpiry) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if f.advance > 0 {
		return Action{Verb: Advance, Delay: f.advance}, true
	}
	if m.RPC == nil || m.RPC.Type != "request" {
		return Action{}, false
	}
	raw, ok := rewriteTTL(m.Raw, f.ttl.Milliseconds())
	if !ok {
		return Action{}, false
	}
	return Action{Verb: Rewrite, Raw: raw}, true
}

// rewriteTTL sets params.task.ttl of a task-augmented request (2025-11-25
// Tasks, "Creating Tasks": the requestor asks for a ttl in milliseconds).
// It reports false for a request with no params.task.
func rewriteTTL(raw []byte, ttlMs int64) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	var task map[string]json.RawMessage
	if json.Unmarshal(params["task"], &task) != nil || task == nil {
		return nil, false
	}
	task["ttl"] = json.RawMessage(itoa64(ttlMs))
	var err error
	if params["task"], err = json.Marshal(task); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	out, err := json.Marshal(msg)
	return out, err == nil
}

func itoa64(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
