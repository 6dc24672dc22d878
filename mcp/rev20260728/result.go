package rev20260728

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ResultType says how to read a result object; every result of this
// revision carries one (2026-07-28 Overview, "ResultType"; schema.ts
// Result).
type ResultType string

// The values the core defines. Extensions add their own (the tasks
// extension adds "task").
const (
	// ResultComplete: the request is done and the result holds the final
	// content.
	ResultComplete ResultType = "complete"
	// ResultInputRequired: the result is an InputRequiredResult; the client
	// retries with the input asked for (2026-07-28 Multi Round-Trip
	// Requests).
	ResultInputRequired ResultType = "input_required"
)

// IsCore reports whether t is one of the values the core defines.
func (t ResultType) IsCore() bool { return t == ResultComplete || t == ResultInputRequired }

// ErrUnknownResultType is matched by the error of ResultTypeOf for a value
// the reader does not know.
var ErrUnknownResultType = errors.New("unknown resultType")

// ResultTypeOf reads the resultType of a result object as a client must
// (2026-07-28 Overview, "ResultType"): an absent member is "complete",
// since servers of earlier revisions send none; the core values are known;
// an extension's value is known only when listed in extensions, which the
// caller fills from the extensions it negotiated; any other value is
// invalid and an error matching ErrUnknownResultType. A result that is not
// an object, or whose resultType is not a string, is an error too.
func ResultTypeOf(result json.RawMessage, extensions ...ResultType) (ResultType, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(nonEmpty(result), &members); err != nil || members == nil {
		return "", errors.New("result is not an object")
	}
	raw, ok := members["resultType"]
	if !ok {
		return ResultComplete, nil
	}
	var t ResultType
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", fmt.Errorf("resultType must be a string, got %.40s", raw)
	}
	if t.IsCore() || slices.Contains(extensions, t) {
		return t, nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownResultType, t)
}

// EmptyResult is a result that carries nothing but its type: the answer to
// a request whose success has no data, such as the acknowledgements of the
// tasks extension (schema.ts EmptyResult).
type EmptyResult struct {
	ResultType ResultType  `json:"resultType"`
	Meta       *ResultMeta `json:"_meta,omitempty"`
}

// CacheScope says who may cache a cacheable result (schema.ts
// CacheableResult).
type CacheScope string

// Cache scopes.
const (
	// CacheScopePublic: any client or intermediary may cache the result.
	CacheScopePublic CacheScope = "public"
	// CacheScopePrivate: caches must not be shared across authorization
	// contexts.
	CacheScopePrivate CacheScope = "private"
)
