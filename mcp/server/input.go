package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Input from the client in the stateless era, in its two forms:
//
//   - before a call runs, a multi round-trip request (2026-07-28 Multi
//     Round-Trip Requests): tools/call is answered with an
//     InputRequiredResult (inputRequests and a sealed requestState), and
//     the client retries with a new id, the answers in inputResponses and
//     the requestState echoed (Tool.Input, Call.Answers);
//   - while a task runs (Tasks, "Task Update Requests"): the task turns
//     input_required, tasks/get shows its outstanding inputRequests, and
//     tasks/update delivers the answers, all at once or a few at a time
//     (Call.Ask).
//
//	tools/call ─▶ Tool.Input(args, answers, caps) ─▶ open requests? ─▶ InputRequiredResult{inputRequests, requestState}
//	retry (new id, inputResponses, requestState) ─▶ state verified ─▶ answers of the keys it names ─▶ run (task or plain)
//	task: Call.Ask ─▶ input_required, keys input-N ─▶ tasks/update answers a subset ─▶ … all answered ─▶ working

// input is what a call of the stateless era has of the client's input:
// the answers its multi round-trip request carried. A task's way to ask
// for more is its ask method, handed to runTool beside it.
type input struct {
	answers rev.InputResponses
}

// requestStateTTL is how long a requestState is accepted after the server
// minted it: long enough for a person to answer an elicitation, short
// enough to bound its replay (2026-07-28 Multi Round-Trip Requests,
// "Server Requirements" 5: a short expiry).
const requestStateTTL = 10 * time.Minute

// requestState is what a sealed requestState holds: the tool and a digest
// of the arguments of the request it belongs to, the keys the server
// asked, and when it stops being accepted. The requests carry no
// principal: the server has no authentication (docs/security.md).
type requestState struct {
	Tool    string   `json:"tool"`
	Args    string   `json:"args"` // base64 of the SHA-256 of the arguments
	Keys    []string `json:"keys"`
	Expires int64    `json:"exp"` // Unix milliseconds on the server's clock
}

// stateSealer seals requestState values with an HMAC under a key of its
// own, drawn when the server starts (Options.StateRand, crypto/rand by
// default): a requestState is
// attacker-controlled input that decides which answers the server takes,
// so its integrity is protected and state that fails verification is
// rejected (2026-07-28 Multi Round-Trip Requests, "Server Requirements"
// 4 and 5).
type stateSealer struct{ key [32]byte }

func newStateSealer(r io.Reader) *stateSealer {
	s := &stateSealer{}
	if r == nil {
		r = rand.Reader
	}
	if _, err := io.ReadFull(r, s.key[:]); err != nil {
		_, _ = rand.Read(s.key[:]) // a source that fails: crypto/rand's, which never does
	}
	return s
}

