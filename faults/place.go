package faults

import (
	"context"
	"time"

	"github.com/tasksim/tasksim/clock"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// PlaceOptions are what the HTTP middleware and the stdio line filter need
// beyond the faults: a clock for delays and the hooks of the faults that act
// on the server or the clock. Zero values are documented defaults.
type PlaceOptions struct {
	// Clock times delays; nil is the wall clock.
	Clock clock.Clock
	// Restart makes the server lose its state (server-restart); nil
	// ignores the fault.
	Restart func()
	// Advance moves the simulated clock (ttl-expiry:advance=D); nil
	// ignores the fault.
	Advance func(time.Duration)
	// Eras follows the revision of each line of one stdio connection
	// (Msg.Revision); the HTTP middleware, whose requests say their own,
	// does not use it. Give the two Lines calls of a connection the same
	// one, so that a server's line has the revision of the request it
	// answers, or of the connection; nil gives each call its own: the
	// client's lines still say theirs, but the server's have none, as
	// their call sees no request.
	Eras *rev.Eras
}

// outcome is what a message's decisions come to once their side effects
// are done.
type outcome struct {
	fate    Verb   // the verb that decides the message's fate (see rank)
	rewrite []byte // bytes a rewrite put in its place; nil: none
	status  int    // the status of a Status fate
	body    []byte // the JSON body of a Status fate; nil: a text one
	// header and value: a header of a request a Rewrite sets.
	header, value string
}

// carryOut applies the side effects of one message's decisions (delays,
// clock advances, restarts) and returns what decides its fate: the verb
// that delivers least (see rank). It fails only when ctx ends during a
// delay.
func (o *PlaceOptions) carryOut(ctx context.Context, acts []Applied) (outcome, error) {
	var out outcome
	for _, a := range acts {
		switch v := a.Action.Verb; v {
		case Delay:
			if err := clock.Sleep(ctx, o.Clock, a.Action.Delay); err != nil {
				return out, err
			}
		case Advance:
			if o.Advance != nil {
				o.Advance(a.Action.Delay)
			}
		case Restart:
			if o.Restart != nil {
				o.Restart()
			}
		case Rewrite:
			if a.Action.Raw != nil {
				out.rewrite = a.Action.Raw
			}
			if a.Action.Header != "" {
				out.header, out.value = a.Action.Header, a.Action.Value
			}
		case Status:
			if out.status == 0 {
				out.status, out.body = a.Action.Status, a.Action.Raw
			}
			if rank(v) > rank(out.fate) {
				out.fate = v
			}
		default:
			if rank(v) > rank(out.fate) {
				out.fate = v
			}
		}
	}
	return out, nil
}
