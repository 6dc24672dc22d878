package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID is a JSON-RPC request id: a string or an integer. The zero ID is
// "absent"; NullID is the explicit null used in error responses to messages
// whose id could not be read. ID is comparable and can key a map.
type ID struct {
	raw string // canonical JSON text: `7`, `"abc"` or `null`; "" when absent
}

// NullID is the id of an error response to a request whose id is unknown.
var NullID = ID{raw: "null"}

// IntID returns a numeric id.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// StringID returns a string id.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether the id is the explicit JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// String returns the id as it appears on the wire (`7`, `"abc"`, `null`), or
// "" when absent.
func (id ID) String() string { return id.raw }

// Int returns the id's integer value, if it is a number.
func (id ID) Int() (int64, bool) {
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// MarshalJSON implements json.Marshaler. An absent id marshals as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON implements json.Unmarshaler. It accepts a string, an integer
// or null; fractions, exponents, objects and arrays are rejected.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("empty id")
	case string(b) == "null":
		*id = NullID
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("id: %w", err)
		}
		*id = StringID(s)
		return nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return fmt.Errorf("id %s is not an integer", b)
		}
		*id = IntID(n)
		return nil
	}
	return fmt.Errorf("id must be a string or an integer, got %.40s", b)
}

// Error is a JSON-RPC error object. It is also a Go error.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Kind says which of the three JSON-RPC message shapes a Message has.
type Kind int

const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// ParseKind returns the Kind whose String is s ("request",
// "notification", "response"), KindInvalid for any other s: the
// inverse of String, for a message described as text (a trace record's
// type).
func ParseKind(s string) Kind {
	for _, k := range []Kind{KindRequest, KindNotification, KindResponse} {
		if k.String() == s {
			return k
		}
	}
	return KindInvalid
}

// Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID and Result or Error).
// Params and Result are kept as raw JSON so that nothing the peer sent is
// lost on the way through.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Kind classifies the message.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && m.ID.IsZero():
		return KindNotification
	case m.Method != "":
		return KindRequest
	case !m.ID.IsZero() && (m.Result != nil || m.Error != nil):
		return KindResponse
	}
	return KindInvalid
}

// NewRequest builds a request with params marshalled to JSON.
func NewRequest(id ID, method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{ID: id, Method: method, Params: raw}, nil
}

// NewNotification builds a notification with params marshalled to JSON.
func NewNotification(method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{Method: method, Params: raw}, nil
}

// NewResult builds a successful response.
func NewResult(id ID, result any) (*Message, error) {
	var raw []byte
	var err error
	if p, ok := result.(PartialResult); ok {
		// Its MarshalJSON writes compact JSON already: json.Marshal would
		// check and copy it again, for every segment of every stream.
		raw, err = p.MarshalJSON()
	} else {
		raw, err = json.Marshal(result)
	}
	if err != nil {
		return nil, fmt.Errorf("marshal result: %w", err)
	}
	return &Message{ID: id, Result: raw}, nil
}

// NewError builds an error response. A zero id becomes null.
func NewError(id ID, err *Error) *Message {
	if id.IsZero() {
		id = NullID
	}
	return &Message{ID: id, Error: err}
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("marshal params: %w", err)
	}
	return raw, nil
}

// MarshalJSON implements json.Marshaler, writing exactly the members the
// message's kind calls for.
func (m *Message) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 64+len(m.Params)+len(m.Result)))
}

