package rev20260728

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Keys of _meta this revision reserves (2026-07-28 Overview, "_meta",
// "Reserved keys"; schema.ts RequestMetaObject, NotificationMetaObject,
// ResultMetaObject).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaLogLevel is deprecated as of this revision (SEP-2577) but still
	// defined.
	MetaLogLevel       = "io.modelcontextprotocol/logLevel"
	MetaServerInfo     = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken  = "progressToken"
)

// RequestMeta is the _meta of a request's params: the per-request protocol
// fields that replace initialize (2026-07-28 Overview, "Per-request
// protocol fields"). Keys it does not name (traceparent, extensions' own)
// are kept in Extra, so that a decoded _meta encodes back to what was read.
//
// Decoding is lenient: a missing field decodes as its zero value. A server
// reads the _meta of a request with DecodeRequestMeta, which says which
// required field is missing; a client checks what it built with Validate.
type RequestMeta struct {
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	ClientInfo         *mcp.Implementation `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
	LogLevel           string              `json:"io.modelcontextprotocol/logLevel,omitempty"`
	// ProgressToken is a string or a number, kept raw so that it is echoed
	// exactly.
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var requestMetaKeys = []string{MetaProtocolVersion, MetaClientInfo, MetaClientCapabilities, MetaLogLevel, MetaProgressToken}

// MarshalJSON implements json.Marshaler.
func (m RequestMeta) MarshalJSON() ([]byte, error) {
	type plain RequestMeta
	return marshalMeta(plain(m), m.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *RequestMeta) UnmarshalJSON(b []byte) error {
	type plain RequestMeta
	var p plain
	extra, err := unmarshalMeta(b, &p, requestMetaKeys)
	if err != nil {
		return err
	}
	*m = RequestMeta(p)
	m.Extra = extra
	return nil
}

// Validate reports the first required field m lacks, as DecodeRequestMeta
// would: the protocol version, then the client capabilities (2026-07-28
// Overview, "Per-request protocol fields").
func (m RequestMeta) Validate() error {
	if m.ProtocolVersion == "" {
		return &MetaError{Key: MetaProtocolVersion, Reason: "is missing"}
	}
	if m.ClientCapabilities == nil {
		return &MetaError{Key: MetaClientCapabilities, Reason: "is missing"}
	}
	return nil
}

// ErrInvalidMeta is matched by every *MetaError.
var ErrInvalidMeta = errors.New("invalid request _meta")

// MetaError says which per-request field of a request's _meta is missing or
// malformed. A request with one is malformed: the server answers -32602
// Invalid params, on HTTP with 400 (2026-07-28 Overview, "Per-request
// protocol fields").
type MetaError struct {
	Key    string // "_meta" when the object itself is missing
	Reason string // "is missing", "must be a string", …
}

func (e *MetaError) Error() string { return fmt.Sprintf("_meta: %s %s", e.Key, e.Reason) }

// Is makes a *MetaError match ErrInvalidMeta.
func (e *MetaError) Is(target error) bool { return target == ErrInvalidMeta }

// RPCError returns the error response's error object: -32602.
func (e *MetaError) RPCError() *mcp.Error {
	return mcp.Errorf(mcp.CodeInvalidParams, "invalid params: %s", e.Error())
}

// DecodeRequestMeta reads the _meta of a request's params and checks the
// per-request protocol fields: protocolVersion (a non-empty string) and
// clientCapabilities (an object) are required, clientInfo when present
// must be an Implementation with a name and a version, logLevel when
// present a string (2026-07-28 Overview, "Per-request protocol fields";
// schema.ts RequestMetaObject). Its error is a *MetaError naming the first
// field in that order that is wrong. Whether the version is one the server
// supports is not its question (that is -32022, UnsupportedProtocolVersion).
func DecodeRequestMeta(params json.RawMessage) (RequestMeta, error) {
	return metaOf(paramsMembers(params))
}

// paramsMembers returns the members of params, or nil when params is not
// a JSON object.
func paramsMembers(params json.RawMessage) map[string]json.RawMessage {
	return mcp.ObjectMembers(params)
}

// metaOf is DecodeRequestMeta of params whose members are members (nil
// when params is not an object).
func metaOf(members map[string]json.RawMessage) (RequestMeta, error) {
	fields, raw, err := metaObject(members)
	if err != nil {
		return RequestMeta{}, err
	}
	return metaFrom(fields, raw)
}

// metaObject returns the members of the _meta object of params whose
// members are members, and the object as written.
func metaObject(members map[string]json.RawMessage) (fields map[string]json.RawMessage, raw json.RawMessage, err error) {
	if members == nil {
		return nil, nil, &MetaError{Key: "_meta", Reason: "is missing: params is not an object"}
	}
	raw, ok := members["_meta"]
	if !ok || isNull(raw) {
		return nil, nil, &MetaError{Key: "_meta", Reason: "is missing"}
	}
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, nil, &MetaError{Key: "_meta", Reason: "must be an object"}
	}
	return fields, raw, nil
}

// metaFrom checks the members of a _meta object (raw as written) and
// returns the RequestMeta they make.
func metaFrom(fields map[string]json.RawMessage, raw json.RawMessage) (RequestMeta, error) {
	m, err := checkMetaFields(fields)
	if err != nil {
		return RequestMeta{}, err
	}
	if !hasKeyAlias(fields) {
		// The checks decoded every field the struct has: m is what
		// decoding raw into it gives, without reading raw twice more.
		return m, nil
	}
	m = RequestMeta{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return RequestMeta{}, &MetaError{Key: "_meta", Reason: "is malformed: " + err.Error()}
	}
	return m, nil
}

// hasKeyAlias reports whether a key of fields differs from one of
// requestMetaKeys only in case: encoding/json would decode it into that
// field, in the order of the object, so only json.Unmarshal says what the
// field ends as.
func hasKeyAlias(fields map[string]json.RawMessage) bool {
	for k := range fields {
		for _, known := range requestMetaKeys {
			if k != known && strings.EqualFold(k, known) {
				return true
			}
		}
	}
	return false
}

// checkMetaFields checks the per-request fields and returns the RequestMeta
// they make, Extra holding the other members.
func checkMetaFields(fields map[string]json.RawMessage) (RequestMeta, error) {
	var m RequestMeta
	switch raw, ok := fields[MetaProtocolVersion]; {
	case !ok || isNull(raw):
		return m, &MetaError{Key: MetaProtocolVersion, Reason: "is missing"}
	case json.Unmarshal(raw, &m.ProtocolVersion) != nil:
		return m, &MetaError{Key: MetaProtocolVersion, Reason: "must be a string"}
	case m.ProtocolVersion == "":
		return m, &MetaError{Key: MetaProtocolVersion, Reason: "must not be empty"}
	}
	m.ClientCapabilities = new(ClientCapabilities)
	switch raw, ok := fields[MetaClientCapabilities]; {
	case !ok || isNull(raw):
		return m, &MetaError{Key: MetaClientCapabilities, Reason: "is missing"}
	case !isObject(raw) || json.Unmarshal(raw, m.ClientCapabilities) != nil:
		return m, &MetaError{Key: MetaClientCapabilities, Reason: "must be a ClientCapabilities object"}
	}
	return m, optionalMetaFields(&m, fields)
}

// optionalMetaFields checks and sets the fields of m a request may leave
// out, Extra holding the members no field names.
func optionalMetaFields(m *RequestMeta, fields map[string]json.RawMessage) error {
	if raw, ok := fields[MetaClientInfo]; ok {
		m.ClientInfo = new(mcp.Implementation)
		if !isObject(raw) || json.Unmarshal(raw, m.ClientInfo) != nil || m.ClientInfo.Name == "" || m.ClientInfo.Version == "" {
			return &MetaError{Key: MetaClientInfo, Reason: "must be an Implementation with a name and a version"}
		}
	}
	if raw, ok := fields[MetaLogLevel]; ok {
		if json.Unmarshal(raw, &m.LogLevel) != nil {
			return &MetaError{Key: MetaLogLevel, Reason: "must be a string"}
		}
	}
	if raw, ok := fields[MetaProgressToken]; ok {
		m.ProgressToken = slices.Clone(raw)
	}
	for k, v := range fields {
		if !slices.Contains(requestMetaKeys, k) {
			if m.Extra == nil {
				m.Extra = map[string]json.RawMessage{}
			}
			m.Extra[k] = v
		}
	}
	return nil
}

// NotificationMeta is the _meta of a notification's params. SubscriptionID
// is the id of the subscriptions/listen request whose stream the
// notification travels on; the server MUST set it there and only there
// (2026-07-28 Overview, "_meta"; Subscriptions, "Receiving Notifications").
type NotificationMeta struct {
	SubscriptionID mcp.ID `json:"io.modelcontextprotocol/subscriptionId,omitzero"`

	Extra map[string]json.RawMessage `json:"-"`
}

var notificationMetaKeys = []string{MetaSubscriptionID}

// MarshalJSON implements json.Marshaler.
func (m NotificationMeta) MarshalJSON() ([]byte, error) {
	type plain NotificationMeta
	return marshalMeta(plain(m), m.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *NotificationMeta) UnmarshalJSON(b []byte) error {
	type plain NotificationMeta
	var p plain
	extra, err := unmarshalMeta(b, &p, notificationMetaKeys)
	if err != nil {
		return err
	}
	*m = NotificationMeta(p)
	m.Extra = extra
	return nil
}

// ResultMeta is the _meta of a result: the server's identity, which servers
// SHOULD send on every result (2026-07-28 Overview, "Per-response protocol
// fields"), and on the graceful end of a listen stream the subscription it
// closes (schema.ts SubscriptionsListenResultMetaObject).
type ResultMeta struct {
	ServerInfo     *mcp.Implementation `json:"io.modelcontextprotocol/serverInfo,omitempty"`
	SubscriptionID mcp.ID              `json:"io.modelcontextprotocol/subscriptionId,omitzero"`

	Extra map[string]json.RawMessage `json:"-"`
}

var resultMetaKeys = []string{MetaServerInfo, MetaSubscriptionID}

// MarshalJSON implements json.Marshaler.
func (m ResultMeta) MarshalJSON() ([]byte, error) {
	type plain ResultMeta
	return marshalMeta(plain(m), m.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *ResultMeta) UnmarshalJSON(b []byte) error {
	type plain ResultMeta
	var p plain
	extra, err := unmarshalMeta(b, &p, resultMetaKeys)
	if err != nil {
		return err
	}
	*m = ResultMeta(p)
	m.Extra = extra
	return nil
}

// marshalMeta writes the members of known (a struct without methods) and
// then every member of extra that known did not write.
func marshalMeta(known any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(known)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// unmarshalMeta reads b into known (a pointer to a struct without methods)
// and returns the members whose keys are not among keys, or nil.
func unmarshalMeta(b []byte, known any, keys []string) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(b, known); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for _, k := range keys {
		delete(all, k)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

func nonEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
