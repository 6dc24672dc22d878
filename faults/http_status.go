package faults

import "math/rand/v2"

var httpStatusKind = Kind{
	Name:    "http-status",
	Summary: "an HTTP request is answered with an error status (5xx, 429, 404...) without reaching the server",
	Params:  []ParamDoc{{Key: "code", Default: "503", Doc: "the status code, 400 to 599"}},
	Places:  []string{PlaceHTTP},
	Draw: func(r *rand.Rand, _ []string) Drawn {
		// Errors a server or a proxy in front of it answers with; not
		// 404, which says the session is gone (a restart shows that).
		// Requests only.
		return Drawn{Params: []string{"code=" + []string{"500", "502", "503", "429"}[r.IntN(4)]}, Weight: 2}
	},
	New: func(p *Params) (Fault, error) {
		return httpStatus{code: int(p.Int("code", 503, 400, 599))}, nil
	},
}

type httpStatus struct{ code int }

func (f httpStatus) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Stream != StreamRequest {
		return Action{}, false
	}
	return Action{Verb: Status, Status: f.code}, true
}