// AppendJSON appends the message's JSON encoding to dst.
func (m *Message) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if !m.ID.IsZero() {
		dst = append(dst, `,"id":`...)
		dst = append(dst, m.ID.raw...)
	} else if m.Method == "" {
		dst = append(dst, `,"id":null`...)
	}
	if m.Method != "" {
		dst = append(dst, `,"method":`...)
		dst = appendString(dst, m.Method)
		if len(m.Params) > 0 {
			dst = append(dst, `,"params":`...)
			dst = append(dst, m.Params...)
		}
	} else if m.Error != nil {
		b, err := json.Marshal(m.Error)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"error":`...)
		dst = append(dst, b...)
	} else {
		dst = append(dst, `,"result":`...)
		if len(m.Result) == 0 {
			dst = append(dst, "{}"...)
		} else {
			dst = append(dst, m.Result...)
		}
	}
	return append(dst, '}'), nil
}

// wireMessage is the decoding shape of any message.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// DecodeMessage parses one JSON-RPC message. Its errors are *Error values
// carrying the code a server should answer with: CodeParseError for text that
// is not JSON or not UTF-8, CodeInvalidRequest for JSON that is not a valid message. When
// the message's id could be read it is returned alongside the error, so the
// error response can carry it.
//
// Member names are matched exactly, as JSON-RPC spells them: "Method" is not
// "method".
func DecodeMessage(data []byte) (*Message, error) {
	return decodeMessage(data, false)
}

// DecodeMessageOwned is DecodeMessage for data the caller hands over: the
// message keeps parts of it (its params or result) instead of a copy, so
// the caller must not change data afterwards. A transport decoding a
// buffer it made for the one message saves a copy of every message.
func DecodeMessageOwned(data []byte) (*Message, error) {
	return decodeMessage(data, true)
}

func decodeMessage(data []byte, owned bool) (*Message, error) {
	data = bytes.TrimSpace(data)
	if err := checkObjectText(data); err != nil {
		return nil, err
	}
	if !owned {
		data = bytes.Clone(data) // the message's members are slices of it
	}
	// Not a struct: encoding/json matches struct fields
	// case-insensitively. envelopeMembers reads the six names exactly, in
	// one pass over valid JSON.
	members := envelopeMembers(data)
	m := &Message{}
	rawID, hasID := members.get("id")
	if hasID {
		if err := m.ID.UnmarshalJSON(rawID); err != nil {
			return nil, Errorf(CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	if v, ok, err := stringMember(&members, "jsonrpc"); err != nil || !ok || v != "2.0" {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	method, hasMethod, err := stringMember(&members, "method")
	if err != nil {
		return m, Errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	rawResult, hasResult := members.get("result")
	rawError, hasError := members.get("error")
	switch {
	case hasMethod:
		err = m.decodeRequest(method, &members, hasResult || hasError)
	case hasResult && hasError:
		err = Errorf(CodeInvalidRequest, "invalid response: both result and error")
	case hasResult:
		err = m.decodeResult(rawResult, hasID)
	case hasError:
		err = m.decodeErrorResponse(rawError, hasID)
	default:
		err = Errorf(CodeInvalidRequest, "invalid request: no method, result or error")
	}
	return m, err
}

// checkObjectText refuses, with the error a server answers with, text that
// is not one JSON object in UTF-8.
func checkObjectText(data []byte) error {
	if len(data) == 0 {
		return Errorf(CodeParseError, "parse error: empty message")
	}
	// 2025-11-25 Base Protocol, Transports: "JSON-RPC messages MUST be
	// UTF-8 encoded". encoding/json would replace invalid bytes by U+FFFD,
	// so an id "\xc3(" would be answered as "\ufffd(", which no client
	// can match: refuse the message instead.
	if !utf8.Valid(data) {
		return Errorf(CodeParseError, "parse error: not UTF-8")
	}
	if data[0] != '{' {
		if !json.Valid(data) {
			return Errorf(CodeParseError, "parse error: not JSON")
		}
		if data[0] == '[' {
			return Errorf(CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported")
		}
		return Errorf(CodeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	// For invalid JSON, json.Unmarshal says what is wrong.
	if !json.Valid(data) {
		var members map[string]json.RawMessage
		err := json.Unmarshal(data, &members)
		return Errorf(CodeParseError, "parse error: %v", err)
	}
	return nil
}

// decodeRequest fills in a request or notification named method (not
// absent); withAnswer says the message also carries a result or an error.
func (m *Message) decodeRequest(method string, members *envelope, withAnswer bool) error {
	if method == "" {
		return Errorf(CodeInvalidRequest, "invalid request: empty method")
	}
	if withAnswer {
		return Errorf(CodeInvalidRequest, "invalid request: a request cannot carry result or error")
	}
	if m.ID.IsNull() {
		return Errorf(CodeInvalidRequest, "invalid request: request id must not be null")
	}
	m.Method = method
	if p, _ := members.get("params"); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if c := p[0]; c != '{' && c != '[' {
			return Errorf(CodeInvalidRequest, "invalid request: params must be an object or an array")
		}
		m.Params = p
	}
	return nil
}

// decodeResult fills in a successful response; hasID says the message
// has an "id" member.
func (m *Message) decodeResult(raw json.RawMessage, hasID bool) error {
	if !hasID || m.ID.IsNull() {
		return Errorf(CodeInvalidRequest, "invalid response: missing id")
	}
	m.Result = raw
	return nil
}

// decodeErrorResponse fills in an error response; one without an id
// answers a request whose id could not be read (null).
func (m *Message) decodeErrorResponse(raw json.RawMessage, hasID bool) error {
	e, err := decodeError(raw)
	if err != nil {
		return Errorf(CodeInvalidRequest, "invalid response: error object: %v", err)
	}
	if !hasID {
		m.ID = NullID
	}
	m.Error = e
	return nil
}

// stringMember returns the string value of the member key, ok false when
// the member is absent, and an error when it is present but not a JSON
// string.
func stringMember(members *envelope, key string) (v string, ok bool, err error) {
	raw, ok := members.get(key)
	if !ok {
		return "", false, nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", false, fmt.Errorf("%q must be a string", key)
	}
	// raw is valid JSON, so without escapes or invalid UTF-8 the text between
	// the quotes is the value.
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		if string(inner) == "2.0" { // the jsonrpc member's, without allocating
			return "2.0", true, nil
		}
		return string(inner), true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, fmt.Errorf("%q must be a string", key)
	}
	return s, true, nil
}

// decodeError reads a JSON-RPC error object, matching member names exactly.
func decodeError(raw json.RawMessage) (*Error, error) {
	var members map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		return nil, errors.New("must be an object")
	}
	e := &Error{}
	if v, ok := members["code"]; ok {
		if err := json.Unmarshal(v, &e.Code); err != nil {
			return nil, fmt.Errorf("code must be an integer, got %.40s", v)
		}
	}
	if v, ok := members["message"]; ok {
		if err := json.Unmarshal(v, &e.Message); err != nil {
			return nil, fmt.Errorf("message must be a string, got %.40s", v)
		}
	}
	if v, ok := members["data"]; ok {
		e.Data = v
	}
	return e, nil
}

// UnmarshalJSON implements json.Unmarshaler with DecodeMessage.
func (m *Message) UnmarshalJSON(b []byte) error {
	got, err := DecodeMessage(b)
	if err != nil {
		return err
	}
	*m = *got
	return nil
}

// DecodeParams unmarshals a request's params into v. Its error is an *Error
// with CodeInvalidParams naming what was wrong.
func DecodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return Errorf(CodeInvalidParams, "invalid params: %s must be %s, not %s", ute.Field, ute.Type, ute.Value)
		}
		return Errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json escapes
// it (HTML-safe, invalid UTF-8 replaced by U+FFFD). strconv.AppendQuote is
// not a substitute: its \x01, \a and \U000e0001 escapes are not JSON.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