func argsDigest(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (s *stateSealer) mac(payload string) string {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// seal returns the requestState of st: its JSON in base64, a dot, and the
// HMAC of that base64.
func (s *stateSealer) seal(st requestState) string {
	b, _ := json.Marshal(st) // strings and an int: it encodes
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + s.mac(payload)
}

// open verifies a requestState and returns what it holds: -32602 when it
// was not sealed by this server, was made for another tool or other
// arguments, or has expired.
func (s *stateSealer) open(state, tool string, args json.RawMessage, now time.Time) (requestState, *mcp.Error) {
	bad := func(why string) (requestState, *mcp.Error) {
		return requestState{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: requestState %s", why)
	}
	payload, sum, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(sum), []byte(s.mac(payload))) {
		return bad("fails verification")
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	var st requestState
	if err != nil || json.Unmarshal(b, &st) != nil {
		return bad("fails verification")
	}
	switch {
	case st.Tool != tool || st.Args != argsDigest(args):
		return bad("belongs to another request")
	case now.UnixMilli() > st.Expires:
		return bad("has expired; call the tool again without it")
	}
	return st, nil
}

// mrtrRound runs a stateless tools/call of a tool that takes input through
// multi round-trip requests up to the point where it can run. It returns
// the input the call runs with and true; or false after it answered the
// request itself, with an InputRequiredResult asking what is still open or
// with an error.
func (s *Server) mrtrRound(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, tool *Tool, args json.RawMessage, r mcp.Replier) (input, bool) {
	if tool.Input == nil {
		return input{}, true
	}
	var p rev.CallToolParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ctx, r, msg.ID, err)
		return input{}, false
	}
	var answers rev.InputResponses
	if p.RequestState != "" {
		st, err := s.states.open(p.RequestState, tool.Name, args, s.opts.Clock.Now())
		if err != nil {
			replyError(ctx, r, msg.ID, err)
			return input{}, false
		}
		// Only the answers to what this state asked count; anything else
		// the server does not need is ignored (2026-07-28 Multi Round-Trip
		// Requests, "Error Handling").
		for _, k := range st.Keys {
			if v, ok := p.InputResponses[k]; ok {
				if answers == nil {
					answers = rev.InputResponses{}
				}
				answers[k] = v
			}
		}
	}
	open := tool.Input(args, answers, meta.ClientCapabilities)
	if len(open) == 0 {
		return input{answers: answers}, true
	}
	// The server MUST NOT ask what the request's capabilities do not
	// declare (2026-07-28 Multi Round-Trip Requests, "Server
	// Requirements" 7): -32021 naming what the call needs.
	if need, missing := neededCapabilities(slices.Collect(maps.Values(open)), meta.ClientCapabilities); missing {
		replyError(ctx, r, msg.ID, rev.MissingRequiredClientCapability("Missing required client capability", need))
		return input{}, false
	}
	keys := slices.Sorted(maps.Keys(open))
	state := s.states.seal(requestState{Tool: tool.Name, Args: argsDigest(args), Keys: keys,
		Expires: s.opts.Clock.Now().Add(requestStateTTL).UnixMilli()})
	// The answer is an InputRequiredResult with both members; it carries
	// no taskId: a task, if any, is made on the final round (Tasks, "Task
	// Creation": input needed before the CreateTaskResult goes through
	// the multi round-trip flow).
	reply(ctx, r, msg.ID, &rev.InputRequiredResult{
		ResultType: rev.ResultInputRequired, Meta: s.resultMeta(), InputRequests: open, RequestState: state,
	})
	return input{}, false
}

// neededCapabilities returns the client capabilities reqs need and
// whether caps lacks one of them (2026-07-28 Multi Round-Trip Requests,
// "Server Requirements" 7).
func neededCapabilities(reqs []rev.InputRequest, caps *rev.ClientCapabilities) (rev.ClientCapabilities, bool) {
	var need rev.ClientCapabilities
	missing := false
	empty := json.RawMessage(`{}`)
	for _, q := range reqs {
		switch q.Method {
		case rev.MethodElicitationCreate:
			need.Elicitation = empty
			missing = missing || !caps.HasElicitation()
		case rev.MethodSamplingCreateMessage:
			need.Sampling = empty
			missing = missing || !caps.HasSampling()
		case rev.MethodRootsList:
			need.Roots = empty
			missing = missing || !caps.HasRoots()
		}
	}
	return need, missing
}

// ask parks the task until the client answered reqs: the task turns
// input_required with each request under a key never used before in this
// task (Tasks, "Task Update Requests": keys are unique over the task's
// lifetime), and ask returns the answers in the order of reqs once
// tasks/update delivered every one. It fails when the creating request did
// not declare what reqs need (-32021), and with ErrTaskEnded or ctx's
// error when the task ends first.
func (t *statelessTask) ask(ctx context.Context, reqs []rev.InputRequest) ([]json.RawMessage, error) {
	if need, missing := neededCapabilities(reqs, t.caps); missing {
		return nil, rev.MissingRequiredClientCapability("Missing required client capability", need)
	}
	t.mu.Lock()
	if t.gone || t.status.IsTerminal() {
		t.mu.Unlock()
		return nil, ErrTaskEnded
	}
	if t.pending == nil {
		t.pending, t.answered = rev.InputRequests{}, map[string]json.RawMessage{}
		t.changed = make(chan struct{})
	}
	keys := make([]string, len(reqs))
	for i, q := range reqs {
		t.keys++
		keys[i] = "input-" + strconv.Itoa(t.keys)
		t.pending[keys[i]] = q
	}
	t.setStatusLocked(mcp.StatusInputRequired)
	for {
		out := make([]json.RawMessage, 0, len(keys))
		for _, k := range keys {
			if v, ok := t.answered[k]; ok {
				out = append(out, v)
			}
		}
		if len(out) == len(keys) {
			for _, k := range keys {
				delete(t.answered, k)
			}
			t.mu.Unlock()
			return out, nil
		}
		changed := t.changed
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			t.withdraw(keys)
			return nil, ctx.Err()
		case <-changed:
		}
		t.mu.Lock()
		if t.gone || t.status.IsTerminal() {
			t.mu.Unlock()
			return nil, ErrTaskEnded
		}
	}
}

// withdraw drops the requests under keys, answered or not, when the tool
// stops waiting for them: a task whose tool asks nothing more is working,
// not input_required, and a key withdrawn is never issued again.
func (t *statelessTask) withdraw(keys []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.pending, k)
		delete(t.answered, k)
	}
	switch {
	case len(t.pending) == 0 && t.status == mcp.StatusInputRequired:
		t.setStatusLocked(mcp.StatusWorking)
	case t.status == mcp.StatusInputRequired:
		t.publishLocked() // fewer inputRequests
	}
}

// update takes the answers of a tasks/update: those to outstanding keys
// are taken and the keys leave inputRequests; the others (never issued,
// answered already) are ignored (Tasks, "Task Update Requests": a server
// SHOULD ignore them, and MAY take a subset, the task staying
// input_required until the rest arrive). Once nothing is outstanding the
// task is working again. A terminal task takes nothing.
func (t *statelessTask) update(answers rev.InputResponses) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone || t.status.IsTerminal() || len(t.pending) == 0 {
		return
	}
	took := false
	for _, k := range slices.Sorted(maps.Keys(answers)) {
		if _, ok := t.pending[k]; ok {
			delete(t.pending, k)
			t.answered[k] = answers[k]
			took = true
		}
	}
	if !took {
		return
	}
	if len(t.pending) == 0 {
		t.setStatusLocked(mcp.StatusWorking)
	} else {
		t.publishLocked() // fewer inputRequests
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// outstandingLocked returns a copy of the task's outstanding input
// requests, or nil. t.mu must be held.
func (t *statelessTask) outstandingLocked() rev.InputRequests {
	if len(t.pending) == 0 {
		return nil
	}
	return maps.Clone(t.pending)
}
