package faults

import (
	"math/rand/v2"
	"time"
)

// maxDelay bounds delay, jitter and advance parameters.
const maxDelay = 24 * time.Hour

var delayKind = Kind{
	Name:    "delay",
	Summary: "a message is held for a fixed time plus a jitter drawn from the seed",
	Params: []ParamDoc{
		{Key: "d", Default: "100ms", Doc: "the fixed delay"},
		{Key: "jitter", Default: "0", Doc: "up to this much more, drawn per message"},
	},
	Places: []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw: func(r *rand.Rand, _ []string) Drawn {
		return Drawn{Params: []string{"d=" + ms(10+r.Int64N(500)), "jitter=" + ms(r.Int64N(100))}, Weight: 1}
	},
	New: func(p *Params) (Fault, error) {
		return delay{d: p.Duration("d", 100*time.Millisecond, maxDelay), jitter: p.Duration("jitter", 0, maxDelay)}, nil
	},
}

type delay struct{ d, jitter time.Duration }

func (f delay) Act(_ *Msg, r *rand.Rand) (Action, bool) {
	d := f.d
	if f.jitter > 0 {
		d += time.Duration(r.Int64N(int64(f.jitter) + 1))
	}
	return Action{Verb: Delay, Delay: d}, true
}
