package rev20260728

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// InputRequest is one server-to-client request inside an InputRequests
// map: an elicitation/create, sampling/createMessage or roots/list
// (2026-07-28 Multi Round-Trip Requests, "InputRequests"). Its params are
// kept raw: tasksim relays them and does not read them.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequests maps server-assigned keys to the requests the client must
// fulfil before it retries (schema.ts InputRequests).
type InputRequests map[string]InputRequest

// InputResponses maps the keys of an InputRequests to the client's results
// (ElicitResult, CreateMessageResult, ListRootsResult), kept raw (schema.ts
// InputResponses).
type InputResponses map[string]json.RawMessage

// Validate checks that every request is one of the three kinds an
// InputRequests may carry and that the client declared the capability it
// needs (2026-07-28 Multi Round-Trip Requests, "Server Requirements" 2
// and 7). caps may be nil (no capabilities).
func (r InputRequests) Validate(caps *ClientCapabilities) error {
	for _, key := range slices.Sorted(maps.Keys(r)) {
		var declared bool
		switch m := r[key].Method; m {
		case MethodElicitationCreate:
			declared = caps.HasElicitation()
		case MethodSamplingCreateMessage:
			declared = caps.HasSampling()
		case MethodRootsList:
			declared = caps.HasRoots()
		default:
			return fmt.Errorf("inputRequests[%q]: method %q is not elicitation/create, sampling/createMessage or roots/list", key, m)
		}
		if !declared {
			return fmt.Errorf("inputRequests[%q]: the client did not declare the capability %s needs", key, r[key].Method)
		}
	}
	return nil
}

// InputRequiredResult says the request needs more input: the client
// fulfils InputRequests, then retries the request with a new id, the
// answers in inputResponses and RequestState echoed unchanged (2026-07-28
// Multi Round-Trip Requests, "InputRequiredResult", "Client
// Requirements").
type InputRequiredResult struct {
	ResultType    ResultType    `json:"resultType"`
	Meta          *ResultMeta   `json:"_meta,omitempty"`
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// RequestState is opaque to the client, which MUST NOT inspect or
	// change it.
	RequestState string `json:"requestState,omitempty"`
}

// Validate checks the shape the spec requires: resultType
// "input_required" and at least one of inputRequests and requestState
// (2026-07-28 Multi Round-Trip Requests, "Server Requirements" 6).
func (r *InputRequiredResult) Validate() error {
	if r.ResultType != ResultInputRequired {
		return fmt.Errorf("InputRequiredResult: resultType is %q, not %q", r.ResultType, ResultInputRequired)
	}
	if len(r.InputRequests) == 0 && r.RequestState == "" {
		return errors.New("InputRequiredResult: neither inputRequests nor requestState")
	}
	return nil
}

// Retry returns the members a client adds to the params of its retry:
// the answers, and the request state exactly as the server sent it
// (absent when the server sent none). The retry is a new request with a
// new id (2026-07-28 Multi Round-Trip Requests, "Client Requirements" 2
// and 3).
func (r *InputRequiredResult) Retry(answers InputResponses) InputResponseParams {
	return InputResponseParams{InputResponses: answers, RequestState: r.RequestState}
}

// InputResponseParams are the members a retry of tools/call, prompts/get or
// resources/read adds to its params (schema.ts
// InputResponseRequestParams).
type InputResponseParams struct {
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitempty"`
}

// CallToolParams are the params of tools/call in this revision: no "task"
// member (the tasks extension has the server decide), and the members of a
// multi round-trip retry (schema.ts CallToolRequestParams).
type CallToolParams struct {
	Meta      *RequestMeta    `json:"_meta,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	InputResponseParams
}
