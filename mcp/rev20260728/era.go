package rev20260728

import "encoding/json"

// HasRequestMeta reports whether params carry this revision's per-request
// _meta: a _meta object with the protocolVersion key, whatever its value.
// That is how a dual-era server tells a request of the stateless era from
// one of a 2025-11-25 session, whose clients never send the key
// (2026-07-28 Versioning, "Backward Compatibility with
// Initialization-Based Versions": "A request carrying modern per-request
// _meta is served statelessly"). Whether the fields are well-formed is
// DecodeRequestMeta's question.
func HasRequestMeta(params json.RawMessage) bool {
	var members struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &members) != nil {
		return false
	}
	_, ok := members.Meta[MetaProtocolVersion]
	return ok
}
