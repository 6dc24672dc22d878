package faults

import "math/rand/v2"

var httpStatusKind = Kind{
	Name:    "http-status",
	Summary: "an HTTP request is answered with an error status (5xx, 429, 404...) without reaching the server",
	Params:  []ParamDoc{{Key: "code", Default: "503", Doc: "the status code, 400 to 599"}},
	Places:  []string{PlaceHTTP},
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
