package rev20260728

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Request is a request of this revision with its params read once: where
// a transport decides the era (HasMeta), what DecodeRequestMeta says of
// the _meta (Meta, MetaErr), and the members the routing headers mirror.
// The transport reads it with ReadRequest, checks the headers with
// CheckHeaders and hands it to the endpoint in the context (WithRequest),
// so that neither reads the params again.
type Request struct {
	Msg *mcp.Message
	// Meta and MetaErr are what DecodeRequestMeta(Msg.Params) returns.
	Meta    RequestMeta
	MetaErr error

	// members are the members of the params, nil when the params are not
	// an object.
	members map[string]json.RawMessage
	hasMeta bool
}

// ReadRequest reads msg's params once: their members, the per-request
// _meta and whether they carry it at all.
func ReadRequest(msg *mcp.Message) *Request {
	q := &Request{Msg: msg, members: paramsMembers(msg.Params)}
	fields, raw, err := metaObject(q.members)
	if err != nil {
		q.MetaErr = err
	} else {
		q.Meta, q.MetaErr = metaFrom(fields, raw)
	}
	q.hasMeta = q.readHasMeta(fields)
	return q
}

// HasMeta is HasRequestMeta(Msg.Params): whether the params carry a _meta
// object with the protocolVersion key, which makes the request one of the
// stateless era.
func (q *Request) HasMeta() bool { return q.hasMeta }

// readHasMeta is HasRequestMeta of the params, fields being the members
// of their _meta object (nil when there is none).
func (q *Request) readHasMeta(fields map[string]json.RawMessage) bool {
	if len(q.Msg.Params) == 0 || q.members == nil {
		return false
	}
	for k := range q.members {
		if k != "_meta" && strings.EqualFold(k, "_meta") {
			// encoding/json matches a struct field case-insensitively, and
			// the last such member wins: only HasRequestMeta, which sees
			// their order, answers as before.
			return HasRequestMeta(q.Msg.Params)
		}
	}
	_, ok := fields[MetaProtocolVersion]
	return ok
}

// CheckHeaders is CheckHeaders of the request, version being its _meta's
// protocolVersion, and then for a tools/call whose tool tools knows to
// declare x-mcp-header arguments CheckParamHeaders against its arguments
// (tools may be nil). The error is a *HeaderError.
func (q *Request) CheckHeaders(h http.Header, rules NameRules, tools ToolHeaders) error {
	if err := checkHeaders(h, q.Msg.Method, q.members, q.Meta.ProtocolVersion, rules); err != nil {
		return err
	}
	if tools == nil || q.Msg.Method != mcp.MethodToolsCall {
		return nil
	}
	var name string
	if json.Unmarshal(q.members["name"], &name) != nil {
		return nil
	}
	params := tools.ParamHeaders(name)
	if len(params) == 0 {
		return nil
	}
	return CheckParamHeaders(h, q.members["arguments"], params)
}

// requestKey is the context key of the Request a transport read.
type requestKey struct{}

// WithRequest returns ctx carrying q, the request as ReadRequest read it,
// so that the endpoint the transport hands q.Msg to (HandleStateless) does
// not read its params again. It travels in the context rather than in an
// interface of the endpoint's, so that an endpoint that wraps another and
// handles HandleStateless itself is never passed by.
func WithRequest(ctx context.Context, q *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, q)
}

// RequestOf returns the Request ctx carries for msg (WithRequest), or
// ReadRequest(msg) when ctx carries none or one of another message.
func RequestOf(ctx context.Context, msg *mcp.Message) *Request {
	if q, ok := ctx.Value(requestKey{}).(*Request); ok && q.Msg == msg {
		return q
	}
	return ReadRequest(msg)
}
